"""Every rule of the offline judge against its corpus (guard/offline/corpus.py): each example it
must fire on is decided with its basis by the real OfflineJudge, each example it must not fire
on is not, and a claim rule's own check finds each of its examples; and the registry, the
corpus and the calibration table agree on the rules' names."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.models import JudgeRequest
from guard.offline import OfflineJudge, hearsay, judge
from guard.offline.calibration import WEAK_BASES, Calibration, bundled
from guard.offline.corpus import CORPUS
from guard.offline.details import Answer
from guard.offline.registry import BASES, CALIBRATION_KEYS, CLAIM_RULES, RULES
from guard.offline.rules import ClaimCheck, ClaimView, Example, Premise, Rule
from guard.offline.status import status_of

SETTINGS = JudgeSettings()
JUDGE = OfflineJudge(SETTINGS)


def prepared(example: Example) -> PreparedCase:
    context = list(example.context) if isinstance(example.context, tuple) else example.context
    settings = (
        JudgeSettings(max_context_chars=example.context_chars)
        if example.context_chars
        else SETTINGS
    )
    case = Guard(JUDGE, settings).prepare(
        JudgeRequest(output=example.output, context=context, question=example.question)
    )
    assert isinstance(case, PreparedCase)
    return case


SET_ASIDE = ("refuted_", "unproven_")  # a finding the calibration table does not trust


def bases_of(example: Example) -> set[str]:
    """The bases the judge decides ``example`` with: each claim's (before and after the
    answer-level decision) and the answer's. A finding the calibration sets aside
    ("refuted_contrary") counts as its rule's too: the rule fired, the table distrusts it."""
    case = prepared(example)
    decision = JUDGE.decide(case)
    claims = {r.basis for r in JUDGE.check(case)} | {r.basis for r in decision.results}
    found = claims | {decision.basis.split(":", 1)[1]}
    return found | {b.split("_", 1)[1] for b in found if b.startswith(SET_ASIDE)}


FIRES = [
    pytest.param(rule, example, id=f"{rule.name}-{i}-{rule.fires_with(example)}")
    for rule in RULES
    for i, example in enumerate(rule.fires)
]
PASSES = [
    pytest.param(rule, example, id=f"{rule.name}-{i}")
    for rule in RULES
    for i, example in enumerate(rule.passes)
]


@pytest.mark.parametrize(("rule", "example"), FIRES)
def test_a_rule_fires_on_its_examples_with_its_basis(rule: Rule[object], example: Example) -> None:
    basis = rule.fires_with(example)
    assert basis in rule.bases, f"{basis} is not a basis of rule {rule.name}"
    if status_of(rule, bundled()) == "off":
        # switched off by its record: the judge skips it, its check still finds the example
        # (the calibration runs it, so its record is kept)
        assert rule.name in JUDGE.skip
        assert rule.stage not in ("answer", "decide")
        assert basis in own_findings(rule, example)  # type: ignore[arg-type]
        return
    assert basis in bases_of(example)


def own_findings(rule: Rule[ClaimCheck], example: Example) -> set[str]:
    """The bases ``rule``'s own check finds on the claims of ``example``, read as the judge
    reads them (so a basis two rules share is shown to come from this one)."""
    case = prepared(example)
    passages, evidence = hearsay.evidence_of(tuple(case.passages), case.evidence)
    index = judge._index(passages, evidence, case.labels)
    premise = Premise.of(case.question)
    answer = Answer.of(case.output, index)
    readable = judge._readable(case.output, case.question)
    found = set()
    for claim in judge._claims(case.output, bool(case.question)):
        finding = rule.check(ClaimView(claim, index, premise, answer, readable))
        if finding is not None:
            found.add(finding.basis)
    return found


CLAIM_FIRES = [
    pytest.param(rule, example, id=f"{rule.name}-{i}-{rule.fires_with(example)}")
    for rule in CLAIM_RULES
    for i, example in enumerate(rule.fires)
]


@pytest.mark.parametrize(("rule", "example"), CLAIM_FIRES)
def test_a_claim_rule_s_own_check_finds_its_examples(
    rule: Rule[ClaimCheck], example: Example
) -> None:
    assert rule.fires_with(example) in own_findings(rule, example)


@pytest.mark.parametrize(("rule", "example"), PASSES)
def test_a_rule_does_not_fire_on_its_counter_examples(rule: Rule[object], example: Example) -> None:
    forbidden = {example.basis} if example.basis else set(rule.bases)
    assert not forbidden & bases_of(example)


class TestRegistry:
    def test_every_rule_has_an_example_it_fires_on(self) -> None:
        assert [r.name for r in RULES if not r.fires] == []

    def test_every_rule_has_an_example_it_must_not_fire_on(self) -> None:
        assert [r.name for r in RULES if not r.passes] == []

    def test_every_basis_is_fired_by_some_example(self) -> None:
        fired = {r.fires_with(e) for r in RULES for e in r.fires}
        derived = {r.name for r in RULES if r.name in ("refuted", "unproven")}
        unfired = [b for r in RULES if r.name not in derived for b in r.bases if b not in fired]
        assert unfired == []

    def test_every_corpus_entry_names_a_rule(self) -> None:
        assert set(CORPUS) - {r.name for r in RULES} == set()

    def test_rule_names_are_unique(self) -> None:
        names = [r.name for r in RULES]
        assert len(names) == len(set(names))

    def test_the_calibration_table_keys_are_registry_keys(self) -> None:
        table = bundled()
        assert set(table.tallies) - CALIBRATION_KEYS == set()
        assert WEAK_BASES <= CALIBRATION_KEYS

    def test_bases_are_the_registry_bases_without_repeats(self) -> None:
        assert len(BASES) == len(set(BASES))
        assert "number_contradicted" in BASES


def test_rules_their_record_switches_off_do_not_run_but_the_calibration_runs_them() -> None:
    """An off rule no longer hides a claim from the rules after it; the calibration's checks
    (an empty table) run every rule, so an off rule keeps a record and can come back."""
    assert {"denied_stated", "near"} <= OfflineJudge().skip
    assert OfflineJudge(calibration=Calibration({})).skip == frozenset()
    statuses = {rule.name: status_of(rule, bundled()) for rule in RULES}
    assert statuses["number"] == "active"
    assert statuses["unsupported_addition"] == "annotate"
    page = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert "| `denied_stated` | off |" in page.read_text(encoding="utf-8")
