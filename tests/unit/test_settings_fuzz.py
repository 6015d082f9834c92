"""Any value given to any setting, from a file or the environment, either loads or is refused
with a :class:`SettingsError` naming a setting: never another exception (an OverflowError from
``concurrency: .inf`` used to escape the loader)."""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from consumers.config import load_settings
from consumers.errors import SettingsError
from consumers.settings import ENV_PREFIX, ServiceSettings


def _paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    """The dotted path of every setting (sections included) of ``model``."""
    found = []
    for name, field in model.model_fields.items():
        found.append(prefix + name)
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            found += _paths(field.annotation, f"{prefix}{name}.")
    return found


PATHS = _paths(ServiceSettings)
# a field the error may name besides the one given: the file itself, the top of the settings
NAMED = {*PATHS, "config", "settings", "environment"}

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 10**20, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([float("inf"), float("-inf"), float("nan"), 1e300, -0.0, 5e-324]),
    st.text(max_size=20),
    st.sampled_from(["", " ", "\x00", "é", "日本", "\u202e", "a" * 300, "true", "1e999"]),
    st.lists(st.integers() | st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=2),
)
assignments = st.lists(st.tuples(st.sampled_from(PATHS), values), min_size=1, max_size=4)


def _nested(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for path, value in pairs:
        *sections, name = path.split(".")
        place = data
        for section in sections:
            if not isinstance(place.get(section), dict):
                place[section] = {}
            place = place[section]
        place[name] = value
    return data


def _names_a_setting(field: str) -> bool:
    """A setting, or an item of one (``reply.allowed_prefixes.0``), or an env var's name."""
    parts = field.split(".")
    prefixes = {".".join(parts[:n]) for n in range(1, len(parts) + 1)}
    return bool(prefixes & NAMED) or field.startswith(ENV_PREFIX)


def _load(path: Path | None, environ: dict[str, str]) -> ServiceSettings | SettingsError:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # judge.budget.max_in_flight: deprecated
        try:
            return load_settings(path, environ)
        except SettingsError as exc:
            return exc


def _loads_or_names_a_setting(path: Path | None, environ: dict[str, str]) -> None:
    outcome = _load(path, environ)
    if isinstance(outcome, SettingsError):
        assert _names_a_setting(outcome.field), outcome
    else:
        assert isinstance(outcome, ServiceSettings)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=assignments)
def test_any_value_in_a_settings_file_loads_or_is_refused_naming_the_setting(
    pairs: list[tuple[str, Any]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "groundguard.json"
        path.write_text(json.dumps(_nested(pairs)), encoding="utf-8")  # Infinity, NaN as JSON
        _loads_or_names_a_setting(path, {})


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.sampled_from(PATHS), st.text(max_size=20) | values.map(json.dumps)),
        min_size=1,
        max_size=4,
    )
)
def test_any_environment_value_loads_or_is_refused_naming_the_setting(
    pairs: list[tuple[str, str]],
) -> None:
    environ = {
        ENV_PREFIX + path.upper().replace(".", "__"): value.replace("\x00", "")
        for path, value in pairs
    }
    _loads_or_names_a_setting(None, environ)


HOSTILE = [None, True, -1, 10**400, float("inf"), float("nan"), 1e300, "", "é\x00\u202e"]
HOSTILE += ["a" * 300, [None], {"x": 1}]


def test_every_setting_takes_every_hostile_value_cleanly(tmp_path: Path) -> None:
    """Each setting, one at a time, given each value of HOSTILE (wrong types, huge, negative,
    inf/nan, empty, unicode): hypothesis above combines them at random, this sweeps them all."""
    path = tmp_path / "groundguard.json"
    unclean = []
    for setting in PATHS:
        for value in HOSTILE:
            path.write_text(json.dumps(_nested([(setting, value)])), encoding="utf-8")
            try:
                _loads_or_names_a_setting(path, {})
            except Exception as exc:  # collected, so that one run names them all
                unclean.append(f"{setting}={value!r:.40}: {type(exc).__name__}")
    assert unclean == [], "\n".join(unclean)
