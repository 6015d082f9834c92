"""``groundguard serve`` the way clients connect, and under memory attack, in one run.

Usage::

    nice -n 10 .venv/bin/python bench/serve_clients.py                 # 5 s per phase
    nice -n 10 .venv/bin/python bench/serve_clients.py --clients 16 --attackers 600

1. **Added latency with keep-alive clients.** A pool of ``--clients`` ``httpx2.AsyncClient``
   objects, each reused for every request (the openai SDK's pattern: one client, its
   connections kept alive), POSTs ``/v1/check``, first to ``echo`` (a bare ASGI app on the same
   :class:`consumers.asgi.AsgiServer`: the baseline, the same client and stack without
   ``serve``), then to ``serve`` with the instant fake judge. Capacity is a closed loop for
   ``--seconds``; latency is then measured in an open loop (from each request's scheduled
   time, so queueing is not hidden) with both servers paced at the same rate, half the lower
   capacity. *Added* is serve's latency minus the echo's at that rate; serve's latency beyond
   its judge's ``Server-Timing`` share is printed beside it. This is the measurement
   that showed the missing ``TCP_NODELAY`` (42-44 ms per request on a kept-alive connection)
   which a connection per request hides.
2. **Memory under attack, default settings** (the offline judge, ``serve.max_body_bytes`` 1 MiB,
   ``max_buffered_body_bytes`` 4 MiB, ``max_connections`` 1024, ``header_timeout_s`` 10):
   ``--attackers`` connections each send the headers of a body of tiny documents just under
   the body limit (the shape that parsing multiplies most, ~50x) and 990 KB of it, holding the
   rest; beside them ``--slowloris`` connections trickle headers. serve's peak RSS (``VmHWM``)
   is printed against the chart's limit (512 Mi), with how many attackers were refused (429)
   and how many slowloris connections are still open past ``header_timeout_s``; then the held
   bodies are finished and judged, and the peak printed again.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx2

from bench.harness import percentile, sample_process
from bench.serve import BODY, Result, server, server_process

CHART_LIMIT_MB = 512 * 1024 * 1024 / 1e6  # 512 Mi
HELD_BACK = 10_000  # bytes of each attacker's body not sent until the end
HEADER_TIMEOUT_S = 10.0  # serve.header_timeout_s's default


# --------------------------------------------------------------------------- latency


def _judge_ms(reply: httpx2.Response) -> float | None:
    timing = reply.headers.get("server-timing")
    return float(timing.split("dur=", 1)[1]) if timing else None


async def _clients(port: int, n: int) -> list[httpx2.AsyncClient]:
    headers = {"content-type": "application/json"}
    clients = [
        httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30)
        for _ in range(n)
    ]
    for client in clients:  # warm: each one's connection open and kept alive
        (await client.post("/v1/check", content=BODY)).raise_for_status()
    return clients


async def capacity(port: int, n: int, seconds: float) -> float:
    clients = await _clients(port, n)
    done = 0
    stop = time.perf_counter() + seconds

    async def loop(client: httpx2.AsyncClient) -> None:
        nonlocal done
        while time.perf_counter() < stop:
            (await client.post("/v1/check", content=BODY)).raise_for_status()
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(loop(c) for c in clients))
    elapsed = time.perf_counter() - started
    for client in clients:
        await client.aclose()
    return done / elapsed


async def paced(port: int, n: int, rate: float, seconds: float) -> Result:
    """An open loop: each of the ``n`` kept-alive clients sends on its own schedule, one request
    every ``n / rate`` seconds (the clients' schedules staggered), and a request's latency runs
    from its scheduled time, so a late reply delays the next one and that queueing is counted.
    One task per client, not one per request: thousands of sleeping tasks would make the
    client's own event loop the thing measured."""
    clients = await _clients(port, n)
    result = Result()
    interval = n / rate
    count = int(rate * seconds) // n
    start = time.perf_counter() + 0.05

    async def client_loop(k: int, client: httpx2.AsyncClient) -> None:
        for i in range(count):
            due = start + (i + k / n) * interval
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            reply = await client.post("/v1/check", content=BODY)
            reply.raise_for_status()
            result.latency_ms.append((time.perf_counter() - due) * 1000)
            judged = _judge_ms(reply)
            if judged is not None:
                result.judge_ms.append(judged)

    await asyncio.gather(*(client_loop(k, c) for k, c in enumerate(clients)))
    result.rps = count * n / (time.perf_counter() - start)
    for client in clients:
        await client.aclose()
    return result


async def serial(port: int, count: int) -> list[float]:
    """One kept-alive client, one request after another: the delayed-ACK stall shows here
    with no load at all."""
    (client,) = await _clients(port, 1)
    took = []
    for _ in range(count):
        started = time.perf_counter()
        reply = await client.post("/v1/check", content=BODY)
        took.append((time.perf_counter() - started) * 1000 - (_judge_ms(reply) or 0.0))
    await client.aclose()
    return took


def latency(args: argparse.Namespace) -> None:
    """Capacity of each server first, then both paced at the same rate, half of the lower
    capacity: what serve adds is its latency minus the bare echo's at that rate (the same
    clients, the same stack, the same load), beside serve's latency beyond its judge call."""
    alone: dict[str, list[float]] = {}
    capacities: dict[str, float] = {}
    for kind in ("echo", "serve/fake"):
        with server(kind) as port:
            alone[kind] = asyncio.run(serial(port, 200))
            capacities[kind] = asyncio.run(capacity(port, args.clients, args.seconds))
    rate = min(capacities.values()) / 2
    rows: dict[str, Result] = {}
    for kind in ("echo", "serve/fake"):
        with server(kind) as port:
            rows[kind] = asyncio.run(paced(port, args.clients, rate, args.seconds))
    print(
        "0. one kept-alive client, 200 requests one after another, ms beyond the judge, p50 / "
        "p99: "
        + ", ".join(
            f"{kind} {percentile(t, 50):.2f} / {percentile(t, 99):.2f}" for kind, t in alone.items()
        )
    )
    print(
        f"1. keep-alive httpx2 clients: {args.clients} clients, {args.seconds:g} s per phase; "
        f"capacity echo {capacities['echo']:.0f} req/s, serve {capacities['serve/fake']:.0f} "
        f"req/s; both paced at {rate:.0f} req/s (half the lower)"
    )
    print(f"{'server':<12} {'p50 ms':>7} {'p99 ms':>7} {'beyond judge p50':>17} {'p99':>6}")
    for kind, result in rows.items():
        added = result.added_ms() if result.judge_ms else []
        extra = f"{percentile(added, 50):>17.2f} {percentile(added, 99):>6.2f}" if added else ""
        print(
            f"{kind:<12} {percentile(result.latency_ms, 50):>7.2f} "
            f"{percentile(result.latency_ms, 99):>7.2f} {extra}"
        )
    serve, echo = rows["serve/fake"].latency_ms, rows["echo"].latency_ms
    p50 = percentile(serve, 50) - percentile(echo, 50)
    p99 = percentile(serve, 99) - percentile(echo, 99)
    print(
        f"serve adds {p50:.2f} ms p50 / {p99:.2f} ms p99 over the bare echo at the same rate "
        f"(goal p99 <= 10 ms)"
    )


# --------------------------------------------------------------------------- memory


def tiny_documents_body(limit: int) -> bytes:
    """A request just under ``limit`` bytes whose context is as many one-letter documents as
    fit: the body that parsing makes the most of."""
    head = b'{"output": "Returns are accepted within 30 days.", "context": ['
    doc = b'{"text": "a"},'
    count = (limit - len(head) - 2) // len(doc)
    return head + (doc * count)[:-1] + b"]}"


class Attacker:
    """One connection sending a near-limit body, all but its last bytes, then holding."""

    def __init__(self, port: int, body: bytes) -> None:
        self.port = port
        self.body = body
        self.status = b""

    async def start(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = (
            b"POST /v1/check HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n" % len(self.body)
        )
        with contextlib.suppress(ConnectionError):
            self.writer.write(head + self.body[:-HELD_BACK])
            await self.writer.drain()

    async def answered(self, within_s: float) -> bytes:
        """The status line if one arrived within ``within_s`` (a refusal), else b""."""
        if not self.status:
            with contextlib.suppress(TimeoutError, ConnectionError, asyncio.IncompleteReadError):
                self.status = await asyncio.wait_for(self.reader.readline(), within_s)
        return self.status

    async def finish(self) -> bytes:
        with contextlib.suppress(ConnectionError):
            self.writer.write(self.body[-HELD_BACK:])
            await self.writer.drain()
        return await self.answered(60)

    def close(self) -> None:
        self.writer.close()


async def slowloris(port: int, count: int, seconds: float) -> int:
    """``count`` connections trickling one header byte each 0.5 s for ``seconds``; how many
    are still open at the end."""
    conns = [await asyncio.open_connection("127.0.0.1", port) for _ in range(count)]
    open_ = set(range(count))
    deadline = time.monotonic() + seconds
    for _, writer in conns:
        writer.write(b"POST /v1/check HTTP/1.1\r\nhost: bench\r\nx-slow: ")
    while time.monotonic() < deadline and open_:
        await asyncio.sleep(0.5)
        for i in list(open_):
            reader, writer = conns[i]
            if reader.at_eof() or writer.is_closing():
                open_.discard(i)
                continue
            with contextlib.suppress(ConnectionError):
                writer.write(b"a")
            with contextlib.suppress(TimeoutError, ConnectionError):
                if await asyncio.wait_for(reader.read(1024), 0.001) == b"" or reader.at_eof():
                    open_.discard(i)
    for _, writer in conns:
        writer.close()
    return len(open_)


def rss_mb(pid: int) -> float:
    sample = sample_process(pid)
    return sample.rss_peak_kb * 1024 / 1e6 if sample else float("nan")


async def attack(port: int, pid: int, args: argparse.Namespace) -> None:
    body = tiny_documents_body(1024 * 1024)
    base = rss_mb(pid)
    attackers = [Attacker(port, body) for _ in range(args.attackers)]
    for batch in range(0, len(attackers), 50):
        await asyncio.gather(*(a.start() for a in attackers[batch : batch + 50]))
    early = await asyncio.gather(*(a.answered(0.5) for a in attackers))
    held = rss_mb(pid)
    n_refused = sum(1 for s in early if b" 429 " in s)
    finished = await asyncio.gather(*(a.finish() for a in attackers if not a.status))
    for a in attackers:
        a.close()
    peak = rss_mb(pid)
    still_open = await slowloris(port, args.slowloris, HEADER_TIMEOUT_S + 3)
    answers = Counter(s.split(b" ")[1].decode() if s else "none" for s in finished)
    print(
        f"2. memory, default settings (offline judge): {args.attackers} clients each sending "
        f"{len(body) - HELD_BACK:,} of a {len(body):,}-byte body of tiny documents and holding "
        f"the rest; then {args.slowloris} slowloris connections"
    )
    print(
        f"serve RSS peak: {base:.0f} MB at rest, {held:.0f} MB with the bodies held "
        f"({n_refused} refused 429 before their body was read, {len(finished)} admitted), "
        f"{peak:.0f} MB once the admitted ones were finished and judged (answers: "
        f"{dict(answers)}); chart limit {CHART_LIMIT_MB:.0f} MB: {peak / CHART_LIMIT_MB:.2f} of it"
    )
    print(
        f"slowloris: {still_open} of {args.slowloris} connections still open "
        f"{HEADER_TIMEOUT_S + 3:g} s after they began (serve.header_timeout_s "
        f"{HEADER_TIMEOUT_S:g}); serve RSS peak then {rss_mb(pid):.0f} MB"
    )


def memory(args: argparse.Namespace) -> None:
    defaults = {"GROUNDGUARD_JUDGE__PROVIDER": "offline"}
    with server_process("serve/offline", defaults) as (port, proc):
        asyncio.run(attack(port, proc.pid, args))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per latency phase")
    parser.add_argument("--clients", type=int, default=16, help="keep-alive httpx2 clients")
    parser.add_argument("--attackers", type=int, default=600, help="near-limit body holders")
    parser.add_argument("--slowloris", type=int, default=200, help="header tricklers")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    print(json.dumps(vars(args)))
    if not args.skip_latency:
        latency(args)
    if not args.skip_memory:
        memory(args)


if __name__ == "__main__":
    main()
