"""Pieces the benches share: a broker, the fake judge process, the service process, records.

Everything runs on 127.0.0.1. Each piece is a context manager that stops what it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from consumers.cli.broker import LocalBroker

ROOT = Path(__file__).resolve().parents[1]
REALISTIC = ROOT / "bench" / "data" / "realistic-dev.jsonl"
Payload = Callable[[str, int], bytes]  # (request id, index) -> the request's bytes
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- processes


@contextlib.contextmanager
def kafka_broker(bootstrap: str | None) -> Iterator[str]:
    """``bootstrap`` if given, else a fresh broker from scripts/kafka, stopped at the end."""
    if bootstrap:
        yield bootstrap
        return
    with tempfile.TemporaryDirectory(prefix="gg-bench-kafka-") as home:
        broker = LocalBroker(Path(home))
        broker.start(fresh=True)
        try:
            yield broker.bootstrap
        finally:
            broker.stop()


@dataclass
class FakeJudgeServer:
    """``python -m guard.testing.fake_server`` as its own process (its CPU is not the service's)."""

    latency_ms: float
    url: str = ""
    proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> FakeJudgeServer:
        cmd = [
            sys.executable,
            "-W",
            "ignore::RuntimeWarning",
            "-m",
            "guard.testing.fake_server",
            "--port",
            "0",
            "--latency-ms",
            str(self.latency_ms),
            "--script",
            "marker",  # the plumbing's cost, not judging: every answer passes as before
        ]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, start_new_session=True
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("FAKE_LLM_URL="):
            self.__exit__()
            raise RuntimeError(f"fake judge did not start: {line!r}")
        self.url = line.split("=", 1)[1]
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop_process(self.proc)

    def _call(self, method: str, path: str) -> dict[str, Any]:
        data = b"{}" if method == "POST" else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        with urllib.request.urlopen(request, timeout=10) as reply:
            result: dict[str, Any] = json.loads(reply.read())
            return result

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/_stats")

    def reset(self) -> None:
        self._call("POST", "/_reset")


def stop_process(
    proc: subprocess.Popen[Any], *, sig: int = signal.SIGTERM, timeout_s: float = 30.0
) -> int | None:
    """Signal the process group, wait, then kill it; returns the exit status (None if killed)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            return proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
            return None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # stray children
    return proc.returncode


@dataclass
class ProcSample:
    wall: float
    cpu_s: float
    rss_peak_kb: int


def sample_process(pid: int) -> ProcSample | None:
    """CPU seconds (user + system) and peak resident memory of a live process, from /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    cpu = (int(stat[11]) + int(stat[12])) / CLOCK_TICKS
    hwm = next(
        (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0
    )
    return ProcSample(time.time(), cpu, hwm)


def service_config(
    *,
    bootstrap: str,
    requests: str,
    verdicts: str,
    group: str,
    concurrency: int,
    judge: dict[str, Any],
    **extra: Any,
) -> dict[str, Any]:
    """A ``groundguard run`` settings file (see consumers/settings.py)."""
    return {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "instance_id": group,
        "concurrency": concurrency,
        "topics": {
            "requests": requests,
            "verdicts": verdicts,
            "quarantine": f"{requests}.quarantine",
            "dlq": f"{requests}.dlq",
        },
        "metrics": {"enabled": False},
        "judge": judge,
        **extra,
    }


@dataclass
class ServiceProcess:
    """``python -m consumers run --config FILE`` in its own process group, logging to a file."""

    config: dict[str, Any]
    workdir: Path
    proc: subprocess.Popen[bytes] | None = None
    samples: list[ProcSample] = field(default_factory=list)
    name: str = ""  # of the log and settings files; the group id when empty
    env: dict[str, str] = field(default_factory=dict)  # added to the environment (OTEL_...)

    @property
    def log_path(self) -> Path:
        return self.workdir / f"service-{self.name or self.config['group_id']}.log"

    def start(self) -> None:
        path = self.workdir / f"service-{self.name or self.config['group_id']}.json"
        path.write_text(json.dumps(self.config))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
        env |= self.env
        cmd = [sys.executable, "-m", "consumers", "run", "--config", str(path)]
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def sample(self) -> None:
        if self.proc is not None and (s := sample_process(self.proc.pid)) is not None:
            self.samples.append(s)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> int | None:
        return stop_process(self.proc) if self.proc is not None else None

    def tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        except FileNotFoundError:
            return ""
        return "\n".join(line[:400] for line in text)

    def cpu_between(self, t0: float, t1: float) -> float:
        """CPU seconds the service used between two wall times (nearest samples)."""
        if not self.samples:
            return float("nan")
        a = min(self.samples, key=lambda s: abs(s.wall - t0))
        b = min(self.samples, key=lambda s: abs(s.wall - t1))
        return b.cpu_s - a.cpu_s

    @property
    def peak_rss_mb(self) -> float:
        return max((s.rss_peak_kb for s in self.samples), default=0) / 1024


# --------------------------------------------------------------------------- records

_CONTEXT = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is named after the engineer Gustave Eiffel, whose company designed and built the tower "
    "from 1887 to 1889. It was the entrance arch to the 1889 World's Fair. The tower is 330 "
    "metres tall, about the same height as an 81-storey building, and the tallest structure "
    "in Paris. It has three levels for visitors, with restaurants on the first and second."
)


def request_payload(request_id: str, i: int) -> bytes:
    """A RAG response of typical size (~1 KB). Each output is different, so no verdict cache can
    answer it; nine in ten are grounded (their sentence is in the context, which both fake judges
    accept), every tenth is not (and is quarantined)."""
    if i % 10:
        output = f"The tower is 330 metres tall, reference {request_id}."
        context = [_CONTEXT, output]
    else:
        output = f"The Eiffel Tower HALLUCINATED was moved to Lyon in 1950 ({request_id})."
        context = [_CONTEXT]
    return orjson.dumps(
        {
            "id": request_id,
            "question": "How tall is the Eiffel Tower?",
            "output": output,
            "context": context,
        }
    )


def realistic_pool(size: int, seed: int = 15) -> list[dict[str, Any]]:
    """``size`` requests of 1-4 KB: a row of bench/data/realistic-dev.jsonl, with documents of
    other rows added until its JSON reaches a size drawn uniformly from 1-4 KB."""
    rows = [orjson.loads(line) for line in REALISTIC.read_text().splitlines() if line.strip()]
    rows = [row for row in rows if isinstance(row.get("context"), list | str)]
    rnd = random.Random(seed)
    pool = []
    for _ in range(size):
        row = rnd.choice(rows)
        context = documents(row["context"])
        request = {"question": row.get("question") or "", "context": context}
        request["output"] = row["output"]
        target = rnd.randint(1024, 4096)
        while len(orjson.dumps(request)) < target:
            context.append(rnd.choice(documents(rnd.choice(rows)["context"])))
        pool.append(request)
    return pool


def documents(context: list[Any] | str) -> list[dict[str, Any]]:
    items = [context] if isinstance(context, str) else context
    return [item if isinstance(item, dict) else {"text": str(item)} for item in items]


def realistic_payloads(pool_size: int = 1000) -> Payload:
    """Request ``i`` (id ``request_id``): realistic, 1-4 KB, its output made unique by the id
    so no verdict cache answers it (nor one of another run on the same ``i``)."""
    pool = realistic_pool(pool_size)

    def make(request_id: str, i: int) -> bytes:
        base = pool[i % len(pool)]
        output = f"{base['output']} (ticket {request_id})"
        return orjson.dumps(base | {"id": request_id, "output": output})

    return make


PAYLOADS: dict[str, Callable[[], Payload]] = {
    "realistic": realistic_payloads,
    "small": lambda: request_payload,
}


async def create_topics(bootstrap: str, topics: dict[str, int]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, n, 1) for name, n in topics.items()])
    finally:
        await admin.close()


