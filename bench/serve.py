"""``groundguard serve`` against a bare ASGI echo app, in one run: throughput and added latency.

Usage::

    .venv/bin/python bench/serve.py                  # 3 s per phase, 32 connections
    .venv/bin/python bench/serve.py --seconds 5 --connections 64

Three servers, each in its own process on 127.0.0.1, all on uvicorn (h11), one worker:

* ``echo``: a bare ASGI app that reads the body and sends it back (no framework, no JSON): the
  floor of any Python HTTP API on this stack;
* ``serve/fake``: ``groundguard serve`` with ``judge.provider: fake`` (an instant judge), so
  what it adds beyond the judge call is measured: client latency minus the judge's time, which
  ``serve`` reports in its ``Server-Timing: judge;dur=<ms>`` header (the whole ``Guard.judge``
  call: preparing the request, scanning for injections, the judge, the verdict);
* ``serve/offline``: ``groundguard serve`` with the offline judge (the default): real work.

For each: **capacity**, the requests/s a closed loop of ``--connections`` keep-alive
connections sustains for ``--seconds``; then **latency at half capacity**, an open loop at half
that rate for ``--seconds`` (latency counted from each request's scheduled time, so queueing is
not hidden), p50/p99. The load generator is a minimal HTTP/1.1 client on asyncio streams in
this process (an HTTP library would cost more CPU than the servers). Ratios are to ``echo`` in
the same run. On a shared 2-core machine the client and the server share the cores: the figures
are a floor. Last, **in process** (apps called directly: no uvicorn, no network, best of nine
rounds): the echo app bare and as a Starlette route (what the framework costs), ``serve`` over
a stub judge that returns a ready verdict (what ``serve``'s own code costs: routing, body,
JSON, validation, deadline, metrics, the verdict's JSON) and over the fake judge.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import percentile, stop_process

BODY = json.dumps(
    {
        "id": "bench-1",
        "question": "How long do I have to return something?",
        "output": "You can return most items within 30 days of delivery for a full refund.",
        "context": [
            {
                "id": "kb-112",
                "text": "Returns: You can return most items within 30 days of delivery for a "
                "full refund. Items must be unused and in their original packaging.",
            }
        ],
    }
).encode()


# --------------------------------------------------------------------------- servers


async def echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The bare ASGI baseline: read the body, send it back."""
    if scope["type"] != "http":
        return
    chunks = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(chunks)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def run_echo(port: int) -> None:
    from consumers.asgi import AsgiServer

    server = AsgiServer(echo_app, host="127.0.0.1", port=port)
    await server.start()
    await asyncio.Event().wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server(kind: str, settings: dict[str, str] | None = None) -> Iterator[int]:
    """``echo`` or ``serve/<judge provider>`` on a free port (``settings``: more
    ``GROUNDGUARD_...`` variables, or the bench's own when None)."""
    with server_process(kind, settings) as (port, _):
        yield port


@contextlib.contextmanager
def server_process(
    kind: str, settings: dict[str, str] | None = None
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
    if kind == "echo":
        cmd = [sys.executable, __file__, "--echo-server", str(port)]
    else:
        cmd = [sys.executable, "-m", "consumers", "serve"]
        env |= {
            "GROUNDGUARD_SERVE__PORT": str(port),
            "GROUNDGUARD_JUDGE__PROVIDER": kind.split("/")[1],
            "GROUNDGUARD_JUDGE__BUDGET__CACHE_SIZE": "0",  # every request judged
            "GROUNDGUARD_LOG__LEVEL": "warning",
        }
        env |= {"GROUNDGUARD_SERVE__MAX_IN_FLIGHT": "10000"} if settings is None else settings
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        _wait_up(port, proc)
        yield port, proc
    finally:
        stop_process(proc)


def _wait_up(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode}")
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1)
            return
        time.sleep(0.1)
    raise RuntimeError("server did not start")


# --------------------------------------------------------------------------- load


class Connection:
    """One keep-alive HTTP/1.1 connection sending the same POST again and again."""

    def __init__(self, port: int, path: str) -> None:
        self.port = port
        self.head = (
            f"POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(BODY)}\r\n\r\n"
        ).encode() + BODY

    async def open(self) -> Connection:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def post(self) -> float | None:
        """Send the request, read the reply; the judge's ms from ``Server-Timing`` if any."""
        self.writer.write(self.head)
        head = await self.reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(head.split(b"\r\n", 1)[0].decode())
        length, judged = 0, None
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
            elif name.lower() == b"server-timing":
                judged = float(value.split(b"dur=", 1)[1])
        await self.reader.readexactly(length)
        return judged

    def close(self) -> None:
        self.writer.close()


@dataclass
class Result:
    rps: float = 0.0
    latency_ms: list[float] = field(default_factory=list)
    judge_ms: list[float] = field(default_factory=list)

    def added_ms(self) -> list[float]:
        if not self.judge_ms:
            return self.latency_ms
        return [max(0.0, t - j) for t, j in zip(self.latency_ms, self.judge_ms, strict=True)]


async def capacity(port: int, path: str, connections: int, seconds: float) -> float:
    conns = [await Connection(port, path).open() for _ in range(connections)]
    for conn in conns:  # warm up
        await conn.post()
    done = 0
    stop = time.perf_counter() + seconds

    async def loop(conn: Connection) -> None:
        nonlocal done
        while time.perf_counter() < stop:
            await conn.post()
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(loop(c) for c in conns))
    elapsed = time.perf_counter() - started
    for conn in conns:
        conn.close()
    return done / elapsed


