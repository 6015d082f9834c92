"""Preparing a request for a judge: every step between a parsed request and the case a judge
reads. Used by :mod:`guard.engine` only.

* :mod:`~guard.prepare.mapping`: producers' own JSON shapes onto request fields.
* :mod:`~guard.prepare.sanitize`: remove invisible or dangerous characters, keep the meaning.
* :mod:`~guard.prepare.truncate`: cut at sentence boundaries, recording what was cut.
* :mod:`~guard.prepare.excerpt`: the parts of a long evidence text that matter to the claims.
* :mod:`~guard.prepare.evidence`: the grounding source (context or messages) as evidence text.
* :mod:`~guard.prepare.injection`: fences the judged text cannot forge, and injection detection.
"""
