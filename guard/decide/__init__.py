"""Deciding: from what a judge answers to the verdict the guard publishes.

* :mod:`~guard.decide.assessment`: the strict structured answer every judge returns.
* :mod:`~guard.decide.scoring`: an assessment as a score and a label.
* :mod:`~guard.decide.quotes`: the evidence quotes a judge cites, checked against the evidence.
* :mod:`~guard.decide.policies`: verdicts over several windows of one output; the injection policy.
"""
