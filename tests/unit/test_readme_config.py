"""The service configuration shown in README.md is a valid settings file."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from consumers.config import load_settings
from consumers.settings import Guarantee
from guard.settings import JudgeSettings

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_service_config_loads(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(
        (b for b in re.finditer(r"```yaml\n(.*?)```", readme, re.DOTALL)
         if "bootstrap_servers" in b.group(1)),
        None,
    )  # fmt: skip
    assert block is not None, "README.md has no ```yaml service settings example"
    ca = tmp_path / "ca.pem"
    ca.write_text("not read by load_settings")
    config = tmp_path / "groundguard.yaml"
    config.write_text(block.group(1).replace("/etc/kafka/ca.pem", str(ca)), encoding="utf-8")
    settings = load_settings(config, {"GROUNDGUARD_SECURITY__SASL_PASSWORD": "s3cret"})
    assert settings.guarantee is Guarantee.AT_LEAST_ONCE
    assert settings.judge.budget.rpm == 500
    assert settings.security.sasl_password is not None
    assert settings.security.sasl_password.get_secret_value() == "s3cret"


def test_every_judge_tiers_example_in_the_readme_is_valid_judge_settings() -> None:
    """Each document of a README yaml block that gives ``tiers`` (or a ``judge:`` with them)
    validates as the judge section, and names the kinds it shows."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = []
    for block in re.finditer(r"```yaml\n(.*?)```", readme, re.DOTALL):
        for document in yaml.safe_load_all(block.group(1)):
            if not isinstance(document, dict):
                continue
            judge = document.get("judge", document)
            if not isinstance(judge, dict) or "tiers" not in judge:
                continue
            settings = JudgeSettings.model_validate(judge)
            shown += [tier.kind for tier in settings.tier_list()]
            if "backend" in str(judge):
                shown += [str(t.get("backend")) for t in judge["tiers"] if "backend" in t]
    for kind in ("offline", "detector", "specialist", "openai", "anthropic"):
        assert kind in shown, kind
    for backend in ("onnx", "tei", "vllm_score", "vllm_classify", "vllm_pooling"):
        assert backend in shown, backend
