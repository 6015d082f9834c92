"""The learner the settings ask for (None when ``judge.cascade.learn`` is off)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from guard.errors import ConfigError
from guard.learning import state
from guard.learning.learner import Learner, seed_offline
from guard.learning.ledger import Ledger

if TYPE_CHECKING:
    from guard.settings import JudgeSettings


def make_learner(settings: JudgeSettings, origin: str = "local") -> Learner | None:
    """The learner of ``settings`` for the writer ``origin`` (the replica's instance id): seeded
    with the shipped table for its offline tiers, and its ``state_file`` read when it exists."""
    cascade = settings.cascade
    if not cascade.learn:
        return None
    tiers = settings.tier_list()
    if len(tiers) < 2:
        raise ConfigError(
            "judge.cascade.learn",
            "learning needs a screen tier before the last one; there is one tier",
            "give judge.tiers at least two tiers (e.g. offline, then openai)",
        )
    ledger = Ledger(origin, max_keys=cascade.max_bases)
    if cascade.seed == "shipped":
        from guard.offline.calibration import bundled

        table = bundled()
        tallies = {b: (t.correct, t.total) for b, t in table.tallies.items()}
        for tier in tiers[:-1]:
            if tier.kind == "offline":
                seed_offline(ledger, tier.tier_name, tallies)
    if cascade.state_file is not None:
        state.load(cascade.state_file, ledger)
    return Learner(cascade, ledger)
