"""Calibration: an offline confidence is the observed accuracy of the rule that decided."""

from __future__ import annotations

import json

import pytest

from guard.offline.calibration import (
    FEW_CAP,
    MIN_SET_ROWS,
    MIN_TRUSTED,
    UNDECIDED,
    UNSEEN,
    Calibration,
    Tally,
    bundled,
    shrunk,
)
from guard.offline.checks import ClaimResult
from guard.offline.judge import Decision, decide
from guard.offline.quality import Judged, balanced_accuracy, reliability, tallies


def result(status: str, basis: str) -> ClaimResult:
    return ClaimResult("a claim", status, basis, "why")  # type: ignore[arg-type]


class TestConfidence:
    def test_a_basis_earns_its_shrunk_accuracy(self) -> None:
        table = Calibration({"fail:number_contradicted": Tally(90, 100)})
        assert table.confidence("fail:number_contradicted") == pytest.approx(
            shrunk(Tally(90, 100)), abs=1e-3)
        assert 0.88 < table.confidence("fail:number_contradicted") < 0.9

    def test_a_basis_never_seen_is_a_coin_flip(self) -> None:
        assert Calibration({}).confidence("fail:anything") == UNSEEN

    def test_undecided_answers_are_never_confident(self) -> None:
        table = Calibration({"undecided:partial": Tally(1000, 1000)})
        assert table.confidence("undecided:partial") == UNDECIDED

    def test_the_worst_set_decides_once_it_has_enough_rows(self) -> None:
        good, bad = Tally(100, 100), Tally(MIN_SET_ROWS, 2 * MIN_SET_ROWS)
        table = Calibration.combine({"copied": Calibration({"pass:aligned": good}),
                                     "paraphrased": Calibration({"pass:aligned": bad})})
        assert table.confidence("pass:aligned") == pytest.approx(shrunk(bad), abs=1e-3)
        few = Calibration.combine({"copied": Calibration({"pass:aligned": good}),
                                   "other": Calibration({"pass:aligned": Tally(0, 1)})})
        assert few.confidence("pass:aligned") > 0.9  # one row says little

    def test_the_table_round_trips_through_json(self) -> None:
        table = Calibration.combine({"a": Calibration({"fail:x": Tally(3, 4)}),
                                     "b": Calibration({"fail:x": Tally(5, 9)})})
        again = Calibration.from_json(json.loads(json.dumps(table.to_json())))
        assert again.confidence("fail:x") == table.confidence("fail:x")

    def test_the_bundled_table_loads_and_gives_probabilities(self) -> None:
        table = bundled()
        assert table.tallies
        assert all(0.0 <= table.confidence(b) <= 1.0 for b in table.tallies)


class TestDecision:
    TABLE = Calibration({"fail:number_contradicted": Tally(95, 100),
                         "fail:name_absent": Tally(70, 100), "pass:verbatim": Tally(99, 100),
                         "pass:aligned": Tally(80, 100)})

    def test_the_surest_contradiction_decides_a_fail(self) -> None:
        decision = decide([result("contradicted", "name_absent"),
                           result("contradicted", "number_contradicted"),
                           result("supported", "verbatim")], self.TABLE)
        assert (decision.label, decision.basis) == ("fail", "fail:number_contradicted")

    def test_a_proof_wrong_more_often_than_right_is_no_proof(self) -> None:
        table = Calibration({"pass:aligned": Tally(1, 30)})
        decision = decide([result("supported", "aligned")], table)
        assert (decision.label, decision.basis) == ("undecided", "undecided:unproven_aligned")

    def test_the_least_sure_proof_decides_a_pass(self) -> None:
        decision = decide([result("supported", "verbatim"), result("supported", "aligned")],
                          self.TABLE)
        assert (decision.label, decision.basis) == ("pass", "pass:aligned")

    def test_one_unproven_claim_makes_the_answer_undecided(self) -> None:
        decision = decide([result("supported", "verbatim"), result("undecided", "partial")],
                          self.TABLE)
        assert decision.label == "undecided"
        assert decision.grounded
        assert decision.confidence == UNDECIDED

    def test_courtesies_and_refusals_alone_are_undecided(self) -> None:
        decision = decide([result("neutral", "refusal")], self.TABLE)
        assert decision.label == "undecided"


def judged(confidence: float, right: bool) -> Judged:
    decision = Decision("fail", "fail:x", confidence, ())
    return Judged("id", "all", hallucinated=right, decision=decision)


def test_the_reliability_table_puts_each_decision_in_its_bucket() -> None:
    rows = [judged(0.95, True), judged(0.92, False), judged(0.55, True)]
    buckets = {(b.low, b.count): b for b in reliability(rows)}
    top = buckets[(0.9, 2)]
    assert top.observed == 0.5
    assert top.stated == pytest.approx(0.935)
    assert buckets[(0.5, 1)].observed == 1.0


def test_tallies_count_right_decisions_per_basis() -> None:
    table = tallies([judged(0.9, True), judged(0.9, False), judged(0.9, True)])
    assert table.tallies["fail:x"] == Tally(2, 3)


def test_balanced_accuracy_weighs_both_classes() -> None:
    assert balanced_accuracy([(True, True), (False, False), (False, False)]) == 1.0
    assert balanced_accuracy([(True, True), (True, False), (True, False)]) == 0.5


def test_a_rule_seen_a_few_times_is_never_trusted_alone() -> None:
    few = Calibration({"fail:x": Tally(MIN_TRUSTED - 1, MIN_TRUSTED - 1)})
    assert few.confidence("fail:x") <= FEW_CAP
    many = Calibration({"fail:x": Tally(10 * MIN_TRUSTED, 10 * MIN_TRUSTED)})
    assert many.confidence("fail:x") > FEW_CAP
