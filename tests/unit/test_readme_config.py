"""The service configuration shown in README.md is a valid settings file."""

from __future__ import annotations

import re
from pathlib import Path

from consumers.config import load_settings
from consumers.settings import Guarantee

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_service_config_loads(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", readme, re.DOTALL)
    assert block is not None, "README.md has no ```yaml settings example"
    ca = tmp_path / "ca.pem"
    ca.write_text("not read by load_settings")
    config = tmp_path / "groundguard.yaml"
    config.write_text(block.group(1).replace("/etc/kafka/ca.pem", str(ca)), encoding="utf-8")
    settings = load_settings(config, {"GROUNDGUARD_SECURITY__SASL_PASSWORD": "s3cret"})
    assert settings.guarantee is Guarantee.AT_LEAST_ONCE
    assert settings.judge.budget.rpm == 500
    assert settings.security.sasl_password is not None
    assert settings.security.sasl_password.get_secret_value() == "s3cret"
