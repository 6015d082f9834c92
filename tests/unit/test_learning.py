"""The learning cascade: the bound, the audit share, withdrawal, label precedence, state."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.decide.assessment import Scale5Assessment
from guard.errors import ConfigError
from guard.learning import state
from guard.learning.build import make_learner
from guard.learning.learner import SEED_CAP, Learner, audit_pick, bucket, wilson_lower
from guard.learning.ledger import Count, Key, Ledger
from guard.learning.settings import CascadeSettings
from guard.models import JudgeRequest
from guard.providers.base import JudgeOutcome
from guard.testing import FakeJudge
from guard.tiers.cascade import CascadeJudge, Tier

CONTEXT = "Our return policy allows returns within 30 days."
PASS_KEY = Key("det", "rule", "pass")


def learner(**fields: object) -> Learner:
    settings = CascadeSettings.model_validate({"learn": True, "min_count": 10, **fields})
    return Learner(settings, Ledger("replica-a"))


def teach(learn: Learner, key: Key, agree: int, disagree: int, prefix: str = "r") -> None:
    for n in range(agree + disagree):
        label = key.direction if n < agree else ("fail" if key.direction == "pass" else "pass")
        learn.observe(f"{prefix}{n}", [key], label)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the bound


@pytest.mark.parametrize(
    ("agree", "total", "low", "high"),
    [(52, 52, 0.950, 0.951), (100, 100, 0.973, 0.974), (95, 100, 0.900, 0.901), (0, 0, 0, 0)],
)
def test_the_wilson_lower_bound(agree: int, total: int, low: float, high: float) -> None:
    assert low <= wilson_lower(Count(agree, total)) <= high


def test_a_basis_decides_only_with_enough_labels_and_a_high_enough_bound() -> None:
    learn = learner(min_count=60)
    teach(learn, PASS_KEY, 55, 0)
    assert wilson_lower(learn.ledger.count(PASS_KEY)) >= 0.95
    assert not learn.trusted(PASS_KEY)  # 55 < min_count
    teach(learn, PASS_KEY, 5, 0, prefix="s")
    assert learn.trusted(PASS_KEY)
    other = learner(min_count=10)
    teach(other, PASS_KEY, 45, 3)  # 0.9375 agreement: a bound below 0.95
    assert not other.trusted(PASS_KEY)


def test_a_basis_whose_bound_falls_is_withdrawn_at_once() -> None:
    learn = learner()
    teach(learn, PASS_KEY, 80, 0)
    assert learn.trusted(PASS_KEY)
    teach(learn, PASS_KEY, 0, 3, prefix="w")
    assert learn.ledger.count(PASS_KEY) == Count(80, 83)
    assert not learn.trusted(PASS_KEY)


def test_the_audit_share_is_stable_and_near_its_setting() -> None:
    ids = [f"req-{n}" for n in range(20_000)]
    picked = [i for i in ids if audit_pick(i, 0.05)]
    assert picked == [i for i in ids if audit_pick(i, 0.05)]  # the same ids every time
    assert 0.045 < len(picked) / len(ids) < 0.055
    assert not any(audit_pick(i, 0.0) for i in ids[:1000])
    assert all(audit_pick(i, 1.0) for i in ids[:1000])


def test_buckets_cover_zero_to_one() -> None:
    assert [bucket(p) for p in (0.0, 0.05, 0.5, 0.94, 0.99, 1.0)] == [
        "p0.0",
        "p0.0",
        "p0.5",
        "p0.9",
        "p0.9",
        "p0.9",
    ]


# --------------------------------------------------------------------------- labels


def test_a_reviewers_label_replaces_the_llms_and_outweighs_it() -> None:
    learn = learner(reviewer_weight=10)
    learn.observe("m1", [PASS_KEY], "pass")
    assert learn.ledger.count(PASS_KEY) == Count(1, 1)
    assert learn.relabel("m1", "fail")
    assert learn.ledger.count(PASS_KEY) == Count(0, 10)  # the LLM's label taken back
    assert learn.relabel("m1", "pass")  # a reviewer changing their mind replaces their own
    assert learn.ledger.count(PASS_KEY) == Count(10, 10)


def test_a_reviewer_contradicting_the_llm_withdraws_the_basis_it_disproves() -> None:
    learn = learner()
    teach(learn, PASS_KEY, 70, 0)
    assert learn.trusted(PASS_KEY)
    assert learn.relabel("r3", "fail")
    assert not learn.trusted(PASS_KEY)


def test_a_label_of_a_locally_decided_message_counts_too() -> None:
    learn = learner()
    learn.observe("m1", [PASS_KEY], None)
    assert learn.ledger.count(PASS_KEY) == Count(0, 0)
    learn.relabel("m1", "pass")
    assert learn.ledger.count(PASS_KEY) == Count(10, 10)


def test_a_label_for_an_unknown_request_is_counted_and_changes_nothing() -> None:
    learn = learner()
    assert learn.relabel("never-seen", "fail") is False
    assert (learn.unmatched_labels, learn.labels) == (1, 1)
    assert list(learn.ledger.all_keys()) == []


def test_recent_messages_are_bounded() -> None:
    learn = learner(max_recent=3)
    for n in range(5):
        learn.observe(f"m{n}", [PASS_KEY], "pass")
    assert list(learn.recent) == ["m2", "m3", "m4"]
    assert learn.relabel("m0", "fail") is False


# --------------------------------------------------------------------------- ledger and state


def test_counts_sum_over_the_seed_this_replica_and_its_peers() -> None:
    ledger = Ledger("a")
    ledger.seed[PASS_KEY] = Count(3, 4)
    ledger.add(PASS_KEY, 1, 1)
    ledger.put("b", PASS_KEY, Count(5, 5))
    ledger.put("b", PASS_KEY, Count(6, 7))  # a peer's latest value replaces its earlier one
    assert ledger.count(PASS_KEY) == Count(10, 12)
    assert ledger.take_dirty() == [(PASS_KEY, Count(1, 1))]
    assert ledger.take_dirty() == []


def test_a_replicas_own_counts_read_back_after_a_restart_are_kept_when_ahead() -> None:
    ledger = Ledger("a")
    ledger.put("a", PASS_KEY, Count(40, 41))
    assert ledger.own[PASS_KEY] == Count(40, 41)
    ledger.add(PASS_KEY, 1, 1)
    ledger.put("a", PASS_KEY, Count(40, 41))  # an older record of its own: behind, ignored
    assert ledger.own[PASS_KEY] == Count(41, 42)


def test_the_ledger_is_bounded_and_says_how_much_it_left_out() -> None:
    ledger = Ledger("a", max_keys=2)
    for n in range(4):
        ledger.add(Key("t", f"b{n}", "pass"), 1, 1)
    ledger.put("peer", Key("t", "x", "fail"), Count(1, 1))
    ledger.put("peer", Key("t", "y", "fail"), Count(1, 1))
    ledger.put("peer", Key("t", "z", "fail"), Count(1, 1))
    assert len(ledger.own) == 2
    assert ledger.overflow == 3


def test_the_state_file_round_trips_and_a_bad_line_names_itself(tmp_path: Path) -> None:
    ledger = Ledger("a")
    ledger.add(PASS_KEY, 3, 4)
    ledger.put("b", Key("offline", "fail:name_absent", "fail"), Count(9, 9))
    path = tmp_path / "calibration.jsonl"
    state.save(path, ledger)
    again = Ledger("a")
    assert state.load(path, again) == 2
    assert again.count(PASS_KEY) == Count(3, 4)
    assert again.peers["b"] == {Key("offline", "fail:name_absent", "fail"): Count(9, 9)}
    path.write_text(path.read_text() + '{"origin": "c", "tier": "t"}\n')
    with pytest.raises(ConfigError, match="line 3"):
        state.load(path, Ledger("a"))


@pytest.mark.parametrize(
    "record",
    [
        [],
        {"origin": "", "tier": "t", "basis": "b", "direction": "pass", "agree": 1, "total": 1},
        {"origin": "o", "tier": "t", "basis": "b", "direction": "maybe", "agree": 1, "total": 1},
        {"origin": "o", "tier": "t", "basis": "b", "direction": "pass", "agree": 2, "total": 1},
        {"origin": "o", "tier": "t", "basis": "b", "direction": "pass", "agree": True, "total": 1},
        {"origin": "o", "tier": "t", "basis": "b", "direction": "pass", "agree": 1, "total": 1e999},
    ],
)
def test_a_malformed_record_is_refused(record: object) -> None:
    with pytest.raises(ValueError, match=r"must be|is a JSON object"):
        state.from_record(record)


def test_the_learner_is_seeded_from_the_shipped_table_for_offline_tiers_capped() -> None:
    settings = JudgeSettings.model_validate(
        {"tiers": [{"kind": "offline"}, {"kind": "fake"}], "cascade": {"learn": True}}
    )
    learn = make_learner(settings)
    assert learn is not None
    assert learn.ledger.seed
    assert all(key.tier == "offline" for key in learn.ledger.seed)
    assert max(c.total for c in learn.ledger.seed.values()) <= SEED_CAP
    assert not any(learn.trusted(key) for key in learn.ledger.seed)  # a head start, no more
    empty = settings.model_copy(update={"cascade": CascadeSettings(learn=True, seed="empty")})
    learned = make_learner(empty)
    assert learned is not None
    assert not learned.ledger.seed


def test_learning_needs_a_screen_tier() -> None:
    settings = JudgeSettings.model_validate({"cascade": {"learn": True}})
    with pytest.raises(ConfigError, match="screen tier"):
        make_learner(settings)
    assert make_learner(JudgeSettings()) is None


# --------------------------------------------------------------------------- in the cascade


class Rule:
    """A screen reading every case as a pass on one basis."""

    provider = model = "rule"

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        assessment = Scale5Assessment(explanation="rule", claims=[], score=5)
        return JudgeOutcome(assessment, "rule", "rule", tier="offline", basis="rule")

    async def aclose(self) -> None:
        return None


LLM_PASS = Scale5Assessment(explanation="llm", claims=[], score=5)


async def judge(guard: Guard, n: int) -> list[str | None]:
    names = []
    for i in range(n):
        request = JudgeRequest(id=f"m{i}", output="Returns within 30 days.", context=CONTEXT)
        names.append((await guard.judge(request)).judge.tier_name)
    return names


async def test_the_llm_teaches_the_screen_until_it_decides_and_an_audit_keeps_measuring() -> None:
    learn = learner(min_count=10, audit_share=0.1)
    llm = FakeJudge([LLM_PASS])
    cascade = CascadeJudge([Tier("det", "offline", Rule())], Tier("llm", "llm", llm), learner=learn)
    guard = Guard(cascade, JudgeSettings())
    names = await judge(guard, 200)
    first_local = names.index("det")
    assert first_local >= 52  # all agreeing: the bound reaches 0.95 after 52 labels
    later = names[first_local:]
    audited = [n for n in later if n == "llm"]
    assert 0 < len(audited) < len(later) * 0.25
    verdict = await guard.judge(JudgeRequest(id="m5", output="Returns.", context=CONTEXT))
    reading = verdict.judge.tiers[0]
    assert (reading.basis, reading.decided or reading.audited) == ("rule", True)
    assert reading.bound is not None
    assert reading.bound >= 0.95


async def test_an_llm_that_disagrees_keeps_the_screen_from_ever_deciding() -> None:
    learn = learner(min_count=5)
    llm = FakeJudge([Scale5Assessment(explanation="llm", claims=[], score=1)])
    cascade = CascadeJudge([Tier("det", "offline", Rule())], Tier("llm", "llm", llm), learner=learn)
    names = await judge(Guard(cascade, JudgeSettings()), 100)
    assert set(names) == {"llm"}
    assert learn.ledger.count(Key("det", "rule", "pass")) == Count(0, 100)


async def test_the_offline_tier_reads_its_rule_as_the_basis_and_the_state_file_keeps_it(
    tmp_path: Path,
) -> None:
    from guard.assembly import build_guard

    path = tmp_path / "calibration.jsonl"
    settings = JudgeSettings.model_validate(
        {
            "tiers": [{"kind": "offline"}, {"kind": "fake"}],
            "cascade": {"learn": True, "state_file": str(path)},
        }
    )
    guard = build_guard(settings, {})
    verdict = await guard.judge(
        JudgeRequest(output="You can return items within 90 days.", context=CONTEXT)
    )
    first = verdict.judge.tiers[0]
    assert first.name == "offline"
    assert first.basis is not None
    assert first.basis.startswith("fail:")
    assert verdict.judge.tier_name == "fake"  # nothing is trusted yet: the last tier judged
    await guard.aclose()
    again = make_learner(settings)
    assert again is not None
    key = Key("offline", first.basis, "fail")
    assert again.ledger.own[key].total == 1  # the fake's label, read back from the file


# --------------------------------------------------------------------------- seeing it


def test_groundguard_calibration_prints_the_table_from_a_state_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from consumers.cli.main import main

    ledger = Ledger("replica-a")
    key = Key("offline", "fail:name_absent", "fail")
    ledger.put("replica-b", key, Count(80, 80))
    path = tmp_path / "state.jsonl"
    state.save(path, ledger)
    monkeypatch.setenv("GROUNDGUARD_JUDGE__TIERS", '[{"kind": "offline"}, {"kind": "fake"}]')
    monkeypatch.setenv("GROUNDGUARD_JUDGE__CASCADE__SEED", "empty")
    assert main(["calibration", "--file", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["tier", "basis", "direction", "count", "agreement", "bound", "local"]
    assert out[1].split() == ["offline", "fail:name_absent", "fail", "80", "1.000", "0.967", "yes"]
    assert main(["calibration", "--file", str(path), "--json"]) == 0
    row = capsys.readouterr().out.splitlines()[0]
    assert '"local": true' in row


def test_metrics_export_each_tiers_agreement_bases_and_labels() -> None:
    from consumers.metrics import Metrics

    learn = learner()
    teach(learn, PASS_KEY, 60, 0)
    teach(learn, Key("det", "other", "fail"), 3, 1, prefix="o")
    learn.relabel("never", "fail")
    text = Metrics(learner=learn).render().decode()
    assert 'groundguard_learning_agreement{direction="pass",tier="det"} 1.0' in text
    assert 'groundguard_learning_agreement{direction="fail",tier="det"} 0.75' in text
    assert 'groundguard_learning_bases{state="local",tier="det"} 1.0' in text
    assert 'groundguard_learning_bases{state="measuring",tier="det"} 1.0' in text
    assert 'groundguard_labels_total{outcome="unknown"} 1.0' in text