async def paced(port: int, path: str, rate: float, seconds: float, connections: int) -> Result:
    pool: asyncio.Queue[Connection] = asyncio.Queue()
    for _ in range(connections):
        pool.put_nowait(await Connection(port, path).open())
    result = Result()
    start = time.perf_counter()
    n = int(rate * seconds)

    async def one(i: int) -> None:
        due = start + i / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        conn = await pool.get()
        try:
            judged = await conn.post()
        finally:
            pool.put_nowait(conn)
        result.latency_ms.append((time.perf_counter() - due) * 1000)
        if judged is not None:
            result.judge_ms.append(judged)

    await asyncio.gather(*(one(i) for i in range(n)))
    result.rps = n / (time.perf_counter() - start)
    while not pool.empty():
        pool.get_nowait().close()
    return result


# --------------------------------------------------------------------------- in process


def _scope() -> dict[str, Any]:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(BODY))]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/check",
        "raw_path": b"/v1/check",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
    }


async def _call(app: Any, scope: dict[str, Any]) -> None:
    messages = [{"type": "http.request", "body": BODY, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.Event().wait()  # no disconnect
        return {}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start" and message["status"] != 200:
            raise RuntimeError(f"status {message['status']}")

    await app(scope, receive, send)


def starlette_echo() -> Any:
    """The echo app as a Starlette route: what the framework itself costs over bare ASGI."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def echo(request: Request) -> Response:
        return Response(await request.body(), media_type="application/json")

    return Starlette(routes=[Route("/v1/check", echo, methods=["POST"])])


def best_us(app: Any, rounds: int = 9, n: int = 500) -> float:
    """Best-of-``rounds`` µs per request of ``app`` called directly (no server, no network)."""
    scope = _scope()

    async def calls() -> None:
        for _ in range(n):
            await _call(app, scope)

    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        asyncio.run(calls())
        best = min(best, (time.perf_counter() - started) / n * 1e6)
    return best


class _InstantGuard:
    """A GuardCore whose judge returns one ready verdict: the app around it is all that runs."""

    intake_stop_reason = None

    def __init__(self, guard: Any, verdict: Any) -> None:
        self.parse = guard.parse
        self._verdict = verdict

    async def judge(self, request: Any, *, message_key: str | None = None) -> Any:
        return self._verdict

    def budget_stats(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def serve_apps() -> tuple[Any, Any]:
    """``serve``'s app over an instant stub judge, and over the fake judge (``Guard.judge``
    with all its preparation, an instant judge call)."""
    from consumers.serve.app import build_app
    from consumers.serve.service import make_api
    from consumers.settings import ServiceSettings
    from guard.assembly import build_guard

    settings = ServiceSettings.model_validate({"judge": {"provider": "fake"}})
    guard = build_guard(settings.judge, {})
    verdict = asyncio.run(guard.judge(guard.parse(BODY)))
    apps = []
    for core in (_InstantGuard(guard, verdict), guard):
        api, ready = make_api(settings, core, None)
        api.state.started = True
        apps.append(build_app(api, ready=ready))
    return apps[0], apps[1]


# --------------------------------------------------------------------------- report


def measure(kind: str, args: argparse.Namespace) -> tuple[float, Result]:
    path = "/echo" if kind == "echo" else "/v1/check"
    with server(kind) as port:
        rps = asyncio.run(capacity(port, path, args.connections, args.seconds))
        result = asyncio.run(paced(port, path, rps / 2, args.seconds, args.connections))
    return rps, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per phase (default 3)")
    parser.add_argument("--connections", type=int, default=32, help="keep-alive connections")
    parser.add_argument("--echo-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        asyncio.run(run_echo(args.echo_server))
        return
    rows = {kind: measure(kind, args) for kind in ("echo", "serve/fake", "serve/offline")}
    base_rps = rows["echo"][0]
    base_p50 = percentile(rows["echo"][1].latency_ms, 50)
    print(
        f"bench/serve.py: {args.connections} connections, {args.seconds:g} s per phase, "
        "latency at half of each one's capacity"
    )
    print(
        f"{'server':<14} {'req/s':>8} {'x echo':>7} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'judge p50':>9} {'added p50':>9} {'added p99':>9}"
    )
    for kind, (rps, result) in rows.items():
        added = result.added_ms()
        judge = percentile(result.judge_ms, 50) if result.judge_ms else 0.0
        print(
            f"{kind:<14} {rps:>8.0f} {rps / base_rps:>7.2f} "
            f"{percentile(result.latency_ms, 50):>7.2f} {percentile(result.latency_ms, 99):>7.2f} "
            f"{judge:>9.2f} {percentile(added, 50):>9.2f} {percentile(added, 99):>9.2f}"
        )
    stub_app, fake_app = serve_apps()
    bare, framework = best_us(echo_app), best_us(starlette_echo())
    stub, fake_us = best_us(stub_app), best_us(fake_app)
    print(
        f"in process (apps called directly, best of 9 rounds), us per request: bare ASGI echo "
        f"{bare:.0f}, Starlette echo {framework:.0f}, serve over an instant stub judge "
        f"{stub:.0f} (serve's own code), serve over the fake judge {fake_us:.0f} "
        f"(Guard.judge {fake_us - stub:.0f})"
    )
    fake = rows["serve/fake"][1].added_ms()
    print(
        f"serve adds {percentile(fake, 50):.2f} ms p50 / {percentile(fake, 99):.2f} ms p99 beyond "
        f"the judge call at half capacity (goal p99 <= 10 ms); over the bare echo app: "
        f"{percentile(fake, 50) - base_p50:+.2f} ms p50"
    )


if __name__ == "__main__":
    main()
