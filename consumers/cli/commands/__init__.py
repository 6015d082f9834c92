"""Sub-commands of ``groundguard``; see :mod:`consumers.cli`."""
