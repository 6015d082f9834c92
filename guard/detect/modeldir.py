"""Loading a model directory in the layout ``optimum`` exports, refusing one that cannot work.

The directory holds ``model.onnx``, ``tokenizer.json`` and ``config.json`` (with ``id2label``;
``tokenizer_config.json`` is read for the window when present). Every problem is a
:class:`guard.errors.ConfigError` at construction, naming the file and the fix: a missing file,
JSON that does not parse, labels without the supported one, a graph that does not load or takes
inputs this backend does not give, logits of the wrong shape for the task.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnxruntime as ort
from tokenizers import Tokenizer

from guard.detect.presets import Task
from guard.detect.settings import DEFAULT_DETECTOR_MAX_LENGTH
from guard.errors import ConfigError

FILES = ("config.json", "tokenizer.json", "model.onnx")
GIVEN_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
EXPORT_FIX = (
    "export the model with optimum (optimum-cli export onnx --model <id> "
    "--task text-classification|token-classification <model_dir>)"
)
_RANK = {"pair": 2, "spans": 3}  # logits: [batch, labels] or [batch, tokens, labels]
_MAX_SANE_LENGTH = 1_000_000  # tokenizer_config.json's "no limit" is 1e30


@dataclass(frozen=True)
class ModelDir:
    """A loaded model directory: its session, tokenizer, labels and window."""

    path: Path
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Tokenizer
    labels: tuple[str, ...]
    supported: int  # index of the supported label
    max_length: int
    inputs: dict[str, str]  # input name -> element type ("int64", "int32")
    pad_id: int


def load_model_dir(
    path: Path, *, task: Task, supported_label: str | None, max_length: int | None, threads: int
) -> ModelDir:
    """The model in ``path``, checked for ``task`` (see the module docstring)."""
    for name in FILES:
        if not (path / name).is_file():
            raise ConfigError("model_dir", f"{path / name} is missing", EXPORT_FIX)
    config = read_json(path / "config.json")
    labels = read_labels(config, path / "config.json")
    supported = supported_index(labels, supported_label, path / "config.json")
    tokenizer = _tokenizer(path / "tokenizer.json")
    session = _session(path / "model.onnx", threads)
    inputs = _inputs(session, path / "model.onnx")
    _check_logits(session, task, len(labels), path / "model.onnx")
    return ModelDir(
        path=path,
        session=session,
        tokenizer=tokenizer,
        labels=labels,
        supported=supported,
        max_length=max_length or _window(path, config),
        inputs=inputs,
        pad_id=_pad_id(config, tokenizer),
    )


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError("model_dir", f"{path} is not readable JSON ({exc})", EXPORT_FIX) from exc
    if not isinstance(data, dict):
        raise ConfigError("model_dir", f"{path} is not a JSON object", EXPORT_FIX)
    return data


def read_labels(config: dict[str, Any], path: Path) -> tuple[str, ...]:
    """``id2label`` as a tuple by index (its keys must be 0..n-1)."""
    raw = config.get("id2label")
    fix = 'write "id2label": {"0": "...", "1": "..."} into it (the model\'s labels by index)'
    if not isinstance(raw, dict) or len(raw) < 2:
        raise ConfigError("model_dir", f"{path} has no id2label with two labels or more", fix)
    try:
        by_index = {int(k): str(v) for k, v in raw.items()}
    except ValueError as exc:
        raise ConfigError("model_dir", f"{path}: id2label keys must be integers", fix) from exc
    if sorted(by_index) != list(range(len(by_index))):
        raise ConfigError("model_dir", f"{path}: id2label keys are not 0..{len(raw) - 1}", fix)
    return tuple(by_index[i] for i in range(len(by_index)))


def supported_index(labels: tuple[str, ...], supported_label: str | None, path: Path) -> int:
    if supported_label is None:
        raise ConfigError(
            "supported_label",
            f"no preset or setting says which of {list(labels)} ({path}) means supported",
            "set supported_label to one of them",
        )
    if supported_label not in labels:
        raise ConfigError(
            "supported_label",
            f"{path} has the labels {list(labels)}, not {supported_label!r}",
            "set supported_label to one of them (or fix the model's id2label)",
        )
    return labels.index(supported_label)


def _session(path: Path, threads: int) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: ORT's warnings go to stderr, not our logs
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # ORT raises its own pybind classes, all plain Exceptions
        raise ConfigError("model_dir", f"{path} does not load ({exc})", EXPORT_FIX) from exc


def _inputs(session: Any, path: Path) -> dict[str, str]:
    inputs = {i.name: str(i.type) for i in session.get_inputs()}
    if extra := set(inputs) - GIVEN_INPUTS:
        raise ConfigError(
            "model_dir",
            f"{path} takes inputs {sorted(extra)} this backend does not give (it gives "
            f"{sorted(GIVEN_INPUTS)})",
            f"{EXPORT_FIX}, without past key values or position inputs",
        )
    if "input_ids" not in inputs:
        raise ConfigError("model_dir", f"{path} takes no input_ids", EXPORT_FIX)
    kinds = {"tensor(int64)": "int64", "tensor(int32)": "int32"}
    if odd := {n: t for n, t in inputs.items() if t not in kinds}:
        raise ConfigError("model_dir", f"{path}: inputs of types {odd}, not int64", EXPORT_FIX)
    return {n: kinds[t] for n, t in inputs.items()}


def _check_logits(session: Any, task: Task, n_labels: int, path: Path) -> None:
    shape = list(session.get_outputs()[0].shape)
    other = "spans" if task == "pair" else "pair"
    if len(shape) != _RANK[task]:
        raise ConfigError(
            "task",
            f"{path} gives rank-{len(shape)} logits, a {task} model gives rank {_RANK[task]}",
            f"set task: {other} if this is a {other} model, or export the right head",
        )
    if isinstance(shape[-1], int) and shape[-1] != n_labels:
        raise ConfigError(
            "model_dir",
            f"{path} gives {shape[-1]} logits per row, config.json names {n_labels} labels",
            "export config.json and model.onnx from the same model",
        )


def _tokenizer(path: Path) -> Tokenizer:
    try:
        return Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises bare Exceptions
        raise ConfigError("model_dir", f"{path} does not load ({exc})", EXPORT_FIX) from exc


def _window(path: Path, config: dict[str, Any]) -> int:
    """The window from tokenizer_config.json's model_max_length, else config.json's
    max_position_embeddings (RoBERTa's counts two padding positions), else the default."""
    declared = None
    if (path / "tokenizer_config.json").is_file():
        declared = read_json(path / "tokenizer_config.json").get("model_max_length")
    if isinstance(declared, int | float) and 16 <= declared < _MAX_SANE_LENGTH:
        return int(declared)
    positions = config.get("max_position_embeddings")
    if isinstance(positions, int) and positions >= 16:
        return (
            positions - 2 if config.get("model_type") in ("roberta", "xlm-roberta") else positions
        )
    return DEFAULT_DETECTOR_MAX_LENGTH


def _pad_id(config: dict[str, Any], tokenizer: Tokenizer) -> int:
    if isinstance(config.get("pad_token_id"), int):
        return int(config["pad_token_id"])
    if tokenizer.padding is not None:
        return int(tokenizer.padding["pad_id"])
    for token in ("[PAD]", "<pad>"):
        if (found := tokenizer.token_to_id(token)) is not None:
            return found
    return 0
