"""What a person reads on a terminal: a verdict, and a progress line redrawn in place."""

from __future__ import annotations

from typing import TextIO

from guard.models import TierReading, Verdict

CLEAR_LINE = "\r\033[K"  # back to the start of the line, erase it


def is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


class StatusLine:
    """A progress line redrawn in place on a terminal. On a pipe or a file (or when not
    ``enabled``) progress is not written at all and notes are plain lines: no escape codes."""

    def __init__(self, stream: TextIO, *, enabled: bool = True) -> None:
        self.stream = stream
        self.live = enabled and is_terminal(stream)
        self._drawn = False

    def show(self, text: str) -> None:
        if self.live:
            self.stream.write(CLEAR_LINE + text)
            self.stream.flush()
            self._drawn = True

    def note(self, text: str) -> None:
        """A line that stays, written above the progress line."""
        self.stream.write((CLEAR_LINE if self._drawn else "") + text + "\n")
        self._drawn = False
        self.stream.flush()

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self._drawn = False


def _score_line(verdict: Verdict) -> str:
    if verdict.score is None:
        return f"{verdict.label.value.upper()}"
    raw = f"raw {verdict.raw_score}, " if verdict.raw_score is not None else "no judge, "
    return (
        f"{verdict.label.value.upper()}  score {verdict.score:.2f} "
        f"({raw}{verdict.mode.value}, pass at >= {verdict.threshold})"
    )


def _claim_lines(verdict: Verdict) -> list[str]:
    lines = []
    for claim in verdict.claims:
        mark = "supported  " if claim.supported else "UNSUPPORTED"
        if claim.supported and (claim.reason or "").startswith("not verified"):
            mark = "unproven   "  # passed unflagged, not shown supported (the offline tier)
        lines.append(f"  {mark} {claim.claim}")
        if claim.reason:
            lines.append(f"              why: {claim.reason}")
        if claim.evidence_quote:
            found = "  [quote NOT found in evidence]" if claim.quote_found is False else ""
            lines.append(f'              quote: "{claim.evidence_quote}"{found}')
    return lines


def _fact_lines(verdict: Verdict) -> list[str]:
    lines = [f'injection: {f.kind} in {f.location}: "{f.excerpt}"' for f in verdict.injections]
    for name, cut in (
        ("evidence", verdict.truncation.context),
        ("output", verdict.truncation.output),
    ):
        if cut.truncated:
            lines.append(f"truncated {name}: kept {cut.kept_chars} of {cut.original_chars} chars")
    if verdict.quote_check.fabricated:
        lines.append(
            f"quote check: {verdict.quote_check.fabricated} of "
            f"{verdict.quote_check.quotes} quotes not found in the evidence"
        )
    judge = verdict.judge
    extra = ", cached" if judge.cached else ""
    extra += f", fallback: {judge.fallback_reason}" if judge.fallback_reason else ""
    lines.append(
        f"judge: {judge.provider}/{judge.model} ({judge.tier}, {judge.prompt_version}"
        f"{extra}); {verdict.usage.input_tokens}+{verdict.usage.output_tokens} tokens, "
        f"${verdict.cost_usd:.6f}, {verdict.latency_ms:.0f} ms"
    )
    if judge.tiers:
        lines.append("tiers: " + " -> ".join(_reading(t) for t in judge.tiers))
    return lines


def _reading(tier: TierReading) -> str:
    """One tier's reading: "offline p=0.22 handed on", "det error judge_timeout"."""
    if tier.error:
        return f"{tier.name} error {tier.error}"
    p = f" p={tier.grounded_p:.2f}" if tier.grounded_p is not None else ""
    basis = f" [{tier.basis}" + (f", bound {tier.bound:.3f}]" if tier.bound is not None else "]")
    state = "decided" if tier.decided else "audited" if tier.audited else "handed on"
    return f"{tier.name}{p}{basis if tier.basis else ''} {state}"


def render_verdict(verdict: Verdict) -> str:
    lines = [_score_line(verdict)]
    if verdict.reason and verdict.label.value in ("error", "skipped", "fail"):
        lines.append(f"reason: {verdict.reason}")
    if verdict.error:
        lines.append(f"error: {verdict.error.kind}: {verdict.error.message}")
    if verdict.explanation:
        lines.append(f"explanation: {verdict.explanation}")
    lines += _claim_lines(verdict)
    lines += _fact_lines(verdict)
    return "\n".join(lines)
