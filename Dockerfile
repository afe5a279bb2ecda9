# evalkit as a container: `docker run --rm -v "$PWD:/repo" -w /repo evalkit gate --config evalkit.yaml`
# and the GitHub Action. This Dockerfile builds the image locally and in CI (action.yml here
# says `image: Dockerfile`); releases publish it prebuilt as ghcr.io/skbugudi/evalkit-action
# and the released action.yml points there (.github/workflows/release.yml, docs/action.md).
# evalkit handles SIGTERM like Ctrl-C, also as PID 1, so `docker stop` needs no STOPSIGNAL.

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

# Ship bytecode: the slim base strips the stdlib's .pyc and PYTHONDONTWRITEBYTECODE (below,
# so no __pycache__ lands in the mounted repository) stops Python from caching it, so
# every start would recompile the stdlib it imports (see docs/action.md).
# The virtualenv was compiled by uv (UV_COMPILE_BYTECODE). Checked-hash pycs stay valid
# whatever the files' timestamps.
RUN python -m compileall -q -j 0 --invalidation-mode checked-hash /usr/local/lib/python3.12

ENV PATH="/opt/evalkit/bin:${PATH}" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# GitHub runs Docker actions as root with --workdir /github/workspace; locally the
# documented `-w /repo` applies. (A non-root USER cannot write the runner's mounted files.)
WORKDIR /repo

ENTRYPOINT ["evalkit"]
CMD ["--help"]
