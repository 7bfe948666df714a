"""The protocol registry: one module and one entry make a protocol, end to end."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import entry_points

import pytest

from tests.example_protocol import MonologueProtocol
from tests.helpers import run_engine
from tui.engine import SpecError, validate_spec
from tui.engine.protocols import ENTRY_POINT_GROUP, PROTOCOLS, protocol_class, protocol_for
from tui.templates import TEMPLATES

BUILT_IN = ["debate", "adversary", "challenge", "refine", "delphi"]


def test_registry_names_each_protocol_once_with_its_defaults() -> None:
    # The built-in ones, then those installed as plugins (the tests install examples/protocols/).
    installed = [point.name for point in entry_points(group=ENTRY_POINT_GROUP)]
    assert list(PROTOCOLS) == [*BUILT_IN, *installed]
    assert list(TEMPLATES) == list(PROTOCOLS)
    rounds = {}
    for name, protocol in PROTOCOLS.items():
        raw = tomllib.loads(protocol.template.format(name="x.toml"))
        raw["debate"].pop("max_rounds", None)
        spec = validate_spec(raw)
        assert protocol_class(spec) is protocol and type(protocol_for(spec)) is protocol
        rounds[name] = spec.max_rounds
    built_in = {"debate": 2, "adversary": 3, "challenge": 3, "refine": 8, "delphi": 3}
    assert {name: rounds[name] for name in BUILT_IN} == built_in


@pytest.fixture
def monologue(monkeypatch: pytest.MonkeyPatch) -> None:
    # The one registration line a new protocol adds to tui/engine/protocols/__init__.py.
    monkeypatch.setitem(PROTOCOLS, MonologueProtocol.name, MonologueProtocol)


def test_a_new_protocol_validates_through_its_own_rules(monologue: None) -> None:
    spec = validate_spec(tomllib.loads(MonologueProtocol.template))
    assert spec.voters == ["speaker"] and spec.threshold == 1 and spec.max_rounds == 1
    raw = tomllib.loads(MonologueProtocol.template)
    del raw["debate"]["proposer"]
    raw["debate"]["critic"] = "speaker"
    raw["debate"]["phases"] = ["statement"]
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    assert sorted(info.value.problems) == [
        "debate.critic: not used by the monologue protocol",
        "debate.phases: the monologue protocol has fixed phases",
        "debate.proposer: required for the monologue protocol",
    ]
    # Its role key is now refused by the others, and the unknown-protocol message lists it.
    other = {"debate": {"title": "T", "motion": "M", "protocol": "vibes"}, "debaters": []}
    with pytest.raises(SpecError) as info:
        validate_spec(other)
    assert (
        "debate.protocol: unknown protocol 'vibes'; expected one of "
        f"{', '.join(PROTOCOLS)}"  # the built-in ones, any installed, then monologue
    ) in info.value.problems
    assert list(PROTOCOLS)[-1] == "monologue"


def test_a_new_protocol_runs_in_the_engine(monologue: None) -> None:
    raw = tomllib.loads(MonologueProtocol.template)
    raw["debaters"][0] |= {"model": "scripted", "script": {"votes": ["revise"]}}
    engine, _ = run_engine(raw)
    result = engine.result()
    assert (result["decision"], result["decision_rule"]) == ("revise", "threshold_vote")
    assert [(t.phase, t.speaker, t.kind) for t in engine.state.turns] == [
        ("statement", "speaker", "position")
    ]


@pytest.mark.parametrize(
    "module",
    [
        "tui.engine.specs.spec",
        "tui.engine.protocols",
        "tui.engine.protocols.refine",
        "tui.engine.core.state",
    ],
)
def test_spec_and_protocols_import_first_without_a_cycle(module: str) -> None:
    # spec.py reads the registry; the protocols import Spec only for type checking.
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True, timeout=60)
