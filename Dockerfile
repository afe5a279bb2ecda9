# evalkit as a container: `docker run --rm -v "$PWD:/repo" -w /repo evalkit gate --config evalkit.yaml`
# and the GitHub Action (action.yml runs this image with `action`).

# Builder: resolve exactly the locked runtime dependencies and install the package from
# this source tree into a self-contained virtualenv. uv and the build backend stay here.
FROM python:3.12-slim-bookworm AS builder

RUN pip install --no-cache-dir "uv==0.13.9"

ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/opt/evalkit

WORKDIR /src
COPY pyproject.toml uv.lock README.md LICENSE ./
# Dependencies first (cached until the lock changes), then the project itself.
RUN uv sync --locked --no-dev --no-install-project --no-cache
COPY src ./src
RUN uv sync --locked --no-dev --no-editable --no-cache

# Runtime: the same Python, the virtualenv, nothing else (no uv, no compilers, no pip cache).
FROM python:3.12-slim-bookworm

COPY --from=builder /opt/evalkit /opt/evalkit

ENV PATH="/opt/evalkit/bin:${PATH}" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# GitHub runs Docker actions as root with --workdir /github/workspace; locally the
# documented `-w /repo` applies. (A non-root USER cannot write the runner's mounted files.)
WORKDIR /repo

ENTRYPOINT ["evalkit"]
CMD ["--help"]
