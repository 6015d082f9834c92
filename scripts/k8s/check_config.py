"""Load the settings file a rendered chart puts in its ConfigMap with the service's own loader.

Catches drift between the chart's ``config`` values and :class:`consumers.settings.ServiceSettings`
(unknown keys, bad values). The Deployment's environment is applied as the pod would see it:
variables the chart takes from Secrets get placeholder values (only those the chart really
injects, e.g. SASL credentials only with ``secrets.kafkaSasl``), and the TLS files it mounts are
stood in by empty files in a temporary directory. Reads the rendered
manifests on stdin; exit 1 when the settings do not load.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from consumers.config import load_settings
from consumers.errors import SettingsError

TLS_DIR = "/etc/groundguard/tls"


def config_text(docs: list[dict[str, Any]]) -> str:
    for doc in docs:
        if doc.get("kind") == "ConfigMap" and "config.yaml" in doc.get("data", {}):
            return str(doc["data"]["config.yaml"])
    raise SystemExit("no ConfigMap with config.yaml in the rendered chart")


def pod_environ(docs: list[dict[str, Any]]) -> dict[str, str]:
    """The GROUNDGUARD_ variables of the Deployment's (or StatefulSet's) container; Secret values as placeholders
    (values from the pod's own fields, such as the instance id, are left to their defaults)."""
    environ: dict[str, str] = {}
    for doc in docs:
        if doc.get("kind") not in ("Deployment", "StatefulSet"):  # StatefulSet: static membership
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            for var in container.get("env") or []:
                if "value" in var:
                    environ[var["name"]] = str(var["value"])
                elif "secretKeyRef" in (var.get("valueFrom") or {}):
                    environ[var["name"]] = "placeholder"
    return environ


def main() -> int:
    label = sys.argv[1] if len(sys.argv) > 1 else "stdin"
    docs = [doc for doc in yaml.safe_load_all(sys.stdin.read()) if doc]
    text = config_text(docs)
    environ = pod_environ(docs)
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("ca.crt", "tls.crt", "tls.key"):
            (Path(tmp) / name).write_text("", encoding="utf-8")
        path = Path(tmp) / "config.yaml"
        path.write_text(text.replace(TLS_DIR, tmp), encoding="utf-8")
        try:
            load_settings(path, environ)
        except SettingsError as exc:
            print(f"  INVALID {label}: the chart's settings file does not load: {exc}",
                  file=sys.stderr)
            return 1
    print(f"  {label}: settings file loads as ServiceSettings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
