"""The offline judge: deterministic claim checks against the evidence, no network, no model."""

from guard.offline.judge import OFFLINE_MODEL, OfflineJudge

__all__ = ["OFFLINE_MODEL", "OfflineJudge"]
