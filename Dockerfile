# groundguard service image: non-root, read-only root filesystem, the native word search built in,
# every package pinned (constraints.txt, native/Cargo.lock).
#
#   scripts/image                      # builds groundguard:<version> with docker or podman
#   docker build -t groundguard:0.1.0 .  # the same with the public base images
#
# Three stages:
# 1. wheels: every wheel the image installs. A wheelhouse in the build context
#    (build/wheelhouse, which scripts/image fills on the host) is used as it is; without one the
#    stage builds it: groundguard, its pinned dependencies and groundguard-native (Rust, built
#    with a toolchain the stage installs at RUST_VERSION).
# 2. venv: the virtual environment, installed from those wheels only (no index), with the
#    detector (in-process ONNX models) and otel (OTLP traces) extras.
# 3. runtime: the venv on a clean base; nothing else.
# The base images are build arguments so that a machine that cannot pull registry images can
# build on a local Debian root filesystem (scripts/image does that with mmdebstrap). The runtime
# and venv stages need python3 with venv at /usr/bin or /usr/local/bin.
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz on the metrics port (see helm/).

ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm
ARG BUILDER_IMAGE=python:3.11.14-bookworm

FROM ${BUILDER_IMAGE} AS wheels
ARG RUST_VERSION=1.95.0
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY . ./
RUN set -eu; \
    mkdir -p /wheels; \
    if ls build/wheelhouse/*.whl >/dev/null 2>&1; then \
      echo "image: installing the wheelhouse built beside (build/wheelhouse)"; \
      cp build/wheelhouse/*.whl /wheels/; \
    else \
      curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal \
        --default-toolchain "$RUST_VERSION"; \
      . "$HOME/.cargo/env"; \
      python3 -m venv /tmp/build-venv; \
      /tmp/build-venv/bin/pip wheel -w /wheels -c constraints.txt -r constraints.txt; \
      /tmp/build-venv/bin/pip wheel -w /wheels --no-deps . ; \
      MATURIN_PEP517_ARGS=--locked /tmp/build-venv/bin/pip wheel -w /wheels --no-deps ./native; \
    fi; \
    ls /wheels/groundguard-*.whl /wheels/groundguard_native-*.whl

FROM ${PYTHON_IMAGE} AS venv
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
COPY --from=wheels /wheels /wheels
COPY constraints.txt /wheels/constraints.txt
RUN python3 -m venv /opt/groundguard \
    && /opt/groundguard/bin/pip install --no-index --find-links /wheels \
       -c /wheels/constraints.txt "groundguard[detector,otel]" groundguard-native \
    && /opt/groundguard/bin/pip check \
    && /opt/groundguard/bin/python -c "import groundguard_native" \
    && find /opt/groundguard -name __pycache__ -prune -exec rm -rf {} +

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="groundguard" \
      org.opencontainers.image.description="Streaming groundedness guardrail for Kafka" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 10001 groundguard \
    && useradd --system --uid 10001 --gid 10001 --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin groundguard
COPY --from=venv /opt/groundguard /opt/groundguard
# GROUNDGUARD_REQUIRE_NATIVE: the image is built with the native word search; a start without it
# is a broken image, not a slower one (run and serve exit 2)
ENV PATH=/opt/groundguard/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    GROUNDGUARD_REQUIRE_NATIVE=1
WORKDIR /tmp
USER 10001:10001
EXPOSE 9464 8080
STOPSIGNAL SIGTERM
ENTRYPOINT ["groundguard", "run"]
