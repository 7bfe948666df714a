"""The published JSON Schema of ``moot export --format json``, and a check of one export.

tests/conftest.py wraps ``tui.render.export.to_json`` with :func:`checked`, so every JSON
export any test makes (through the CLI, the console or a direct call) is validated.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache, wraps
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"


def schema_path(version: str) -> Path:
    """``moot.export/2`` → docs/schemas/moot.export-2.schema.json."""
    return SCHEMAS / (version.replace("/", "-") + ".schema.json")


@cache
def validator(version: str) -> Draft202012Validator:
    schema = json.loads(schema_path(version).read_text("utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def validate_export(text: str) -> dict[str, Any]:
    """The export parsed, after every schema error in it has failed the test."""
    doc: dict[str, Any] = json.loads(text)
    errors = [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
        for e in validator(doc["schema"]).iter_errors(doc)
    ]
    assert not errors, "the JSON export does not match its schema:\n" + "\n".join(errors)
    return doc


def checked(to_json: Callable[..., str]) -> Callable[..., str]:
    """``to_json`` that validates what it returns against the schema it names."""

    @wraps(to_json)
    def to_json_checked(*args: Any, **kwargs: Any) -> str:
        text = to_json(*args, **kwargs)
        validate_export(text)
        return text

    return to_json_checked