async def produce_backlog(
    bootstrap: str, topic: str, prefix: str, n: int, make: Payload = request_payload
) -> None:
    """``n`` requests ``make(id, i)`` keyed by id, all acknowledged before returning."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", linger_ms=20, max_batch_size=256 * 1024
    )
    await producer.start()
    try:
        futures = []
        for i in range(n):
            rid = f"{prefix}-{i}"
            futures.append(await producer.send(topic, make(rid, i), key=rid.encode()))
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def produce_paced(
    bootstrap: str,
    topic: str,
    prefix: str,
    rate: float,
    seconds: float,
    make: Payload = request_payload,
) -> dict[str, int]:
    """Requests ``make(id, i)`` at ``rate`` per second for ``seconds``; returns id -> send
    time (epoch ms)."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
    await producer.start()
    sent: dict[str, int] = {}
    try:
        loop = asyncio.get_running_loop()
        t0, total = loop.time(), int(rate * seconds)
        futures = []
        for i in range(total):
            delay = t0 + i / rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            rid = f"{prefix}-{i}"
            now_ms = int(time.time() * 1000)
            sent[rid] = now_ms
            futures.append(
                await producer.send(topic, make(rid, i), key=rid.encode(), timestamp_ms=now_ms)
            )
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return sent


@dataclass(frozen=True)
class Out:
    """One output record: when it was published, and its decoded value."""

    timestamp_ms: int
    value: dict[str, Any]


