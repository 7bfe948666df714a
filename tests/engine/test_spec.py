"""Spec validation: every problem reported at once, by key path."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tui.engine import SpecError, validate_spec
from tui.engine.protocols import protocol_for
from tui.engine.specs.spec import read_spec_file
from tui.templates import TEMPLATES

GOOD: dict[str, Any] = {
    "debate": {"title": "T", "motion": "M", "max_rounds": 2, "consensus_threshold": 2},
    "debaters": [
        {"id": "a", "model": "scripted"},
        {"id": "b", "model": "scripted"},
    ],
}


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    return info.value.problems


def test_good_spec_defaults() -> None:
    spec = validate_spec(GOOD)
    assert protocol_for(spec).phases(1) == ["proposal", "critique", "revision", "consensus"]
    assert spec.debate.votes == ["release", "revise", "escalate"]
    assert spec.debate.cross_family == "warn"
    assert spec.threshold == 2


def test_every_problem_reported_at_once_by_key_path() -> None:
    raw = copy.deepcopy(GOOD)
    raw["debate"]["protocol"] = "shouting"
    raw["debate"]["max_rounds"] = "two"
    raw["debate"]["colour"] = "red"
    raw["debaters"][1]["id"] = "a"
    raw["debaters"][0]["temperature"] = 9
    found = problems(raw)
    joined = "\n".join(found)
    assert "debate.protocol: unknown protocol 'shouting'" in joined
    assert "debate.max_rounds:" in joined
    assert "debate.colour: unknown key" in joined
    assert "debaters[1].id: duplicate id 'a'" in joined
    assert "debaters[0].temperature:" in joined
    assert len(found) >= 5


def test_missing_required_keys() -> None:
    found = problems({"debate": {"title": "T"}, "debaters": []})
    assert "debate.motion: required key is missing" in found
    assert any(p.startswith("debaters:") for p in found)


def test_threshold_larger_than_voters() -> None:
    raw = copy.deepcopy(GOOD)
    raw["debate"]["consensus_threshold"] = 3
    assert any("debate.consensus_threshold: 3 is larger" in p for p in problems(raw))


def test_self_critique_refused_at_validation_adversary() -> None:
    raw = {
        "debate": {
            "title": "T",
            "motion": "M",
            "protocol": "adversary",
            "proposer": "a",
            "critic": "a",
        },
        "debaters": [{"id": "a", "model": "scripted"}, {"id": "b", "model": "scripted"}],
    }
    assert any(
        "self-critique is refused" in p and p.startswith("debate.critic") for p in problems(raw)
    )


def test_self_critique_refused_at_validation_single_debater() -> None:
    raw = {"debate": {"title": "T", "motion": "M"}, "debaters": [{"id": "a", "model": "scripted"}]}
    assert any("self-critique is refused" in p for p in problems(raw))


def test_adversary_roles_must_name_debaters() -> None:
    raw = {
        "debate": {"title": "T", "motion": "M", "protocol": "adversary", "proposer": "x"},
        "debaters": [{"id": "a", "model": "scripted"}, {"id": "b", "model": "scripted"}],
    }
    found = problems(raw)
    assert "debate.proposer: 'x' is not a debater id" in found
    assert "debate.critic: required for the adversary protocol" in found


@pytest.mark.parametrize(
    "debater",
    [
        {"id": "a", "model": "gpt-4o", "api_key": "sk-abcdefghijklmnopqrstuvwx"},
        {"id": "a", "model": "gpt-4o", "api_key_env": "sk-abcdefghijklmnopqrstuvwx"},
        {"id": "a", "model": "gpt-4o", "role": "use sk-abcdefghijklmnopqrstuvwxyz please"},
    ],
)
def test_literal_api_keys_refused(debater: dict[str, Any]) -> None:
    raw = copy.deepcopy(GOOD)
    raw["debaters"][0] = debater
    found = problems(raw)
    assert any(p.startswith("debaters[0].") and ("key" in p.lower()) for p in found)


def test_unknown_phase_and_script_vote() -> None:
    raw = copy.deepcopy(GOOD)
    raw["debate"]["phases"] = ["proposal", "brawl"]
    raw["debaters"][0]["script"] = {"votes": ["maybe"]}
    found = problems(raw)
    assert (
        "debate.phases[1]: unknown phase 'brawl'; expected one of proposal, critique, revision, consensus"
        in found
    )
    assert "debaters[0].script.votes[0]: 'maybe' is not one of debate.votes" in found


def test_script_only_with_scripted_model() -> None:
    raw = copy.deepcopy(GOOD)
    raw["debaters"][0] = {"id": "a", "model": "local", "script": {"votes": ["release"]}}
    assert 'debaters[0].script: only allowed with model = "scripted"' in problems(raw)


def test_cross_family_require_refuses_same_family_pairs() -> None:
    raw = copy.deepcopy(GOOD)
    raw["debate"]["cross_family"] = "require"
    assert any(p.startswith("debate.cross_family: require") for p in problems(raw))
    raw["debaters"][0]["family"] = "one"
    raw["debaters"][1]["family"] = "two"
    validate_spec(raw)


def test_examples_and_templates_validate(tmp_path) -> None:
    files = sorted(EXAMPLES.glob("*.toml"))
    assert len(files) >= 3
    for f in files:
        read_spec_file(f)
    for name, text in TEMPLATES.items():
        p = tmp_path / f"{name}.toml"
        p.write_text(text.format(name=p.name))
        spec, _ = read_spec_file(p)
        assert spec.debate.protocol == name


def test_bad_toml_reports_location(tmp_path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text("[debate\ntitle = 'x'\n")
    with pytest.raises(SpecError) as info:
        read_spec_file(p)
    assert "not valid TOML" in info.value.problems[0]
    assert "line 1" in info.value.problems[0]


def test_warn_policy_names_same_family_pairs() -> None:
    from tui.engine.specs.spec import spec_warnings

    warnings = spec_warnings(validate_spec(GOOD))
    assert len(warnings) == 2 and "weak adversarial pass" in warnings[0]
    raw = copy.deepcopy(GOOD)
    raw["debaters"][0]["family"] = "other"
    assert spec_warnings(validate_spec(raw)) == []
    raw["debate"]["cross_family"] = "off"
    raw["debaters"][0]["family"] = "scripted"
    assert spec_warnings(validate_spec(raw)) == []
