"""Exports carry the verify outcome in the document, and the JSON export has a published schema."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from jsonschema import ValidationError

from tests.conftest import EXAMPLES
from tests.export_schema import schema_path, validate_export, validator
from tests.helpers import builtin_kinds
from tui.cli import main
from tui.exitcodes import ExitCode
from tui.render.export import EXPORT_SCHEMA


def _run(example: str, out: Path) -> Path:
    main(["run", str(EXAMPLES / example), "--headless", "--out", str(out)])
    return out


def _export(path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["export", str(path), "--format", fmt]) == ExitCode.DECIDED
    return capsys.readouterr().out


def test_a_tampered_session_is_marked_inside_its_markdown_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _run("scripted-exhausted.toml", tmp_path / "s.toml")
    said = tomllib.loads(path.read_text("utf-8"))["turns"][3]["content"]["weaknesses"][0]
    path.write_text(path.read_text("utf-8").replace(said, said + " (edited)", 1), "utf-8")

    doc = validate_export(_export(path, "json", capsys))
    checked = doc["verification"]
    assert checked["ok"] is False and checked["claims"] > len(checked["failures"]) > 0
    assert {"where": "turn 4", "field": "hash"}.items() <= checked["failures"][0].items()

    text = _export(path, "markdown", capsys)
    head = text.split("**Motion:**")[0]  # the mark comes before anything it casts doubt on
    assert (
        f"**`moot verify` fails: {len(checked['failures'])} of {checked['claims']} claims" in head
    )
    assert "\n- turn 4: hash: " in head


def test_an_untouched_session_says_it_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _run("scripted-exhausted.toml", tmp_path / "s.toml")
    checked = validate_export(_export(path, "json", capsys))["verification"]
    assert checked["ok"] is True and checked["failures"] == [] and checked["claims"] > 0
    text = _export(path, "markdown", capsys)
    assert f"\n`moot verify` passes: all {checked['claims']} claims hold.\n" in text


def test_the_schema_is_published_under_the_version_the_export_names() -> None:
    schema = json.loads(schema_path(EXPORT_SCHEMA).read_text("utf-8"))
    assert schema["$id"] == EXPORT_SCHEMA
    assert schema["properties"]["schema"] == {"const": EXPORT_SCHEMA}
    turn_kinds = schema["$defs"]["turn"]["properties"]["kind"]["enum"]
    assert set(turn_kinds) == set(builtin_kinds())  # a new kind updates the schema


def test_the_schema_refuses_an_export_without_its_verify_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _run("scripted-refine.toml", tmp_path / "s.toml")
    doc = validate_export(_export(path, "json", capsys))
    del doc["verification"]
    with pytest.raises(ValidationError, match="'verification' is a required property"):
        validator(EXPORT_SCHEMA).validate(doc)
    doc["verification"] = {"ok": "yes", "claims": 1, "failures": [], "notes": []}
    with pytest.raises(ValidationError, match="is not of type 'boolean'"):
        validator(EXPORT_SCHEMA).validate(doc)


def test_a_verified_export_guarantees_more_than_a_damaged_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged file's header is exported as stored; only a verified one promises its types."""
    path = _run("scripted-adversary.toml", tmp_path / "s.toml")
    doc = validate_export(_export(path, "json", capsys))
    doc["session"]["id"] = []
    with pytest.raises(ValidationError, match=r"\[\] is not of type 'string'"):
        validator(EXPORT_SCHEMA).validate(doc)
    doc["verification"] = {"ok": False, "claims": 9, "failures": [], "notes": []}
    validator(EXPORT_SCHEMA).validate(doc)


def test_a_damaged_turns_numbers_are_bounded_only_where_the_file_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _run("scripted-adversary.toml", tmp_path / "s.toml")
    doc = validate_export(_export(path, "json", capsys))
    doc["turns"][1]["round"] = 0  # the loader keeps it; verify names it
    with pytest.raises(ValidationError, match="0 is less than the minimum of 1"):
        validator(EXPORT_SCHEMA).validate(doc)
    doc["verification"]["ok"] = False
    validator(EXPORT_SCHEMA).validate(doc)
