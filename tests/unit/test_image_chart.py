"""The chart deploys the image ``scripts/image`` builds (issue 31), and an image or a CI run
built without the native word search refuses to start when it says it needs it."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from consumers.cli.main import main
from guard import assembly
from guard.errors import ConfigError
from guard.prepare import wordsearch
from guard.settings import JudgeSettings, Provider

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "groundguard"


def test_the_charts_default_image_is_the_one_scripts_image_builds() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    built = subprocess.run(
        [str(ROOT / "scripts" / "image"), "--name"],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "GROUNDGUARD_IMAGE"},
    ).stdout.strip()
    tag = values["image"]["tag"] or chart["appVersion"]  # the chart's rule (_helpers.tpl)
    assert built == f"{values['image']['repository']}:{tag}"
    assert tag == project["project"]["version"]


def test_the_image_runs_as_the_chart_expects() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    final = dockerfile.rsplit("\nFROM ", 1)[1]  # the runtime stage
    assert "USER 10001:10001" in final  # the chart's runAsNonRoot needs a numeric user
    assert "GROUNDGUARD_REQUIRE_NATIVE=1" in final
    assert 'ENTRYPOINT ["groundguard", "run"]' in final


def test_a_required_native_word_search_that_is_missing_is_a_bad_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(wordsearch, "NATIVE", False)
    with pytest.raises(ConfigError) as caught:
        assembly.build_guard(
            JudgeSettings(provider=Provider.OFFLINE), {"GROUNDGUARD_REQUIRE_NATIVE": "1"}
        )
    assert caught.value.field == "GROUNDGUARD_REQUIRE_NATIVE"
    assert "groundguard-native" in caught.value.fix
    assembly.build_guard(JudgeSettings(provider=Provider.OFFLINE), {})  # not asked: the trie
    monkeypatch.setenv("GROUNDGUARD_REQUIRE_NATIVE", "1")
    monkeypatch.setenv("GROUNDGUARD_JUDGE__PROVIDER", "offline")
    for command in ("run", "serve"):
        assert main([command]) == 2
        assert "GROUNDGUARD_REQUIRE_NATIVE" in capsys.readouterr().err
