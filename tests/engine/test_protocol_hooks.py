"""Callers ask the protocol, never its name: start-time draws, handoff, vote bars."""

from __future__ import annotations

import asyncio
import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.example_protocol import MonologueProtocol
from tests.helpers import SCRIPTED
from tui.engine import validate_spec
from tui.engine.core.records import Turn
from tui.engine.protocols import PROTOCOLS
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.specs.spec import Spec
from tui.render.export import to_json


class DrawingMonologue(MonologueProtocol):
    """A monologue that draws a seed at start and hands off its decision."""

    name = "drawing"
    role_keys = frozenset({"proposer", "seed"})
    shows_votes = False
    drawn: ClassVar[int] = 4242

    @classmethod
    def drawn_at_start(cls, spec: Spec) -> dict[str, Any]:
        return {"seed": cls.drawn} if spec.debate.seed is None else {}

    @classmethod
    def handoff(cls, result: dict[str, Any], turns: Sequence[Turn]) -> dict[str, Any] | None:
        return {"next": result.get("decision")}


@pytest.fixture
def drawing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROTOCOLS, DrawingMonologue.name, DrawingMonologue)


def _raw(protocol: str) -> dict[str, Any]:
    raw = tomllib.loads(MonologueProtocol.template)
    raw["debate"]["protocol"] = protocol
    raw["debaters"][0] |= {"model": "scripted", "script": {"votes": ["revise"]}}
    return raw


def _run(raw: dict[str, Any], out: Path) -> dict[str, Any]:
    live = LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=out)
    asyncio.run(live.engine.run())
    live.close()
    data = load_session(out)
    doc: dict[str, Any] = json.loads(to_json(data))
    doc["recorded_seed"] = data.spec.debate.seed
    return doc


def test_values_drawn_at_start_are_recorded_and_the_handoff_exported(
    drawing: None, tmp_path: Path
) -> None:
    doc = _run(_raw("drawing"), tmp_path / "d.toml")
    assert doc["recorded_seed"] == DrawingMonologue.drawn
    assert doc["handoff"] == {"next": "revise"}


def test_a_value_the_spec_sets_is_not_drawn_again(drawing: None, tmp_path: Path) -> None:
    raw = _raw("drawing")
    raw["debate"]["seed"] = 7
    assert _run(raw, tmp_path / "d.toml")["recorded_seed"] == 7


def test_no_handoff_unless_the_protocol_defines_one() -> None:
    offered = {
        n for n, p in PROTOCOLS.items() if p.handoff({"decision": "release"}, []) is not None
    }
    assert offered == {"refine"}


def test_vote_bars_follow_the_protocol_class() -> None:
    assert {n for n, p in PROTOCOLS.items() if p.shows_votes} == {"debate", "adversary"}
