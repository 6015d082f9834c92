"""Print the rule groups of every PrometheusRule in rendered manifests (stdin) as a Prometheus
rule file (``groups: [...]``), for ``promtool check rules`` and ``promtool test rules``.

Exit status 1 when the manifests hold no PrometheusRule.
"""

from __future__ import annotations

import sys

import yaml


def main() -> int:
    groups = [
        group
        for doc in yaml.safe_load_all(sys.stdin.read())
        if doc and doc.get("kind") == "PrometheusRule"
        for group in doc["spec"]["groups"]
    ]
    if not groups:
        print("no PrometheusRule in the manifests", file=sys.stderr)
        return 1
    yaml.safe_dump({"groups": groups}, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
