"""Load the settings file a rendered chart puts in its ConfigMap with the service's own loader.

Catches drift between the chart's ``config`` values and :class:`consumers.settings.ServiceSettings`
(unknown keys, bad values). The Deployment's environment is applied as the pod would see it:
variables the chart takes from Secrets get placeholder values (only those the chart really
injects, e.g. SASL credentials only with ``secrets.kafkaSasl``), and the TLS files it mounts are
stood in by empty files in a temporary directory (serve's API key file by a file holding one
key). Every ConfigMap's settings are checked: run's and serve's. Reads the rendered
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
KEYS_DIR = "/etc/groundguard/api-keys"  # serve's API keys Secret


def config_texts(docs: list[dict[str, Any]]) -> dict[str, str]:
    """Every ConfigMap's config.yaml by ConfigMap name (run's and, when enabled, serve's)."""
    found = {
        str(doc["metadata"]["name"]): str(doc["data"]["config.yaml"])
        for doc in docs
        if doc.get("kind") == "ConfigMap" and "config.yaml" in doc.get("data", {})
    }
    if not found:
        raise SystemExit("no ConfigMap with config.yaml in the rendered chart")
    return found


def pod_environ(docs: list[dict[str, Any]]) -> dict[str, str]:
    """The GROUNDGUARD_ variables of the Deployment's (or StatefulSet's) container; Secret values
    as placeholders (values from the pod's own fields, such as the instance id, are left to their
    defaults)."""
    environ: dict[str, str] = {}
    for doc in docs:
        if doc.get("kind") not in ("Deployment", "StatefulSet"):  # StatefulSet: static membership
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            for var in container.get("env") or []:
                if "value" in var:
                    environ[var["name"]] = str(var["value"])
                elif "secretKeyRef" in (var.get("valueFrom") or {}):
                    environ[var["name"]] = _placeholder(var["name"])
    return environ


def _placeholder(name: str) -> str:
    """A stand-in for a Secret's value, in the form the setting checks (a URL for a URL)."""
    if name.endswith("REDIS_URL"):
        return "redis://placeholder:6379/0"
    return "placeholder"


def main() -> int:
    label = sys.argv[1] if len(sys.argv) > 1 else "stdin"
    docs = [doc for doc in yaml.safe_load_all(sys.stdin.read()) if doc]
    environ = pod_environ(docs)
    failed = 0
    for name, text in config_texts(docs).items():
        failed |= check_one(f"{label} {name}", text, environ)
    return failed


def check_one(label: str, text: str, environ: dict[str, str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("ca.crt", "tls.crt", "tls.key"):
            (Path(tmp) / name).write_text("", encoding="utf-8")
        keys = Path(tmp) / "api-keys"
        keys.mkdir()
        for name in ("api-keys", "keys"):
            (keys / name).write_text("k" * 32 + "\n", encoding="utf-8")
        path = Path(tmp) / "config.yaml"
        text = text.replace(KEYS_DIR, str(keys)).replace(TLS_DIR, tmp)
        path.write_text(text, encoding="utf-8")
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