async def read_topic(
    bootstrap: str, topic: str, *, expected: int, timeout_s: float, on_poll: Any = None
) -> list[Out]:
    """Read ``topic`` from the start until ``expected`` distinct request ids or the timeout."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=None,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        isolation_level="read_committed",
        max_partition_fetch_bytes=4 << 20,
    )
    await consumer.start()
    out: list[Out] = []
    seen: set[str] = set()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    try:
        while len(seen) < expected and loop.time() < deadline:
            batch = await consumer.getmany(timeout_ms=250, max_records=5000)
            for records in batch.values():
                for r in records:
                    value = orjson.loads(r.value)
                    seen.add(str(value.get("request_id")))
                    out.append(Out(r.timestamp, value))
            if on_poll is not None:
                on_poll(len(seen))
    finally:
        await consumer.stop()
    return out


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


# --------------------------------------------------------------------------- profiling


def py_spy() -> str | None:
    """The py-spy executable next to this Python, or on PATH."""
    local = Path(sys.executable).with_name("py-spy")
    return str(local) if local.exists() else shutil.which("py-spy")


def start_profile(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes] | None:
    """Sample ``pid`` with py-spy (only while it holds the GIL: CPU, not waiting)."""
    exe = py_spy()
    if exe is None:
        print("--profile: py-spy is not installed (pip install py-spy); no profile", flush=True)
        return None
    return subprocess.Popen(
        [
            exe,
            "record",
            "--pid",
            str(pid),
            "--gil",
            "--rate",
            "250",
            "--duration",
            str(int(seconds)),
            "--format",
            "raw",
            "-o",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


_FRAME = re.compile(r"^(?P<fn>.*?) \((?P<file>[^:]*?)(?::\d+)?\)$")


def _short(frame: str) -> str:
    match = _FRAME.match(frame)
    if not match:
        return frame
    parts = Path(match["file"]).parts
    return f"{match['fn']} ({'/'.join(parts[-2:])})"


def summarize_profile(path: Path, top: int = 40) -> list[str]:
    """Inclusive share of CPU samples per function, biggest first (folded py-spy stacks)."""
    inclusive: Counter[str] = Counter()
    total = 0
    if not path.exists():
        return []
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        total += int(count)
        for frame in {_short(f) for f in stack.split(";")}:
            inclusive[frame] += int(count)
    skip = ("asyncio/", "runpy", "__main__", "cli.py", "run.py", "Thread", "threading")
    rows, last = [], -1.0
    for frame, n in inclusive.most_common():
        share = 100 * n / total
        if any(s in frame for s in skip) or abs(last - share) < 0.3:
            continue  # a wrapper with the same share as the frame above adds nothing
        rows.append(f"{share:5.1f}%  {frame}")
        last = share
    return rows[:top]
