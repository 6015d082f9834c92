"""Known groundedness models: how each one reads its input and which label means supported.

A preset names a model's task, its input template, its supported label, its window and its
licence, so ``judge.tiers: [{kind: detector, preset: ..., model_dir: ...}]`` needs nothing else.
Any of them can be overridden on the tier (``task``, ``template``, ``supported_label``,
``max_length``). Templates are written with ``{premise}`` and ``{hypothesis}`` (pair models;
``pair`` alone means the tokenizer's own pair encoding, ``[CLS] premise [SEP] hypothesis [SEP]``)
or ``{context}``, ``{question}`` and ``{count}`` (span models: the first sequence; the answer is
the second).

| preset                         | task  | input                  | supported  | tokens | licence |
|--------------------------------|-------|------------------------|------------|--------|---------|
| factcg-deberta-v3-large        | pair  | one text: FACTCG       | LABEL_1 *  | 2048   | MIT     |
| hhem-2.1-open                  | pair  | one text: HHEM, own T5 | consistent | 2048   | Apache2 |
| minicheck-roberta-large        | pair  | one text: eos-joined   | LABEL_1 *  | 512    | MIT     |
| minicheck-deberta-v3-large     | pair  | one text: eos-joined   | LABEL_1 *  | 2048   | MIT     |
| minicheck-flan-t5-large        | pair  | seq2seq: unsupported   | --         | 2048   | MIT     |
| lettucedetect-base-modernbert  | spans | LETTUCE_QA + answer    | LABEL_0 *  | 4096   | MIT     |
| lettucedetect-large-modernbert | spans | LETTUCE_QA + answer    | LABEL_0 *  | 4096   | MIT     |
| tinylettuce-ettin-17m          | spans | same, not confirmed    | LABEL_0 *  | 4096   | MIT     |
| tinylettuce-ettin-32m          | spans | same, not confirmed    | LABEL_0 *  | 4096   | MIT     |

Model cards: ``https://huggingface.co/`` + :attr:`Preset.model_id` (:attr:`Preset.card`).

\\* The label *index* is confirmed from the authors' code (FactCG and MiniCheck take
``softmax(logits)[:, 1]`` as P(supported); LettuceDetect labels tokens 0 = supported,
1 = hallucinated); the *name* in the model's ``config.json`` was not seen: ``LABEL_k`` is what
transformers writes when a model sets no names. If the model dir's ``config.json`` names them
otherwise, the tier's ``supported_label`` must say which one (loading refuses a label it lacks).

Notes, from the authors' code and model cards:

* **FactCG** (``derenlei/FactCG`` ``factcg/utils.py`` ``INSTRUCTION_TEMPLATE``): one text, truncated
  ``only_first`` at 2048 tokens; the authors chunk the document at 550 words, max over chunks.
* **HHEM-2.1-open** is a flan-t5-base with Vectara's *custom* classification head
  (``HHEMv2ForSequenceClassification``, ``trust_remote_code``): optimum's stock export does not
  know it, so running it here needs your own ONNX export of that head (inputs ``input_ids`` and
  ``attention_mask``, logits over ``hallucinated``/``consistent``), and its tokenizer is
  flan-t5-base's. The card claims no window limit; 2048 is what the card measures (1.5 s on CPU).
  The label names come from pipeline code reading ``label == "consistent"``.
* **MiniCheck** (``Liyan06/MiniCheck`` ``minicheck/inference.py``): the document chunk and the
  claim are joined with the tokenizer's ``eos_token`` (``</s>`` for RoBERTa, ``[SEP]`` for
  DeBERTa-v3) into *one* text; chunks of 400 tokens; max over chunks. Flan-T5 is sequence to
  sequence (it reads the logits of tokens 3 and 209 at the first decoder step after a
  ``predict:`` prefix): a classification backend cannot run it, in process or over TEI.
* **LettuceDetect** (``KRLabsOrg/LettuceDetect``, ``lettucedetect/prompts/qa_prompt_en.txt`` as
  copied verbatim by several users; ``TransformerDetector``): the prompt and the answer are a
  tokenizer *pair*, truncated ``only_first`` at 4096; answer tokens whose argmax is 1 are
  hallucinated, and consecutive ones are merged into spans. Without a question it uses
  ``Summarize the following text:\\n{context}\\noutput:``.
* **TinyLettuce** cards describe the input as ``[CLS] context [SEP] question [SEP] answer [SEP]``,
  but their usage code runs LettuceDetect's ``TransformerDetector``, which builds the QA prompt
  above; the preset follows the code. Not confirmed against the training script.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Formatter
from typing import Literal

Task = Literal["pair", "spans"]
PAIR = "pair"  # the template that means "the tokenizer's own pair encoding"

LETTUCE_QA = (
    "Briefly answer the following question:\n{question}\n"
    "Bear in mind that your response should be strictly based on the following {count} "
    "passages:\n{context}\n"
    "In case the passages do not contain the necessary information to answer the question, "
    'please reply with: "Unable to answer based on given passages."\noutput:'
)
LETTUCE_SUMMARY = "Summarize the following text:\n{context}\noutput:"
LETTUCE_PASSAGE = "passage {index}: {text}"  # joined with "\n" into {context}
FACTCG = (
    "{premise}\n\nChoose your answer: based on the paragraph above can we conclude that "
    '"{hypothesis}"?\n\nOPTIONS:\n- Yes\n- No\nI think the answer is '
)
HHEM = (
    "<pad> Determine if the hypothesis is true given the premise?\n\n"
    "Premise: {premise}\n\nHypothesis: {hypothesis}"
)


@dataclass(frozen=True)
class Preset:
    """One known model: what the detector needs to feed it and to read its answer."""

    name: str
    model_id: str  # the Hugging Face repository
    task: Task
    template: str  # PAIR, or a text with the fields of the task (see the module docstring)
    supported_label: str
    max_length: int  # tokens
    licence: str
    card: str
    in_process: bool = True  # whether a classification graph (ONNX, TEI) can run it
    template_without_question: str | None = None  # spans: when the request has no question
    passage: str = LETTUCE_PASSAGE  # spans: how one passage is written into {context}
    note: str = ""


def _lettuce(name: str, model_id: str, note: str = "") -> Preset:
    return Preset(
        name=name,
        model_id=model_id,
        task="spans",
        template=LETTUCE_QA,
        template_without_question=LETTUCE_SUMMARY,
        supported_label="LABEL_0",
        max_length=4096,
        licence="MIT",
        card=f"https://huggingface.co/{model_id}",
        note=note,
    )


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            name="factcg-deberta-v3-large",
            model_id="yaxili96/FactCG-DeBERTa-v3-Large",
            task="pair",
            template=FACTCG,
            supported_label="LABEL_1",
            max_length=2048,
            licence="MIT",
            card="https://huggingface.co/yaxili96/FactCG-DeBERTa-v3-Large",
        ),
        Preset(
            name="hhem-2.1-open",
            model_id="vectara/hallucination_evaluation_model",
            task="pair",
            template=HHEM,
            supported_label="consistent",
            max_length=2048,
            licence="Apache-2.0",
            card="https://huggingface.co/vectara/hallucination_evaluation_model",
            note="custom T5 head (trust_remote_code): needs your own ONNX export",
        ),
        Preset(
            name="minicheck-roberta-large",
            model_id="lytang/MiniCheck-RoBERTa-Large",
            task="pair",
            template="{premise}</s>{hypothesis}",
            supported_label="LABEL_1",
            max_length=512,
            licence="MIT",
            card="https://huggingface.co/lytang/MiniCheck-RoBERTa-Large",
        ),
        Preset(
            name="minicheck-deberta-v3-large",
            model_id="lytang/MiniCheck-DeBERTa-v3-Large",
            task="pair",
            template="{premise}[SEP]{hypothesis}",
            supported_label="LABEL_1",
            max_length=2048,
            licence="MIT",
            card="https://huggingface.co/lytang/MiniCheck-DeBERTa-v3-Large",
        ),
        Preset(
            name="minicheck-flan-t5-large",
            model_id="lytang/MiniCheck-Flan-T5-Large",
            task="pair",
            template="predict: {premise}</s>{hypothesis}",
            supported_label="LABEL_1",
            max_length=2048,
            licence="MIT",
            card="https://huggingface.co/lytang/MiniCheck-Flan-T5-Large",
            in_process=False,
            note="sequence to sequence: a classification backend cannot run it",
        ),
        _lettuce("lettucedetect-base-modernbert", "KRLabsOrg/lettucedect-base-modernbert-en-v1"),
        _lettuce("lettucedetect-large-modernbert", "KRLabsOrg/lettucedect-large-modernbert-en-v1"),
        _lettuce("tinylettuce-ettin-17m", "KRLabsOrg/tinylettuce-ettin-17m-en", "card: see note"),
        _lettuce("tinylettuce-ettin-32m", "KRLabsOrg/tinylettuce-ettin-32m-en", "card: see note"),
    )
}

PAIR_FIELDS = frozenset({"premise", "hypothesis"})
SPAN_FIELDS = frozenset({"context", "question", "count"})


def template_fields(template: str) -> frozenset[str]:
    """The ``{fields}`` a template names (raises ``ValueError`` on a malformed one)."""
    return frozenset(name for _, name, _, _ in Formatter().parse(template) if name is not None)


def template_problem(template: str, task: Task, *, asks_question: bool = True) -> str | None:
    """Why ``template`` cannot be used for ``task``, or None when it can."""
    if task == "pair" and template == PAIR:
        return None
    try:
        fields = template_fields(template)
    except ValueError as exc:
        return f"the template does not parse ({exc}); write literal braces as {{{{ and }}}}"
    allowed = PAIR_FIELDS if task == "pair" else SPAN_FIELDS
    needed = PAIR_FIELDS if task == "pair" else frozenset({"context"})
    if unknown := fields - allowed:
        return f"unknown fields {sorted(unknown)}; a {task} template takes {sorted(allowed)}"
    if missing := needed - fields:
        return f"it lacks {sorted(missing)}"
    if task == "spans" and not asks_question and "question" in fields:
        return "a template for requests without a question cannot use {question}"
    return None


def render_pair(template: str, premise: str, hypothesis: str) -> str:
    """The one text a templated pair model reads (not for the ``pair`` template)."""
    return template.format(premise=premise, hypothesis=hypothesis)
