"""Judges: one interface (:class:`guard.providers.base.Judge`), several providers."""
