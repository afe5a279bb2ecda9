# evalkit as a container: `docker run --rm -v "$PWD:/repo" -w /repo evalkit gate --config evalkit.yaml`
# and the GitHub Action. This Dockerfile builds the image locally and in CI (action.yml here
# says `image: Dockerfile`); releases publish it prebuilt as ghcr.io/skbugudi/evalkit-action
# and the released action.yml points there (.github/workflows/release.yml, docs/action.md).
# evalkit handles SIGTERM like Ctrl-C, also as PID 1, so `docker stop` needs no STOPSIGNAL.

# The base image, every architecture of it. Releases and CI build on PYTHON_BASE_PINNED, the
# tag pinned by its index digest (the release passes it as PYTHON_BASE after checking, with
# no credentials, that the digest is an index holding linux/amd64 and linux/arm64). A plain
# `docker build` (`image: Dockerfile`, a machine without Docker Hub that holds a local image
# of the tag) uses the tag. To move the pin: `python scripts/release_image.py base --update`
# (it resolves the tag's current index digest), then commit; docs/action.md, "The base image".
# The digest below is docker-library/repo-info's record of python:3.12-slim-bookworm
# (CPython 3.12.14, built 2026-08-25).
ARG PYTHON_BASE_PINNED=python:3.12-slim-bookworm@sha256:0f5b26b9518d002b6173fd61daad821fa340635ebfec5bba471013f9ca114579
ARG PYTHON_BASE=python:3.12-slim-bookworm

# Builder: resolve exactly the locked runtime dependencies and install the package from
# this source tree into a self-contained virtualenv. uv and the build backend stay here.
FROM ${PYTHON_BASE} AS builder

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
FROM ${PYTHON_BASE}

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
