"""Load the settings file a rendered chart puts in its ConfigMap with the service's own loader.

Catches drift between the chart's ``config`` values and :class:`consumers.settings.ServiceSettings`
(unknown keys, bad values). Secrets the chart injects from Secrets get placeholder values, and
the TLS files it mounts are stood in by empty files in a temporary directory. Reads the rendered
manifests on stdin; exit 1 when the settings do not load.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import yaml

from consumers.errors import SettingsError
from consumers.settings import load_settings

TLS_DIR = "/etc/groundguard/tls"


def config_text(manifests: str) -> str:
    for doc in yaml.safe_load_all(manifests):
        if doc and doc.get("kind") == "ConfigMap" and "config.yaml" in doc.get("data", {}):
            return str(doc["data"]["config.yaml"])
    raise SystemExit("no ConfigMap with config.yaml in the rendered chart")


def main() -> int:
    label = sys.argv[1] if len(sys.argv) > 1 else "stdin"
    text = config_text(sys.stdin.read())
    environ = {"GROUNDGUARD_SECURITY__SASL_USERNAME": "placeholder",
               "GROUNDGUARD_SECURITY__SASL_PASSWORD": "placeholder",
               "GROUNDGUARD_JUDGE__API_KEY": "placeholder"}
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
