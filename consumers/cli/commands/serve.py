"""``groundguard serve``: the HTTP check API until SIGTERM/SIGINT (see :mod:`consumers.serve`).

Settings come from ``--config`` (YAML/JSON, the ``serve:`` section and ``judge:``) and
``GROUNDGUARD_...`` environment variables, as for ``run``. Exit status: 0 after a clean stop,
1 when the port cannot be bound, 2 for a bad setting (the field and the fix are printed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from consumers import telemetry
from consumers.cli.commands.run import configure_logging
from consumers.config import load_settings
from consumers.errors import SettingsError
from consumers.heap import freeze_startup
from consumers.serve.auth import ApiKeys
from consumers.serve.service import exposure_problem, needs_offline, serve_http
from consumers.settings import ServiceSettings
from guard.assembly import build_guard
from guard.boundary import GuardCore
from guard.errors import ConfigError
from guard.settings import Provider

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="an HTTP API that judges an answer before it is sent (POST /v1/check)",
        description="Serve POST /v1/check and /v1/check/batch (the topic's request and verdict "
        "JSON), /openapi.json, /healthz, /readyz and /metrics on serve.port, with deadlines "
        "(x-groundguard-deadline-ms, serve.on_deadline), an in-flight bound (429), bearer API "
        "keys (serve.api_keys_file) and the judge's budgets. Settings: --config FILE and "
        "GROUNDGUARD_... environment variables (these win), e.g. GROUNDGUARD_SERVE__PORT. "
        "It listens on 127.0.0.1 unless told (--host, serve.host); on any other address it "
        "needs serve.api_keys_file, or serve.allow_unauthenticated: true for a trusted "
        "network, else it refuses to start.",
    )
    parser.add_argument("--config", type=Path, help="a YAML or JSON settings file")
    parser.add_argument(
        "--host",
        help="the address to listen on (overrides serve.host; default 127.0.0.1, 0.0.0.0 for "
        "every interface)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = _with_host(load_settings(args.config, os.environ), args.host)
        ApiKeys(settings.serve.api_keys_file)  # an unusable key file fails here, at start
        exposed = exposure_problem(settings)
        if exposed is not None:
            raise exposed
        telemetry.setup(os.environ)  # before the judges: their spans are built in
        guard, offline = _judges(settings)
    except (SettingsError, ConfigError) as exc:
        print(f"groundguard serve: bad setting {exc}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging(settings)
    freeze_startup()  # full collections no longer walk start-up's objects (a latency tail)
    try:
        asyncio.run(_serve(settings, guard, offline))
    except OSError as exc:
        print(f"groundguard serve: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        telemetry.shutdown()  # what is buffered is sent
    return EXIT_OK


def _with_host(settings: ServiceSettings, host: str | None) -> ServiceSettings:
    if host is None:
        return settings
    if not host.strip():
        raise SettingsError("serve.host", "--host is empty", "give an address, e.g. 0.0.0.0")
    serve = settings.serve.model_copy(update={"host": host.strip()})
    return settings.model_copy(update={"serve": serve})


def _judges(settings: ServiceSettings) -> tuple[GuardCore, GuardCore | None]:
    guard = build_guard(settings.judge, os.environ)
    if not needs_offline(settings):
        return guard, None
    offline = settings.judge.model_copy(update={"provider": Provider.OFFLINE, "tiers": None})
    return guard, build_guard(offline, os.environ)


async def _serve(settings: ServiceSettings, guard: GuardCore, offline: GuardCore | None) -> None:
    try:
        await serve_http(settings, guard, offline)
    finally:
        await guard.aclose()
        if offline is not None:
            await offline.aclose()
