"""A tiny detector model directory, built at test time: for tests of the ``detector`` judge kind.

Shipped so that users' tests (and ours) can run a ``detector`` tier with ``backend: onnx``
without downloading a model: :func:`build_tiny_detector` writes, into a directory, what
``optimum`` exports for a real model -- ``model.onnx``, ``tokenizer.json``, ``config.json``
(with ``id2label``) and ``tokenizer_config.json`` -- for a pair classifier or a token (span)
classifier. Its answers mean nothing: the weights are small fixed random numbers (seeded), so
use it to test mechanics (loading, batching, truncation, offsets), never accuracy.

* The tokenizer is a word-level one *trained in code* on ``words`` (lower-cased, accents
  stripped, BERT's punctuation splitting, ``[CLS] a [SEP] b [SEP]`` for pairs); other words
  are ``[UNK]``. Its offsets are character offsets into the original text, as a real
  tokenizer's.
* The graph (``onnx.helper``, opset 17, IR 8 for ONNX Runtime 1.17+) is token embeddings
  (plus token-type embeddings) -> masked mean -> MatMul -> logits ``[batch, labels]`` for
  ``task="pair"``; embeddings -> MatMul -> logits ``[batch, tokens, labels]`` for ``"spans"``.
* ``flagged`` words drive the model towards the unsupported label, so a test can make an
  answer, or the token of one word, unsupported on purpose: in a span model each flagged
  token is unsupported, in a pair model a pair is unsupported when about one token in forty
  or more is flagged. Other tokens lean towards supported.

Needs ``onnx`` (the ``test`` extra) and ``tokenizers`` (the ``detector`` extra)::

    from guard.testing.tiny_detector import build_tiny_detector
    model_dir = build_tiny_detector(tmp_path / "model", task="spans", flagged=["berlin"])
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
WORDS = (
    "the a an is was are in of on at to and or not no yes it this that with for by from "
    "capital city country france paris germany berlin spain madrid europe population million "
    "river tower built opened founded year café zürich müller straße 1889 1990 2024 price "
    "euros refund days return policy order delivery shipping free answer question passage"
)
SUPPORTED_BIAS = 2.0  # every token leans towards supported by this many logits
FLAG_WEIGHT = 100.0  # a flagged token's push towards unsupported (on the mean, for pairs)
WEIGHT_SCALE = 0.1  # the random weights' standard deviation


def build_tiny_detector(
    directory: Path,
    *,
    task: Literal["pair", "spans"] = "pair",
    words: Iterable[str] = (WORDS,),
    flagged: Iterable[str] = (),
    labels: tuple[str, ...] = ("unsupported", "supported"),
    supported_label: str = "supported",
    hidden: int = 8,
    token_type_ids: bool = True,
    max_length: int = 512,
    seed: int = 0,
) -> Path:
    """Write a tiny ``task`` model into ``directory`` (created) and return it."""
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(words)
    tokenizer.save(str(directory / "tokenizer.json"))
    flags = {i for w in flagged if (i := tokenizer.token_to_id(_normal(w))) is not None}
    weights = _weights(tokenizer.get_vocab_size(), labels, supported_label, flags, hidden, seed)
    graph = _graph(task, weights, token_type_ids)
    onnx.save(graph, str(directory / "model.onnx"))
    _write_json(directory / "config.json", _config(labels, max_length))
    _write_json(directory / "tokenizer_config.json", {"model_max_length": max_length})
    return directory


def _normal(word: str) -> str:
    return str(normalizers.BertNormalizer(lowercase=True).normalize_str(word))


def _tokenizer(words: Iterable[str]) -> Tokenizer:
    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordLevelTrainer(special_tokens=list(SPECIALS), min_frequency=1)
    tokenizer.train_from_iterator(list(words), trainer)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return tokenizer


def _weights(
    vocab: int,
    labels: tuple[str, ...],
    supported_label: str,
    flags: set[int],
    hidden: int,
    seed: int,
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    supported = labels.index(supported_label)
    unsupported = next(i for i in range(len(labels)) if i != supported)
    embeddings = rng.normal(0.0, WEIGHT_SCALE, (vocab, hidden)).astype(np.float32)
    embeddings[:, 0] = 0.0  # dimension 0 is the flag
    embeddings[sorted(flags), 0] = 1.0
    projection = rng.normal(0.0, WEIGHT_SCALE, (hidden, len(labels))).astype(np.float32)
    projection[0, :] = 0.0
    projection[0, unsupported] = FLAG_WEIGHT
    bias = np.zeros(len(labels), dtype=np.float32)
    bias[supported] = SUPPORTED_BIAS
    types = rng.normal(0.0, WEIGHT_SCALE, (2, hidden)).astype(np.float32)
    types[:, 0] = 0.0
    return {"embeddings": embeddings, "types": types, "projection": projection, "bias": bias}


def _graph(task: str, weights: dict[str, np.ndarray], token_type_ids: bool) -> onnx.ModelProto:
    labels = weights["bias"].shape[0]
    inputs = ["input_ids", "attention_mask"] + (["token_type_ids"] if token_type_ids else [])
    nodes = [helper.make_node("Gather", ["embeddings", "input_ids"], ["tokens"])]
    if token_type_ids:
        nodes += [
            helper.make_node("Gather", ["types", "token_type_ids"], ["typed"]),
            helper.make_node("Add", ["tokens", "typed"], ["hidden"]),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["tokens"], ["hidden"]))
    nodes += _mean_pool() if task == "pair" else [helper.make_node("Identity", ["hidden"], ["x"])]
    nodes += [
        helper.make_node("MatMul", ["x", "projection"], ["scores"]),
        helper.make_node("Add", ["scores", "bias"], ["logits"]),
    ]
    shape: list[Any] = ["batch", labels] if task == "pair" else ["batch", "sequence", labels]
    graph = helper.make_graph(
        nodes,
        f"tiny-{task}-detector",
        [_int_input(name) for name in inputs],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, shape)],
        initializer=_initializers(weights, token_type_ids)
        + (_constants() if task == "pair" else []),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _mean_pool() -> list[onnx.NodeProto]:
    """``hidden`` averaged over the tokens the attention mask keeps: ``x`` [batch, hidden]."""
    return [
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "axis2"], ["mask3"]),
        helper.make_node("Mul", ["hidden", "mask3"], ["kept"]),
        helper.make_node("ReduceSum", ["kept", "axis1"], ["total"], keepdims=0),
        helper.make_node("ReduceSum", ["mask3", "axis1"], ["count"], keepdims=0),
        helper.make_node("Max", ["count", "one"], ["safe_count"]),
        helper.make_node("Div", ["total", "safe_count"], ["x"]),
    ]


def _int_input(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])


def _initializers(weights: dict[str, np.ndarray], token_type_ids: bool) -> list[onnx.TensorProto]:
    used = {name: a for name, a in weights.items() if token_type_ids or name != "types"}
    return [numpy_helper.from_array(array, name) for name, array in used.items()]


def _constants() -> list[onnx.TensorProto]:
    return [
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
    ]


def _config(labels: tuple[str, ...], max_length: int) -> dict[str, Any]:
    return {
        "architectures": ["TinyDetector"],
        "model_type": "tiny-detector",
        "id2label": {str(i): label for i, label in enumerate(labels)},
        "label2id": {label: i for i, label in enumerate(labels)},
        "pad_token_id": 0,
        "max_position_embeddings": max_length,
    }


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
