"""Field maps put producers' own JSON shapes onto request fields."""

from __future__ import annotations

import pytest

from guard.errors import ConfigError
from guard.prepare.mapping import FieldMap

MESSAGE = {
    "response": {"text": "Returns within 30 days."},
    "retrieval": {"docs": [{"body": "Policy: 30 days."}, {"body": "FAQ."}]},
    "a/b": {"m~n": "escaped"},
    "trace_id": "t-1",
    "metadata": {"team": "support"},
}


def test_json_pointer_reaches_nested_values_and_list_items() -> None:
    fields = FieldMap({"output": "/response/text", "context": "/retrieval/docs/0/body"}).apply(
        MESSAGE
    )
    assert fields["output"] == "Returns within 30 days."
    assert fields["context"] == "Policy: 30 days."


def test_dotted_path_reaches_nested_values_and_list_items() -> None:
    fields = FieldMap({"output": "response.text", "context": "retrieval.docs.1.body"}).apply(
        MESSAGE
    )
    assert fields["output"] == "Returns within 30 days."
    assert fields["context"] == "FAQ."


def test_pointer_escapes_follow_rfc_6901() -> None:
    fields = FieldMap({"output": "/a~1b/m~0n"}).apply(MESSAGE)
    assert fields["output"] == "escaped"


def test_unmapped_fields_pass_through() -> None:
    fields = FieldMap({"output": "/response/text", "id": "trace_id"}).apply(MESSAGE)
    assert fields["metadata"] == {"team": "support"}
    assert fields["id"] == "t-1"


def test_a_missing_path_leaves_the_field_absent() -> None:
    message = {"output": "top-level output that must not be used", "response": {}}
    fields = FieldMap({"output": "/response/text"}).apply(message)
    assert "output" not in fields


@pytest.mark.parametrize(
    "path",
    [
        "/retrieval/docs/5/body",
        "/retrieval/docs/01/body",
        "/retrieval/docs/-/body",
        "/response/text/deeper",
        "retrieval.docs.x",
    ],
)
def test_paths_that_lead_nowhere_are_missing(path: str) -> None:
    assert "context" not in FieldMap({"context": path}).apply(MESSAGE)


def test_mapping_expected_output_replaces_both_spellings() -> None:
    message = {"expectedOutput": "stale", "ref": {"answer": "Paris."}}
    fields = FieldMap({"expected_output": "ref.answer"}).apply(message)
    assert fields["expected_output"] == "Paris."
    assert "expectedOutput" not in fields


def test_an_empty_map_changes_nothing() -> None:
    assert FieldMap({}).apply(MESSAGE) == MESSAGE


@pytest.mark.parametrize("path", ["/a/~2b", "/a/~", "a..b", ".a", "a.", ""])
def test_invalid_paths_are_config_errors_at_construction(path: str) -> None:
    with pytest.raises(ConfigError) as info:
        FieldMap({"output": path})
    assert info.value.field == "field_map.output"


def test_mapping_an_unknown_request_field_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a request field"):
        FieldMap({"answer": "/response/text"})
