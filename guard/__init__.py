"""groundguard's judge core: decides whether an answer is grounded in its evidence.

It knows nothing of Kafka; :mod:`consumers` is the streaming runtime built on it.
"""
