"""The first sequence a span model reads: its template around the numbered passages."""

from __future__ import annotations

from collections.abc import Sequence

from guard.detect.settings import DetectorSpec


def span_prompt(spec: DetectorSpec, passages: Sequence[str], question: str | None) -> str:
    """``spec``'s template (its question-less one when there is no question) with
    ``{context}`` the passages, each written in ``spec.passage`` on a line of its own."""
    context = "\n".join(
        spec.passage.format(index=i, text=text) for i, text in enumerate(passages, start=1)
    )
    if not question and spec.template_without_question is not None:
        return spec.template_without_question.format(context=context, count=len(passages))
    return spec.template.format(context=context, question=question or "", count=len(passages))
