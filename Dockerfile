# groundguard service image: slim, non-root, dependencies pinned by constraints.txt.
# Build: docker build -t groundguard:0.1.0 .   Run: docker run groundguard:0.1.0 --config ...
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz on the metrics port (see helm/).

FROM python:3.11.14-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python -m venv /opt/groundguard
COPY constraints.txt ./
RUN /opt/groundguard/bin/pip install --no-cache-dir -r constraints.txt
COPY pyproject.toml README.md* ./
COPY guard ./guard
COPY consumers ./consumers
RUN /opt/groundguard/bin/pip install --no-cache-dir --no-deps -c constraints.txt . \
    && /opt/groundguard/bin/pip check

FROM python:3.11.14-slim-bookworm
LABEL org.opencontainers.image.title="groundguard" \
      org.opencontainers.image.description="Streaming groundedness guardrail for Kafka" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 10001 groundguard \
    && useradd --system --uid 10001 --gid 10001 --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin groundguard
COPY --from=build /opt/groundguard /opt/groundguard
ENV PATH=/opt/groundguard/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
WORKDIR /tmp
USER 10001:10001
EXPOSE 9464 8080
ENTRYPOINT ["groundguard", "run"]
