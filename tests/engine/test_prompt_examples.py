"""Prompt examples: one short answer per turn kind, valid for the slot's own schema."""

from __future__ import annotations

import json

import pytest

import tui.engine  # noqa: F401  (the engine's import order)
from tests.helpers import builtin_kinds, statement_rules
from tui.engine.core.substance import content_problems
from tui.engine.protocols.challenge import CHALLENGE_REPORT, DEFENSE
from tui.engine.run.prompts import example_for
from tui.engine.run.schemas import kind_schema

VOTES = ["adopt", "reject"]


@pytest.mark.parametrize(
    "kind", [k for k in builtin_kinds() if k not in (CHALLENGE_REPORT, DEFENSE)]
)
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


def test_kinds_whose_answers_name_engine_ids_get_no_example() -> None:
    for kind in (CHALLENGE_REPORT, DEFENSE):
        assert example_for(kind, kind_schema(builtin_kinds()[kind], VOTES)) is None
