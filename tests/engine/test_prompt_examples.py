"""Prompt examples: one short answer per turn kind, valid for the slot's own schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tui.engine  # noqa: F401  (the engine's import order)
from tests.helpers import builtin_kinds, statement_rules
from tui.engine import Engine
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.core.substance import content_problems
from tui.engine.protocols.challenge import CHALLENGE_REPORT, DEFENSE
from tui.engine.run.prompts import example_for
from tui.engine.run.schemas import kind_schema
from tui.engine.specs.spec import read_spec_file
from tui.providers.scripted import ScriptedProvider

EXAMPLES = Path(__file__).resolve().parents[2] / "sessions" / "examples"

VOTES = ["adopt", "reject"]


@pytest.mark.parametrize("kind", [k for k in builtin_kinds() if k != DEFENSE])
def test_each_example_validates_and_passes_the_substance_check(kind: str) -> None:
    schema = kind_schema(builtin_kinds()[kind], VOTES)
    example = example_for(kind, schema)
    assert example is not None and "\n" not in example
    content = json.loads(example)
    assert set(content) == set(schema["properties"])  # no field the slot does not ask for
    builtin_kinds()[kind].model_validate(content)
    if "vote" in content:
        assert content["vote"] in VOTES
    assert not content_problems(
        statement_rules(kind), content, votes=VOTES, motion="Adopt the plan."
    )


def test_a_slot_that_must_name_engine_ids_gets_no_example() -> None:
    """A first report names no earlier challenge, so it shows one; a later round's must
    assess each open challenge by id (its schema asks for that many), and a defense always
    answers ids, so neither is shown an example it could not follow."""
    schema = kind_schema(builtin_kinds()[CHALLENGE_REPORT], VOTES)
    first = example_for(CHALLENGE_REPORT, schema)
    assert first is not None and json.loads(first)["assessments"] == []
    later = json.loads(json.dumps(schema))
    later["properties"]["assessments"] |= {"minItems": 2, "maxItems": 2}
    assert example_for(CHALLENGE_REPORT, later) is None
    assert example_for(DEFENSE, kind_schema(builtin_kinds()[DEFENSE], VOTES)) is None


async def test_a_debater_playing_a_phase_again_has_only_the_round_changed_at_its_end() -> None:
    """A local server keeps each debater's last prompt in its slot and re-reads only what
    differs from it: the round closes the system message, so a critic's second critique
    re-reads one line and the user message, not its task, rules, schema and example."""
    spec, _ = read_spec_file(EXAMPLES / "local-adversary.toml")
    calls: list[tuple[str, list[dict[str, str]]]] = []

    class Recording(ScriptedProvider):
        async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
            calls.append((request.debater.id, request.messages))
            return await super().complete(request, on_token)

    provider = Recording()
    await Engine(spec, lambda _debater: provider).run()
    critiques = [messages[0]["content"] for who, messages in calls if who == "attacker"]
    assert len(critiques) == 2  # the example's two rounds
    first, second = critiques
    fixed, sep, _ = first.rpartition("\n\nRound 1.")
    assert sep and first.endswith(sep)  # the round is the message's last line
    assert second == fixed + "\n\nRound 2."
    assert fixed.count("Phase: critique.") == 1 and "Example of the form" in fixed
