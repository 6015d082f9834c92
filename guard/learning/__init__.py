"""The learning cascade: what the user's own traffic vouches for, the cheap tiers decide.

Every reading of a screen tier rests on a *basis* (the offline rule that decided, or a score
bucket of a detector or specialist: ``p0.9`` is a grounded probability in [0.9, 1.0)) and
reads a *direction* (pass or fail). When the last (LLM) tier judges a message, the screens'
readings of it were computed anyway: the LLM's label tells each whether it agreed
(:class:`~guard.learning.ledger.Ledger` counts them per tier, basis and direction). A person's
label outranks the LLM's (:meth:`~guard.learning.learner.Learner.relabel`).

A screen decides a basis locally only while the Wilson lower bound (one-sided, z = 1.645) of
its agreement reaches ``target_agreement`` with at least ``min_count`` labels; a share of such
messages (``audit_share``) still goes on to the LLM so the count keeps measuring, and a basis
whose bound falls below the target stops deciding at the next message. The shipped offline
calibration table is only the starting state, each basis weighing at most ``SEED_CAP`` labels.
"""
