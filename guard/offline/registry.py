"""Every rule of the offline judge, in the order it runs: the one place that order is fixed.

A claim meets :data:`CLAIM_RULES` in order and the first finding decides it
(:func:`guard.offline.checks.check_claim`); the answer's results then pass through
:data:`ANSWER_RULES` in order (:func:`guard.offline.judge.OfflineJudge.check`);
:data:`DECIDE_RULES` name what the answer-level decision applies itself
(:func:`guard.offline.judge.decide`). :data:`BASES` and :data:`CALIBRATION_KEYS` are
generated from them, and so is ``docs/rules.md`` (``groundguard rules-doc``).

The adapters below read a :class:`~guard.offline.rules.ClaimView` and call the checks where
they live (their modules' private functions: one failure test each, kept beside the helpers
they share). Each rule's examples are in :mod:`guard.offline.corpus`, attached here by name.

Why one module of this length: one entry per rule, in order, and an adapter per check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from guard.offline import (
    agents,
    asked,
    chimeras,
    denials,
    ordering,
    ranks,
    shared,
    slots,
    support,
    unwritten,
)
from guard.offline.additions import _comparison as _comparison_absent
from guard.offline.additions import _judgement, _predicate
from guard.offline.align import EvidenceIndex
from guard.offline.corpus import CORPUS, NONE
from guard.offline.details import (
    _direction_failure,
    _misplaced,
    _name_failure,
    _number_failure,
    _quote_failure,
    _swapped,
    _time_failure,
    _weekday_failure,
)
from guard.offline.families import family
from guard.offline.relations import (
    _agent_swapped,
    _attribution,
    _clause_opposite,
    _clause_polarity,
    _comparison,
    _contrary,
    _credited,
    _denied,
    _name_swapped,
    _names_apart,
    _noun_quantifier,
    _polarity,
    _quantifier,
    _unbounded,
    dropped_condition,
    narrowed_condition,
)
from guard.offline.rules import (
    AnswerCheck,
    C,
    ClaimCheck,
    ClaimView,
    Finding,
    Rule,
    failure,
)

# --- stage "detail": a detail the evidence lacks or states otherwise ---------------------


def _direction(v: ClaimView) -> Finding | None:
    return failure(_direction_failure(v.text, v.sentence))


def _quote(v: ClaimView) -> Finding | None:
    return failure(_quote_failure(v.text, v.index))


def _time(v: ClaimView) -> Finding | None:
    return failure(_time_failure(v.text, v.details, v.index, v.sentence))


def _weekday(v: ClaimView) -> Finding | None:
    return failure(_weekday_failure(v.text, v.details, v.index, v.sentence))


def _number(v: ClaimView) -> Finding | None:
    return failure(_number_failure(v.details, v.index, v.sentence, v.overlap, v.answer))


def _slot_misplaced(v: ClaimView) -> Finding | None:
    return failure(_misplaced(v.details, v.sentence, v.overlap))


def _number_swapped(v: ClaimView) -> Finding | None:
    return failure(_swapped(v.details, v.sentence, v.index))


def _name(v: ClaimView) -> Finding | None:
    return failure(_name_failure(v.details.names, v.index, v.text)) if v.readable else None


# --- stage "relation": how the claim relates what it says --------------------------------


def _order(v: ClaimView) -> Finding | None:
    found = ordering.reversed_order(v.text, v.premise.text, v.index)
    return None if found is None else Finding("order_reversed", found[0], found[1])


def _compared(v: ClaimView) -> Finding | None:
    return failure(_comparison(v.text, v.index))


def _attributed(v: ClaimView) -> Finding | None:
    return failure(_attribution(v.details, v.sentence, v.overlap, v.index))


def _credited_to(v: ClaimView) -> Finding | None:
    return failure(_credited(v.text, v.index))


def _apart(v: ClaimView) -> Finding | None:
    return failure(_names_apart(v.details.names, v.index, v.text))


def _unlimited(v: ClaimView) -> Finding | None:
    return failure(_unbounded(v.text, v.sentence, v.overlap))


def _polar(v: ClaimView) -> Finding | None:
    return failure(_polarity(v.claim, v.sentence, v.overlap, v.index))


def _clause_negated(v: ClaimView) -> Finding | None:
    return failure(_clause_polarity(v.claim, v.details.stems, v.index))


def _clause_opposed(v: ClaimView) -> Finding | None:
    return failure(_clause_opposite(v.claim, v.index))


def _predicate_denied(v: ClaimView) -> Finding | None:
    return failure(_denied(v.claim, v.index))


def _limited(v: ClaimView) -> Finding | None:
    return failure(_noun_quantifier(v.text, v.details.stems, v.index))


def _universal(v: ClaimView) -> Finding | None:
    return failure(_quantifier(v.text, v.sentence, v.overlap, v.index))


def _opposed(v: ClaimView) -> Finding | None:
    return failure(_contrary(v.claim, v.details.stems, v.index, v.sentence))


def _swapped_name(v: ClaimView) -> Finding | None:
    return failure(_name_swapped(v.text, v.details, v.index))


def _swapped_agent(v: ClaimView) -> Finding | None:
    return failure(_agent_swapped(v.text, v.details, v.index))


# --- stage "stated": what the evidence states otherwise, conditions, additions -----------


def _denied_stated(v: ClaimView) -> Finding | None:
    found = denials.denied(v.text, v.index)
    return None if found is None else Finding("denied_stated", found[0], found[1])


def _unwritten(v: ClaimView) -> Finding | None:
    found = unwritten.unwritten(
        v.details.names, v.text, v.index, v.premise.text, short_answer=v.claim.short_answer
    )
    return None if found is None else Finding(found[0], found[1])


def _rank(v: ClaimView) -> Finding | None:
    found = ranks.raised(v.text, v.index)
    return None if found is None else Finding("rank_raised", found[0], found[1])


def _dropped(v: ClaimView) -> Finding | None:
    found = dropped_condition(v.text, v.details.stems, v.answer.stems, v.sentence, v.share)
    return None if found is None else Finding("condition_dropped", found)


def _narrowed(v: ClaimView) -> Finding | None:
    found = narrowed_condition(v.text, v.answer, v.sentence, v.share)
    return None if found is None else Finding("condition_narrowed", found)


_Addition = Callable[[str, EvidenceIndex, frozenset[str]], tuple[str, str] | None]


def _added(check: _Addition) -> ClaimCheck:
    def added(v: ClaimView) -> Finding | None:
        found = check(v.text, v.index, v.premise.stems)
        return None if found is None else Finding(found[0], found[1])

    return added


def _with_examples(*rules: Rule[C]) -> tuple[Rule[C], ...]:
    """The rules with their examples from :data:`guard.offline.corpus.CORPUS`."""
    return tuple(
        replace(rule, fires=CORPUS.get(rule.name, NONE)[0], passes=CORPUS.get(rule.name, NONE)[1])
        for rule in rules
    )


def _refusal(v: ClaimView) -> Finding | None:
    return support.refusal(v.text)


CLAIM_RULES: tuple[Rule[ClaimCheck], ...] = _with_examples(
    Rule(
        "refusal",
        "text",
        _refusal,
        ("neutral:refusal",),
        'A refusal ("I couldn\'t find that") or a courtesy: neutral, no factual claim.',
    ),
    Rule(
        "direction",
        "detail",
        _direction,
        ("fail:direction",),
        'A change whose direction contradicts its own numbers ("up from 100 to 75").',
    ),
    Rule(
        "quote",
        "detail",
        _quote,
        ("fail:quote_absent",),
        "A quoted string the evidence lacks (a paraphrase in quotes is left to other rules).",
    ),
    Rule(
        "time",
        "detail",
        _time,
        ("fail:time_contradicted", "fail:time_absent"),
        "A time of day the evidence neither states nor reaches by an offset; contradicted "
        "where the evidence states times, else absent.",
    ),
    Rule(
        "weekday",
        "detail",
        _weekday,
        ("fail:weekday_contradicted",),
        "Days of the week the evidence does not give (days the claim excludes are not claimed).",
    ),
    Rule(
        "number",
        "detail",
        _number,
        ("fail:number_contradicted", "fail:number_unaligned", "fail:number_absent"),
        "A number neither stated nor computed: contradicted against the sentence the claim "
        "restates, unaligned against an amount elsewhere, absent with none of its kind.",
    ),
    Rule(
        "misplaced",
        "detail",
        _slot_misplaced,
        ("fail:time_misplaced", "fail:weekday_misplaced"),
        "A time or weekday the evidence states elsewhere while the sentence the claim restates "
        "says another.",
    ),
    Rule(
        "number_swapped",
        "detail",
        _number_swapped,
        ("fail:number_swapped",),
        "The claim's one amount of a kind belongs to another sentence than the one its words "
        "restate, which gives another amount of that kind.",
    ),
    Rule(
        "name",
        "detail",
        _name,
        ("fail:name_absent", "fail:name_part_absent"),
        "A name the evidence lacks: most of its words, or one capitalised word of it.",
    ),
    Rule(
        "name_titled",
        "foreign",
        support.titled,
        ("fail:name_titled",),
        'A titled name of another language the evidence writes otherwise ("Frau Kessler").',
    ),
    Rule(
        "foreign_negation",
        "foreign",
        support.foreign_negation,
        ("fail:negation_clause",),
        "A Spanish, German or French clause negated where the evidence states it (or back).",
    ),
    Rule(
        "foreign_quantifier",
        "foreign",
        support.foreign_quantifier,
        ("fail:quantifier_limited",),
        'A Spanish, German or French universal ("todos", "alle", "tous") the evidence limits.',
    ),
    Rule(
        "foreign_details_found",
        "foreign",
        support.foreign_details,
        ("undecided:foreign_details_found",),
        "A foreign claim whose numbers, dates and times are in the evidence: undecided.",
    ),
    Rule(
        "unreadable",
        "foreign",
        support.unreadable,
        ("undecided:unreadable",),
        "A foreign claim with no detail to check: undecided.",
    ),
    Rule(
        "order_reversed",
        "relation",
        _order,
        ("fail:order_reversed",),
        "A sequence or ranking the claim gives in the reverse of the evidence's order.",
    ),
    Rule(
        "comparison",
        "relation",
        _compared,
        ("fail:comparison_reversed", "fail:comparison_self"),
        "A comparison the amounts reverse (the evidence's, or the claim's own).",
    ),
    Rule(
        "attribution",
        "relation",
        _attributed,
        ("fail:attribution",),
        "Words credited to someone the passage saying them never names, while another passage "
        "names them.",
    ),
    Rule(
        "credited",
        "relation",
        _credited_to,
        ("fail:attribution",),
        "\"X said ...\" where the document saying it is another's and another document is X's.",
    ),
    Rule(
        "names_apart",
        "relation",
        _apart,
        ("fail:names_apart", "fail:names_bridged"),
        "Two names the claim relates that the evidence never relates (or only through a title).",
    ),
    Rule(
        "unbounded",
        "relation",
        _unlimited,
        ("fail:unbounded",),
        'No limit ("lifetime", "unlimited") where the sentence the claim restates sets one.',
    ),
    Rule(
        "polarity",
        "relation",
        _polar,
        ("fail:negation", "fail:opposite"),
        "A negation or an opposite word against the sentence the claim restates.",
    ),
    Rule(
        "clause_polarity",
        "relation",
        _clause_negated,
        ("fail:negation_clause",),
        "A clause negated where the evidence's clause states it, or stated where it is negated.",
    ),
    Rule(
        "clause_opposite",
        "relation",
        _clause_opposed,
        ("fail:opposite",),
        "An opposite word in a clause the evidence states with the other.",
    ),
    Rule(
        "predicate_negated",
        "relation",
        _predicate_denied,
        ("fail:negation_predicate",),
        "The claim negates what the evidence predicates of the same subject.",
    ),
    Rule(
        "quantifier_limited",
        "relation",
        _limited,
        ("fail:quantifier_limited",),
        '"All X" where the evidence limits what it says to some X.',
    ),
    Rule(
        "quantifier",
        "relation",
        _universal,
        ("fail:quantifier",),
        "A universal (all, every, always) where the restated sentence says some, most, may.",
    ),
    Rule(
        "contrary",
        "relation",
        _opposed,
        ("fail:contrary", "fail:negation"),
        'Another sentence about the same thing says the opposite ("closed on Sundays").',
    ),
    Rule(
        "name_swapped",
        "relation",
        _swapped_name,
        ("fail:name_swapped",),
        "A name of the evidence in another name's slot of the sentence the claim restates.",
    ),
    Rule(
        "agent_swapped",
        "relation",
        _swapped_agent,
        ("fail:agent_swapped",),
        '"Was done by X" where the evidence says another did it.',
    ),
    Rule(
        "denied_stated",
        "stated",
        _denied_stated,
        ("fail:denied_stated",),
        "The claim denies what a sentence of the evidence states.",
    ),
    Rule(
        "unwritten",
        "stated",
        _unwritten,
        ("fail:name_unwritten", "fail:short_name_unwritten"),
        "A name the evidence never writes as a name (its words are there, not together).",
    ),
    Rule(
        "rank_raised",
        "stated",
        _rank,
        ("fail:rank_raised",),
        "A top rank the evidence lowers or gives another subject.",
    ),
    Rule(
        "condition_dropped",
        "stated",
        _dropped,
        ("fail:condition_dropped",),
        "A claim that leaves out a condition of the sentence it restates.",
    ),
    Rule(
        "condition_narrowed",
        "stated",
        _narrowed,
        ("fail:condition_narrowed",),
        "A condition restated without the limit the evidence sets on it.",
    ),
    Rule(
        "comparison_absent",
        "stated",
        _added(_comparison_absent),
        ("fail:comparison_absent",),
        'A comparison ("cheaper ... than") no document makes, of that family or its opposite.',
    ),
    Rule(
        "judgement_absent",
        "stated",
        _added(_judgement),
        ("fail:judgement_absent",),
        'An evaluative word ("famous", "prolific") no document uses.',
    ),
    Rule(
        "predicate_absent",
        "stated",
        _added(_predicate),
        ("fail:predicate_absent",),
        'What a named subject "is" in words no document and not the question uses.',
    ),
    Rule(
        "no_content",
        "support",
        support.no_content,
        ("neutral:no_content",),
        "A claim with no content word, amount or time: neutral.",
    ),
    Rule(
        "too_many_amounts",
        "support",
        support.too_many_amounts,
        ("undecided:too_many_amounts",),
        "More amounts than are checked: undecided.",
    ),
    Rule(
        "rival",
        "support",
        support.rival,
        ("fail:amount_misplaced", "undecided:short_answer_unproven"),
        "A short answer's amount stated beside fewer of the question's words than a rival "
        "amount of its kind.",
    ),
    Rule(
        "short_answer",
        "support",
        support.short_answer,
        ("pass:short_answer",),
        "A short answer stated beside the question's subject: supported.",
    ),
    Rule(
        "answer_absent",
        "support",
        support.answer_absent,
        ("fail:answer_absent",),
        "A short answer whose own words are mostly nowhere in the evidence.",
    ),
    Rule(
        "short_answer_unproven",
        "support",
        support.short_answer_unproven,
        ("undecided:short_answer_unproven",),
        "Any other short answer: undecided.",
    ),
    Rule(
        "verbatim",
        "support",
        support.verbatim,
        ("pass:verbatim",),
        "The claim is written word for word in the evidence: supported.",
    ),
    Rule(
        "aligned",
        "support",
        support.aligned,
        ("pass:aligned", "pass:ordered", "pass:computed"),
        "Every word and detail in one sentence (in its order: ordered; with an amount computed "
        "from the evidence's: computed): supported.",
    ),
    Rule(
        "near",
        "support",
        support.near,
        ("pass:near",),
        "Nearly every word, most of them in one sentence: supported.",
    ),
    Rule(
        "scattered",
        "support",
        support.scattered,
        ("undecided:scattered",),
        "Every word in the evidence but not together: undecided.",
    ),
    Rule(
        "details_restated",
        "support",
        support.details_restated,
        ("undecided:details_restated",),
        "Its amounts, dates and times in the evidence, most of its words not: undecided.",
    ),
    Rule(
        "low_support",
        "support",
        support.low_support,
        ("undecided:low_support",),
        "Most of its words not in the evidence: undecided (never a failure alone).",
    ),
    Rule(
        "partial",
        "support",
        support.partial,
        ("undecided:partial",),
        "Any other claim: partly supported, undecided.",
    ),
)


ANSWER_RULES: tuple[Rule[AnswerCheck], ...] = _with_examples(
    Rule(
        "name_assembled",
        "answer",
        chimeras.checked,
        ("fail:name_assembled",),
        "A name put together from parts of other names of the evidence.",
    ),
    Rule(
        "shared_one_only",
        "answer",
        shared.checked,
        ("fail:shared_one_only",),
        '"Both X and Y ..." where the evidence says it of one of them only.',
    ),
    Rule(
        "slots",
        "answer",
        slots.answered,
        ("fail:slot_absent", "fail:slot_misbound"),
        "What the answer puts where the question asks: words no document has, or an entity "
        "of the evidence where the evidence binds another.",
    ),
    Rule(
        "wrong_option",
        "answer",
        slots.wrong_option,
        ("fail:wrong_option",),
        "Asked to choose between two options, the one the evidence does not say it of.",
    ),
    Rule(
        "doer_misbound",
        "answer",
        agents.checked,
        ("fail:doer_misbound",),
        '"X directed it" where the evidence says it was directed by another.',
    ),
    Rule(
        "kind",
        "answer",
        asked.checked,
        ("fail:kind_mismatch", "fail:kind_unanswered"),
        "The kind of detail the question asks for (a year, an age, a city) against the answer's.",
    ),
)


_KEYS = tuple(k for r in CLAIM_RULES for k in r.keys) + tuple(
    k for r in ANSWER_RULES for k in r.keys
)
_FAILS = tuple(k for k in _KEYS if k.startswith("fail:"))
_PASSES = tuple(k for k in _KEYS if k.startswith("pass:"))

DECIDE_RULES: tuple[Rule[None], ...] = _with_examples(
    Rule(
        "unsupported_addition",
        "decide",
        None,
        ("fail:unsupported_addition",),
        "In an answer mostly supported, a claim with almost none of its words in the evidence "
        "(a weak failure: calibration caps it).",
        weak=True,
    ),
    Rule(
        "evidence_capped",
        "decide",
        None,
        ("undecided:evidence_capped",),
        "A claim judged on part of the evidence only (more sentences than are read): undecided.",
    ),
    Rule(
        "script_numbers",
        "decide",
        None,
        ("fail:number_absent",),
        "An answer in a script the rules do not read: only its numbers are checked; a number "
        "the evidence neither states nor computes fails it, else it is undecided:unreadable.",
    ),
    Rule(
        "display_reordered",
        "decide",
        None,
        ("fail:display_reordered",),
        "An output a reader sees in another order than it is stored: failed, confidence 0.",
    ),
    Rule(
        "refuted",
        "decide",
        None,
        tuple(dict.fromkeys(f"undecided:refuted_{k.removeprefix('fail:')}" for k in _FAILS)),
        "A failure by a rule the calibration table shows wrong more often than right: undecided.",
    ),
    Rule(
        "unproven",
        "decide",
        None,
        tuple(dict.fromkeys(f"undecided:unproven_{k.removeprefix('pass:')}" for k in _PASSES)),
        "A proof by a rule the calibration table shows wrong more often than right: undecided.",
    ),
    Rule(
        "no_claims",
        "decide",
        None,
        ("undecided:no_claims",),
        "An answer with no factual claim (refusals, courtesies only): undecided.",
    ),
    Rule(
        "too_long",
        "decide",
        None,
        ("undecided:too_long",),
        "An answer with more claims than are checked, none failed: undecided.",
    ),
)

RULES: tuple[Rule[ClaimCheck] | Rule[AnswerCheck] | Rule[None], ...] = (
    *CLAIM_RULES,
    *ANSWER_RULES,
    *DECIDE_RULES,
)
BASES: tuple[str, ...] = tuple(dict.fromkeys(b for rule in RULES for b in rule.bases))
CALIBRATION_KEYS: frozenset[str] = frozenset(
    f"{label}:{family(basis) if label == 'fail' else basis}"
    for rule in RULES
    for label, _, basis in (k.partition(":") for k in rule.keys)
    if label != "neutral"
)  # a merged special case is counted under the rule it is a case of (guard.offline.families)
WEAK_KEYS: frozenset[str] = frozenset(k for rule in RULES if rule.weak for k in rule.keys)
