"""Calibration: an offline confidence is the observed accuracy of the rule that decided."""

from __future__ import annotations

import json

import pytest

from guard.offline.calibration import (
    FEW_CAP,
    MIN_SOURCE_ROWS,
    MIN_TRUSTED,
    ONE_SOURCE_CAP,
    UNDECIDED,
    UNSEEN,
    Calibration,
    Tally,
    bundled,
    lower_bound,
    robust_bound,
    shrunk,
    source_of,
)
from guard.offline.checks import ClaimResult
from guard.offline.judge import Decision, decide
from guard.offline.quality import (
    Checked,
    Judged,
    balanced_accuracy,
    cascade_with_oracle,
    cross_validated,
    fold_of,
    reliability,
    tallies,
)


def result(status: str, basis: str) -> ClaimResult:
    return ClaimResult("a claim", status, basis, "why")  # type: ignore[arg-type]


class TestConfidence:
    def test_a_basis_earns_the_lower_bound_of_its_accuracy(self) -> None:
        table = Calibration({"fail:number_contradicted": Tally(90, 100)})
        assert table.confidence("fail:number_contradicted") == pytest.approx(
            lower_bound(Tally(91, 102)),
            abs=1e-3,  # one right and one wrong pseudo-answer
        )
        assert 0.82 < table.confidence("fail:number_contradicted") < 0.86

    @pytest.mark.parametrize(
        ("correct", "total", "low", "high"),
        [
            (8, 8, 0.74, 0.76),
            (27, 27, 0.90, 0.92),
            (22, 24, 0.75, 0.78),
            (0, 5, 0.0, 0.01),
        ],
    )
    def test_the_wilson_lower_bound(
        self, correct: int, total: int, low: float, high: float
    ) -> None:
        assert low <= lower_bound(Tally(correct, total)) <= high

    def test_the_bound_rises_with_the_evidence(self) -> None:
        bounds = [lower_bound(Tally(n, n)) for n in (1, 5, 20, 100, 1000)]
        assert bounds == sorted(bounds)
        assert bounds[-1] < 1.0

    def test_a_basis_never_seen_is_a_coin_flip(self) -> None:
        assert Calibration({}).confidence("fail:anything") == UNSEEN

    def test_undecided_answers_are_never_confident(self) -> None:
        table = Calibration({"undecided:partial": Tally(1000, 1000)})
        assert table.confidence("undecided:partial") == UNDECIDED

    def test_the_worst_source_decides_once_it_has_enough_rows(self) -> None:
        good, bad = Tally(100, 100), Tally(MIN_SOURCE_ROWS, 2 * MIN_SOURCE_ROWS)
        table = Calibration.combine(
            {
                "copied-dev.jsonl": Calibration({"pass:aligned": good}),
                "paraphrased-dev.jsonl": Calibration({"pass:aligned": bad}),
            }
        )
        assert table.confidence("pass:aligned") == pytest.approx(lower_bound(shrunk(bad)), abs=1e-3)

    def test_a_rule_seen_enough_on_one_source_only_stays_below_the_threshold(self) -> None:
        """Perfect on one kind of data, a few rows on another: nothing shows the other kind
        agrees, so the rule never decides alone at the default threshold."""
        few = Calibration.combine(
            {
                "copied-dev.jsonl": Calibration({"pass:aligned": Tally(1000, 1000)}),
                "other-dev.jsonl": Calibration({"pass:aligned": Tally(1, 1)}),
            }
        )
        assert few.confidence("pass:aligned") == ONE_SOURCE_CAP < 0.8
        alone = Calibration.combine({"copied-dev.jsonl": Calibration({"x": Tally(9, 9)})})
        assert alone.confidence("pass:aligned") == 0.5  # never seen: a coin flip

    def test_sets_of_one_source_are_summed_before_bounding(self) -> None:
        """Two realistic sets of 4 right answers each: one source of 8 (enough rows), whose
        shrunk bound (9 of 10) decides, not the 192 right answers of the copied source."""
        table = Calibration.combine(
            {
                "halueval-qa-dev.jsonl": Calibration({"fail:x": Tally(192, 192)}),
                "realistic-dev.jsonl": Calibration({"fail:x": Tally(4, 4)}),
                "realistic-holdout.jsonl": Calibration({"fail:x": Tally(4, 4)}),
            }
        )
        assert set(table.sources) == {"halueval", "realistic"}
        assert table.confidence("fail:x") == pytest.approx(lower_bound(Tally(9, 10)), abs=1e-3)
        assert table.confidence("fail:x") < 0.7

    @pytest.mark.parametrize(
        ("name", "source"),
        [
            ("halueval-qa-dev.jsonl", "halueval"),
            ("realistic-holdout.jsonl", "realistic"),
            ("mine.jsonl", "mine"),
        ],
    )
    def test_a_set_s_source_is_its_name_up_to_the_first_dash(self, name: str, source: str) -> None:
        assert source_of(name) == source

    def test_the_prior_shrinks_small_counts_towards_a_coin_flip(self) -> None:
        assert shrunk(Tally(8, 8)) == Tally(9, 10)
        assert lower_bound(shrunk(Tally(8, 8))) < lower_bound(Tally(8, 8))
        # the more answers, the less the prior matters
        gap = [lower_bound(Tally(n, n)) - lower_bound(shrunk(Tally(n, n))) for n in (8, 80, 800)]
        assert gap == sorted(gap, reverse=True)

    def test_the_robust_bound_is_the_least_over_pooled_and_sources(self) -> None:
        pooled, a, b = Tally(200, 210), Tally(190, 195), Tally(10, 15)
        assert robust_bound(pooled, [a, b]) == lower_bound(shrunk(b))
        assert robust_bound(pooled, []) == lower_bound(shrunk(pooled))

    def test_the_table_round_trips_through_json(self) -> None:
        table = Calibration.combine(
            {"a": Calibration({"fail:x": Tally(3, 4)}), "b": Calibration({"fail:x": Tally(5, 9)})}
        )
        again = Calibration.from_json(json.loads(json.dumps(table.to_json())))
        assert again.confidence("fail:x") == table.confidence("fail:x")

    def test_the_bundled_table_loads_and_gives_probabilities(self) -> None:
        table = bundled()
        assert table.tallies
        assert all(0.0 <= table.confidence(b) <= 1.0 for b in table.tallies)


