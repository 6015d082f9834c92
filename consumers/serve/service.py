"""Running ``serve`` as a process: the HTTP server in this event loop until SIGTERM/SIGINT,
then a graceful stop.

On the signal: ``/readyz`` turns 503 (``stopping``), the listener closes (no new connections),
requests in progress finish within ``drain_timeout_s`` (the setting ``run`` drains by), what is
left then is cancelled and answered 503 ``shutting_down``, the judges are closed and the process
exits 0.

Where it listens: ``serve.host`` is loopback unless told. A non-loopback address without
``serve.api_keys_file`` would let anyone on the network spend the judge's budget, so ``serve``
refuses to start (:func:`exposure_problem`, exit 2) unless ``serve.allow_unauthenticated`` says
the network is trusted; then it logs ``serve.unauthenticated`` at warning level at start.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Callable

import structlog

from consumers.asgi import AsgiServer, ConnectionLimits
from consumers.errors import SettingsError
from consumers.health import Health
from consumers.metrics import Metrics
from consumers.serve.app import CheckApi, build_app
from consumers.serve.auth import ApiKeys
from consumers.serve.deadline import DeadlineJudge
from consumers.serve.proxy import ProxyApi
from consumers.serve.proxy.publish import ProxyPublisher
from consumers.serve.proxy.upstream import Upstream
from consumers.settings import DeadlinePolicy, ServiceSettings
from consumers.signals import stop_on_signals
from guard.boundary import GuardCore
from guard.learning.learner import Learner
from guard.prepare import wordsearch

log = structlog.get_logger("consumers.serve")


def make_api(
    settings: ServiceSettings, guard: GuardCore, offline: GuardCore | None
) -> tuple[CheckApi, Callable[[], Health]]:
    """The check API over ``guard`` (``offline`` for ``on_deadline: offline``) and its
    readiness probe."""
    serve = settings.serve
    judge = DeadlineJudge(guard, settings.judge, serve.on_deadline, offline)
    api = CheckApi(
        settings=serve,
        judge=judge,
        parse=guard.parse,
        keys=ApiKeys(serve.api_keys_file),
        metrics=Metrics(judge_stats=guard.budget_stats, learner=_learner(guard)),
        learner=_learner(guard),
    )
    if serve.proxy.upstream_url is not None:
        upstream = Upstream(serve.proxy, max_connections=serve.max_connections)
        publisher = (
            ProxyPublisher(settings, api.metrics.registry) if settings.proxy_publishes else None
        )
        api.proxy = ProxyApi(api, serve.proxy, upstream, publisher)
    return api, lambda: api.ready(guard.intake_stop_reason)


def _learner(guard: GuardCore) -> Learner | None:
    learner = getattr(guard, "learner", None)  # judge.cascade.learn (a Guard's attribute)
    return learner if isinstance(learner, Learner) else None


async def serve_http(
    settings: ServiceSettings,
    guard: GuardCore,
    offline: GuardCore | None = None,
    *,
    stop: asyncio.Event | None = None,
    on_listening: Callable[[int], None] | None = None,
) -> None:
    """Serve until ``stop`` is set (or SIGTERM/SIGINT when none is given), then drain."""
    api, ready = make_api(settings, guard, offline)
    server = AsgiServer(
        build_app(api, ready=ready, expose_metrics=settings.metrics.enabled),
        host=settings.serve.host,
        port=settings.serve.port,
        grace_s=settings.drain_timeout_s,
        limits=ConnectionLimits(
            max_connections=settings.serve.max_connections,
            header_timeout_s=settings.serve.header_timeout_s,
            retry_after_s=settings.serve.retry_after_s,
        ),
    )
    event = stop or asyncio.Event()
    remove = stop_on_signals(event, log_event="serve.signal") if stop is None else (lambda: None)
    await server.start()  # OSError: port in use
    if api.proxy is not None:
        api.proxy.start()  # publishing proxy verdicts, when a broker is configured
    try:
        api.state.started = True
        _log_start(settings, server.port, api)
        if on_listening is not None:
            on_listening(server.port)
        await event.wait()
        api.state.stopping = True
        log.info(
            "serve.draining",
            in_flight=api.admission.in_flight,
            drain_timeout_s=settings.drain_timeout_s,
        )
    finally:
        remove()
        await server.close()
        if api.proxy is not None:
            await api.proxy.aclose()
        log.info("serve.stopped", shed=api.admission.shed)


def _log_start(settings: ServiceSettings, port: int, api: CheckApi) -> None:
    serve = settings.serve
    for note in settings.judge.deprecations():
        log.warning("settings.deprecated", note=note)
    if not api.keys.required and not is_loopback(serve.host):
        log.warning(
            "serve.unauthenticated",
            host=serve.host,
            problem="no API keys: anyone who reaches this address may call the judge",
            fix="set serve.api_keys_file (serve.allow_unauthenticated is set)",
        )
    elif not api.keys.required:
        log.info("serve.auth_disabled", host=serve.host, fix="set serve.api_keys_file")
    log.info(
        "serve.listening",
        host=serve.host,
        port=port,
        judge="tiers" if settings.judge.tiers else settings.judge.provider.value,
        tiers=[tier.tier_name for tier in settings.judge.tier_list()],
        max_in_flight=serve.max_in_flight,
        deadline_ms=serve.deadline_ms,
        on_deadline=serve.on_deadline.value,
        auth=api.keys.required,
        word_search=wordsearch.ENGINE,
        proxy=serve.proxy.upstream_kind.value if serve.proxy.upstream_url else None,
        release=serve.proxy.release.value if serve.proxy.upstream_url else None,
        proxy_publishes=settings.proxy_publishes,
    )


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (a name other than ``localhost``
    counts as not: it may resolve anywhere)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_problem(settings: ServiceSettings) -> SettingsError | None:
    """The refusal to listen on a non-loopback address without API keys, unless
    ``serve.allow_unauthenticated`` (see the module docstring)."""
    serve = settings.serve
    if serve.api_keys_file is not None or serve.allow_unauthenticated or is_loopback(serve.host):
        return None
    return SettingsError(
        "serve.host",
        f"{serve.host} is reachable from the network and serve.api_keys_file is not set: "
        "anyone could call the judge",
        "set serve.api_keys_file (bearer API keys), or serve.allow_unauthenticated: true on a "
        "trusted network, or listen on 127.0.0.1",
    )


def needs_offline(settings: ServiceSettings) -> bool:
    return settings.serve.on_deadline is DeadlinePolicy.OFFLINE
