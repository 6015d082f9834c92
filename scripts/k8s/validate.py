"""Validate rendered Kubernetes manifests (multi-document YAML on stdin or in files).

Built-in kinds are checked against the Kubernetes OpenAPI schemas shipped offline by the
``kubernetes-validate`` package (strict: unknown fields are errors); the CRDs the chart renders
(ServiceMonitor, PrometheusRule, ScaledObject) against the small schemas beside this file. Any
other kind is an error, so nothing passes unchecked. Exit status 1 on any problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml

HERE = Path(__file__).resolve().parent
CRD_SCHEMAS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"): HERE / "servicemonitor.schema.json",
    ("monitoring.coreos.com/v1", "PrometheusRule"): HERE / "prometheusrule.schema.json",
    ("keda.sh/v1alpha1", "ScaledObject"): HERE / "scaledobject.schema.json",
}


def _check_crd(doc: dict[str, Any], schema_path: Path) -> list[str]:
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(doc)]


def _check_builtin(doc: dict[str, Any], version: str) -> list[str]:
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return [f"{'/'.join(map(str, exc.path))}: {exc.message}"]
    except kubernetes_validate.SchemaNotFoundError as exc:
        return [f"no Kubernetes schema for this kind: {exc}"]
    return []


def check(text: str, source: str, version: str) -> tuple[int, list[str]]:
    problems: list[str] = []
    count = 0
    for doc in yaml.safe_load_all(text):
        if not doc:
            continue
        count += 1
        ident = f"{source}: {doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
        crd = CRD_SCHEMAS.get((doc.get("apiVersion"), doc.get("kind")))
        errors = _check_crd(doc, crd) if crd else _check_builtin(doc, version)
        problems.extend(f"{ident}: {e}" for e in errors)
    return count, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="manifests (default: stdin)")
    parser.add_argument("--kubernetes-version", default="1.31.0")
    parser.add_argument("--label", default="stdin", help="name for stdin in messages")
    args = parser.parse_args()
    inputs = [(str(f), f.read_text(encoding="utf-8")) for f in args.files] or \
        [(args.label, sys.stdin.read())]
    total, problems = 0, []
    for source, text in inputs:
        count, found = check(text, source, args.kubernetes_version)
        total += count
        problems.extend(found)
    for problem in problems:
        print(f"  INVALID {problem}", file=sys.stderr)
    print(f"  {total} manifests checked against Kubernetes {args.kubernetes_version}, "
          f"{len(problems)} problems")
    return 1 if problems or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