class TestDecision:
    TABLE = Calibration(
        {
            "fail:number_contradicted": Tally(95, 100),
            "fail:name_absent": Tally(70, 100),
            "pass:verbatim": Tally(99, 100),
            "pass:aligned": Tally(80, 100),
        }
    )

    def test_the_surest_contradiction_decides_a_fail(self) -> None:
        decision = decide(
            [
                result("contradicted", "name_absent"),
                result("contradicted", "number_contradicted"),
                result("supported", "verbatim"),
            ],
            self.TABLE,
        )
        assert (decision.label, decision.basis) == ("fail", "fail:number_contradicted")

    def test_a_proof_wrong_more_often_than_right_is_no_proof(self) -> None:
        table = Calibration({"pass:aligned": Tally(1, 30)})
        decision = decide([result("supported", "aligned")], table)
        assert (decision.label, decision.basis) == ("undecided", "undecided:unproven_aligned")

    def test_a_failure_by_a_rule_wrong_more_often_than_right_shows_nothing(self) -> None:
        table = Calibration({"fail:contrary": Tally(1, 3), "fail:name_absent": Tally(9, 10)})
        decision = decide([result("contradicted", "contrary")], table)
        assert decision.label == "undecided"
        assert decision.results[0].basis == "refuted_contrary"
        both = decide(
            [result("contradicted", "contrary"), result("contradicted", "name_absent")], table
        )
        assert (both.label, both.basis) == ("fail", "fail:name_absent")

    def test_the_least_sure_proof_decides_a_pass(self) -> None:
        decision = decide(
            [result("supported", "verbatim"), result("supported", "aligned")], self.TABLE
        )
        assert (decision.label, decision.basis) == ("pass", "pass:aligned")

    def test_one_unproven_claim_makes_the_answer_undecided(self) -> None:
        decision = decide(
            [result("supported", "verbatim"), result("undecided", "partial")], self.TABLE
        )
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


def checked(id_: str, category: str, hallucinated: bool, basis: str) -> Checked:
    status = "contradicted" if basis.startswith("fail:") else "supported"
    return Checked(id_, category, hallucinated, (result(status, basis.split(":", 1)[1]),), False)


