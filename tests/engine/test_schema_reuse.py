"""Each content model's JSON schema is built once per process, not once per engine.

Pydantic builds a model's schema anew on every call, and every engine asked for each
turn kind's: most of a thousand-item ``moot bench`` went there. The schema an engine
is handed must still be its own: a change to it never reaches the next engine's.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tests.helpers import adversary_raw
from tui.engine import Engine, validate_spec
from tui.providers.scripted import ScriptedProvider


def test_a_second_engine_builds_no_schema_again(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = validate_spec(adversary_raw(["release"]))
    Engine(spec, lambda _d: ScriptedProvider())  # the first may build them
    built: list[str] = []
    real = BaseModel.model_json_schema.__func__  # type: ignore[attr-defined]

    def counted(cls: type[BaseModel], *args: Any, **kwargs: Any) -> dict[str, Any]:
        built.append(cls.__name__)
        return dict(real(cls, *args, **kwargs))

    monkeypatch.setattr(BaseModel, "model_json_schema", classmethod(counted))
    engine = Engine(spec, lambda _d: ScriptedProvider())
    assert engine.player.schemas and built == []


def test_each_engine_gets_a_schema_of_its_own() -> None:
    spec = validate_spec(adversary_raw(["release"]))
    first = Engine(spec, lambda _d: ScriptedProvider()).player.schemas
    kind, schema = next(iter(first.items()))
    schema["properties"].clear()
    schema["required"].append("changed")
    again = Engine(spec, lambda _d: ScriptedProvider()).player.schemas[kind]
    assert again["properties"] and "changed" not in again["required"]
