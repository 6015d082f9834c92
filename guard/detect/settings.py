"""The settings of a ``detector`` tier, validated when the settings load.

A tier names a :mod:`preset <guard.detect.presets>` (or the task and template itself) and a
backend: ``onnx`` runs the model in process from ``model_dir``; ``tei``, ``vllm_score``,
``vllm_classify`` and ``vllm_pooling`` call a server at ``url``. :meth:`DetectorTier.spec` is the
preset with the tier's overrides applied: what the backends and the judge read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, Self

from pydantic import Field, SecretStr, model_validator

from guard.detect.presets import PAIR, PRESETS, Preset, Task, template_problem
from guard.settings_model import MAX_DURATION_S
from guard.tiers.base import TierBase

# The detector's defaults (guard/defaults.py is the project's home for defaults; these are
# kept here until the detector kind is wired into the tier list).
DEFAULT_DETECTOR_BACKEND: Final[Literal["onnx"]] = "onnx"  # in process, from model_dir
DEFAULT_DETECTOR_BATCH_SIZE = 16  # pairs (or span inputs) per backend call
DEFAULT_DETECTOR_BATCH_WAIT_MS = 5.0  # a pair waits this long for others to join its batch
DEFAULT_DETECTOR_TIMEOUT_S = 10.0  # one backend call (a batch)
DEFAULT_DETECTOR_THREADS = 1  # ONNX Runtime intra-op threads
DEFAULT_DETECTOR_MAX_LENGTH = 512  # tokens, when neither tier, preset nor model dir says
DEFAULT_DETECTOR_MAX_INPUTS = 1024  # pairs (sentences x chunks) or span inputs per message
HTTP_IN_FLIGHT = 4  # batches in flight at once to an HTTP backend (onnx: one, its thread)

Backend = Literal["onnx", "tei", "vllm_score", "vllm_classify", "vllm_pooling"]
HTTP_BACKENDS: frozenset[str] = frozenset({"tei", "vllm_score", "vllm_classify", "vllm_pooling"})
TASKS_OF: dict[str, frozenset[str]] = {
    "onnx": frozenset({"pair", "spans"}),
    "tei": frozenset({"pair"}),
    "vllm_score": frozenset({"pair"}),
    "vllm_classify": frozenset({"pair"}),
    "vllm_pooling": frozenset({"spans"}),
}


@dataclass(frozen=True)
class DetectorSpec:
    """How to feed the model and read it: the preset, overridden by the tier."""

    task: Task
    template: str
    template_without_question: str | None
    passage: str
    supported_label: str | None  # None: the model dir's config must make it unambiguous
    max_length: int | None  # None: from the model dir (or the default)


def _refuse(field: str, problem: str, fix: str) -> ValueError:
    """A load-time error in the shape of :class:`guard.errors.ConfigError`."""
    return ValueError(f"{field}: {problem} (fix: {fix})")


class DetectorTier(TierBase):
    """``kind: detector``: a small groundedness model judges each sentence of the output."""

    kind: Literal["detector"] = Field(description="The tier's kind: a small detector model.")
    preset: str | None = Field(
        default=None,
        description="A known model (guard/detect/presets.py): its task, input template, "
        f"supported label and window. One of: {', '.join(sorted(PRESETS))}.",
    )
    backend: Backend = Field(
        default=DEFAULT_DETECTOR_BACKEND,
        description="Who runs the model: onnx (in process, from model_dir), tei (Text "
        "Embeddings Inference /predict), vllm_score, vllm_classify (pair models) or "
        "vllm_pooling (span models) at url.",
    )
    model_dir: Path | None = Field(
        default=None,
        description="backend onnx: a directory as optimum exports it (model.onnx, "
        "tokenizer.json, config.json with id2label).",
    )
    url: str | None = Field(
        default=None,
        min_length=1,
        description="HTTP backends: the server's base URL, such as http://tei:8080.",
    )
    model: str | None = Field(
        default=None,
        min_length=1,
        description="HTTP backends: the model name the server knows the model by (vLLM).",
    )
    api_key: SecretStr | None = Field(
        default=None, description="HTTP backends: a bearer token for the server, if it needs one."
    )
    task: Literal["pair", "spans"] | None = Field(
        default=None,
        description="pair (the model scores premise-hypothesis pairs) or spans (it labels the "
        "answer's tokens); default: the preset's.",
    )
    max_length: int | None = Field(
        default=None,
        ge=16,
        le=131_072,
        description="The model's window in tokens; default: the preset's, else the model "
        "dir's tokenizer_config.json / config.json, else 512. Evidence chunks are sized to it.",
    )
    supported_label: str | None = Field(
        default=None,
        min_length=1,
        description="The label (a name in the model's id2label) that means supported; "
        "default: the preset's.",
    )
    template: str | None = Field(
        default=None,
        min_length=1,
        description="The model's input, overriding the preset's: 'pair' (the tokenizer's pair "
        "encoding of premise and hypothesis) or a text with {premise} and {hypothesis}; for "
        "span models the first sequence, with {context} and optionally {question} and {count}.",
    )
    template_without_question: str | None = Field(
        default=None,
        min_length=1,
        description="Span models: the first sequence when the request has no question "
        "(with {context} and optionally {count}); default: the preset's, else template.",
    )
    batch_size: int = Field(
        default=DEFAULT_DETECTOR_BATCH_SIZE,
        ge=1,
        le=1024,
        description="Pairs (or span inputs) per backend call, gathered from concurrent messages.",
    )
    batch_wait_ms: float = Field(
        default=DEFAULT_DETECTOR_BATCH_WAIT_MS,
        ge=0,
        le=1000,
        description="How long the first pair of a batch waits for others before the batch "
        "runs (0: run at once).",
    )
    max_inputs: int = Field(
        default=DEFAULT_DETECTOR_MAX_INPUTS,
        ge=1,
        le=1_000_000,
        description="Model inputs one message may take (sentences x evidence chunks for a pair "
        "model); a message that needs more is a judge_error, never a pass.",
    )
    timeout_s: float = Field(
        default=DEFAULT_DETECTOR_TIMEOUT_S,
        gt=0,
        le=MAX_DURATION_S,
        description="How long one backend call (a batch) may take; then judge_timeout.",
    )
    threads: int = Field(
        default=DEFAULT_DETECTOR_THREADS,
        ge=1,
        le=256,
        description="backend onnx: ONNX Runtime's intra-op threads for one batch.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        preset = self._preset()
        self._check_backend(preset)
        task = self.task or (preset.task if preset else None)
        if task is None:
            raise _refuse("task", "no task and no preset", "set preset, or task: pair|spans")
        if task not in TASKS_OF[self.backend]:
            raise _refuse(
                "backend",
                f"{self.backend} does not run {task} models",
                f"use one of {sorted(b for b, t in TASKS_OF.items() if task in t)}",
            )
        self._check_templates(task, preset)
        return self

    def _preset(self) -> Preset | None:
        if self.preset is None:
            return None
        if self.preset not in PRESETS:
            raise _refuse(
                "preset", f"unknown preset {self.preset!r}", f"use one of {sorted(PRESETS)}"
            )
        return PRESETS[self.preset]

    def _check_backend(self, preset: Preset | None) -> None:
        if self.backend == "onnx":
            if self.model_dir is None:
                raise _refuse(
                    "model_dir",
                    "backend onnx needs a model directory",
                    "set model_dir to an optimum export (model.onnx, tokenizer.json, "
                    "config.json), or use an HTTP backend with url",
                )
            if self.url is not None:
                raise _refuse("url", "backend onnx runs in process", "drop url, or set backend")
        elif self.url is None:
            raise _refuse(
                "url", f"backend {self.backend} needs the server's URL", "set url, or onnx"
            )
        if preset is not None and not preset.in_process:
            raise _refuse(
                "preset",
                f"{preset.name} is not a classification model ({preset.note})",
                "choose a pair or span classifier preset",
            )

    def _check_templates(self, task: Task, preset: Preset | None) -> None:
        spec_template = self.template or (preset.template if preset else PAIR)
        if task == "spans" and spec_template == PAIR:
            raise _refuse("template", "a span model needs a template with {context}", "set it")
        if problem := template_problem(spec_template, task):
            raise _refuse("template", problem, "fix the template")
        if self.template_without_question is not None:
            problem = (
                "only span models take it"
                if task == "pair"
                else template_problem(self.template_without_question, task, asks_question=False)
            )
            if problem:
                raise _refuse("template_without_question", problem, "fix or drop it")

    def spec(self) -> DetectorSpec:
        """The preset with this tier's overrides (the settings were validated)."""
        preset = self._preset()
        task = self.task or (preset.task if preset else "pair")
        template = self.template or (preset.template if preset else PAIR)
        return DetectorSpec(
            task=task,
            template=template,
            template_without_question=self.template_without_question
            or (preset.template_without_question if preset and not self.template else None),
            passage=preset.passage if preset else "{text}",
            supported_label=self.supported_label or (preset.supported_label if preset else None),
            max_length=self.max_length or (preset.max_length if preset else None),
        )

    @property
    def model_name(self) -> str:
        """The model, as verdicts name it: the preset, else the model dir's name, else the
        server's model name, else the backend."""
        if self.preset:
            return self.preset
        if self.model_dir is not None:
            return self.model_dir.name
        return self.model or self.backend