class TestCrossValidation:
    def test_folds_are_categories_or_question_groups(self) -> None:
        assert (
            fold_of(checked("dev-paraphrase-04", "paraphrase", False, "pass:verbatim"), True)
            == "paraphrase"
        )
        right = checked("halueval-qa-17-0", "all", False, "pass:verbatim")
        wrong = checked("halueval-qa-17-1", "all", True, "fail:name_absent")
        assert fold_of(right, False) == fold_of(wrong, False) == "7"

    def test_a_rule_right_only_in_one_category_is_not_trusted_out_of_it(self) -> None:
        """A basis right in one category and wrong in another: in sample it looks half right
        everywhere; out of fold, each category is decided by the other's record."""
        rows = (
            [checked(f"a{n}", "good", True, "fail:x") for n in range(20)]
            + [checked(f"b{n}", "bad", False, "fail:x") for n in range(20)]
            + [checked(f"c{n}", "other", False, "pass:verbatim") for n in range(20)]
        )
        judged, table = cross_validated({"set": rows})
        by_id = {j.id: j for j in judged["set"]}
        assert by_id["b0"].decision.confidence > 0.8  # fitted on "good" alone: overconfident
        assert by_id["b0"].right is False
        # out of fold, "good" rows meet a rule refuted by "bad" (off: undecided), "bad" rows a
        # rule proven by "good" (wrong fails); the record counts every firing, so the rule is
        # half right: not bounded above a coin flip, so it only annotates
        assert by_id["a0"].decision.label == "undecided"
        assert table.tallies["fail:x"] == Tally(20, 40)
        assert table.confidence("fail:x") < 0.5
        assert table.status("fail:x") == "annotate"

    def test_the_cascade_from_decisions_asks_the_llm_below_the_threshold(self) -> None:
        rows = [judged(0.95, True), judged(0.5, False)]
        result = cascade_with_oracle(rows, 0.8)
        assert (result.sent_to_llm, result.balanced_accuracy) == (1, 1.0)


class TestStatus:
    """A rule decides only once its out-of-fold record bounds it above a coin flip."""

    @pytest.mark.parametrize(
        ("correct", "total", "status"),
        [
            (5, 5, "active"),
            (30, 32, "active"),
            (4, 4, "annotate"),
            (1, 1, "annotate"),
            (6, 10, "annotate"),
            (2, 5, "off"),
            (0, 3, "off"),
        ],
    )
    def test_the_status_follows_the_record(self, correct: int, total: int, status: str) -> None:
        assert Calibration({"fail:x": Tally(correct, total)}).status("fail:x") == status

    def test_a_rule_the_table_never_saw_only_annotates(self) -> None:
        assert Calibration({}).status("fail:brand_new") == "annotate"
        assert bundled().status("fail:brand_new") == "annotate"

    def test_an_annotating_rule_reports_its_finding_and_decides_nothing(self) -> None:
        table = Calibration({"fail:x": Tally(3, 3)})
        decision = decide([result("contradicted", "x"), result("supported", "verbatim")], table)
        assert decision.label == "undecided"
        assert decision.basis == "undecided:unproven_x"
        found = decision.results[0]
        assert found.status == "undecided"
        assert found.basis == "unproven_x"
        assert found.reason.startswith("why (a rule too few labelled answers vouch for")
        everyone = decide([result("contradicted", "x")], table, vetted=False)
        assert everyone.label == "fail"
        assert everyone.basis == "fail:x"

    def test_an_active_rule_decides_beside_an_annotating_one(self) -> None:
        table = Calibration({"fail:x": Tally(3, 3), "fail:y": Tally(20, 20)})
        decision = decide([result("contradicted", "x"), result("contradicted", "y")], table)
        assert (decision.label, decision.basis) == ("fail", "fail:y")
        assert [r.basis for r in decision.results] == ["unproven_x", "y"]

    def test_an_off_rule_is_dropped_with_its_reason(self) -> None:
        table = Calibration({"fail:x": Tally(1, 6)})
        decision = decide([result("contradicted", "x")], table)
        assert decision.label == "undecided"
        assert decision.results[0].basis == "refuted_x"
        assert "more often wrong than right" in decision.results[0].reason

    def test_a_case_of_a_merged_rule_counts_under_it(self) -> None:
        table = Calibration({"fail:time_contradicted": Tally(20, 20)})
        decision = decide([result("contradicted", "weekday_contradicted")], table)
        assert (decision.label, decision.basis) == ("fail", "fail:time_contradicted")
        assert decision.results[0].basis == "weekday_contradicted"  # the finding keeps its name

    def test_an_annotating_rule_gathers_the_record_that_makes_it_active(self) -> None:
        """The record counts every firing, status aside: a new rule right on 12 answers of
        two sources is active in the table they earn."""
        sets = {
            name: [checked(f"{name}{n}", "all", True, "fail:fresh") for n in range(6)]
            + [checked(f"{name}p{n}", "all", False, "pass:short_answer") for n in range(6)]
            for name in ("alpha-dev", "beta-dev")
        }
        _, table = cross_validated(sets)
        assert table.tallies["fail:fresh"] == Tally(12, 12)
        assert table.status("fail:fresh") == "active"
