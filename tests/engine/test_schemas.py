"""The schema every provider is sent carries the spec's rules, and never picks a verdict.

Each turn kind is played through the real engine; the provider records the
schema it was handed (exactly what LiteLLM forwards as ``response_format``),
and one test reads it back off the wire of an OpenAI-compatible server.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import adversary_raw
from tui.engine import Engine, validate_spec
from tui.engine.basics.vocab import TurnKind
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.protocols import adversary, refine
from tui.engine.protocols import challenge as challenge_protocol
from tui.engine.run.schemas import end_cut_strings, kind_schema, negative_channel
from tui.providers.litellm_provider import LiteLLMProvider
from tui.providers.local import ended_at_bounds, local_schema
from tui.providers.scripted import ScriptedProvider

# One worker loads LiteLLM (7 s of CPU a process), the one running this group:
# tests/conftest.py fails a test outside it that uses LiteLLM.
pytestmark = pytest.mark.xdist_group("litellm")

EXAMPLES = Path(__file__).resolve().parents[2] / "sessions" / "examples"
VOTES = ["ship", "hold", "rethink"]


class Recording:
    """Plays the script, keeping every schema it was sent, by turn kind."""

    def __init__(self) -> None:
        self.inner = ScriptedProvider()
        self.schemas: dict[str, list[dict[str, Any]]] = {}

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        self.schemas.setdefault(str(request.slot.kind), []).append(request.json_schema)
        return await self.inner.complete(request, on_token)

    async def aclose(self) -> None:
        return None


def _debate(votes: dict[str, list[str]], **debate: Any) -> dict[str, Any]:
    return {
        "debate": {"title": "Schemas", "motion": "Ship it.", "votes": VOTES, **debate},
        "debaters": [
            {"id": d, "model": "scripted", "script": {"votes": v}} for d, v in votes.items()
        ],
    }


def _example(name: str) -> dict[str, Any]:
    raw = tomllib.loads((EXAMPLES / name).read_text())
    for d in raw["debaters"]:
        d.get("script", {}).pop("token_delay_ms", None)
    return raw


async def _schemas(raw: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    rec = Recording()
    await Engine(validate_spec(raw), lambda d: rec).run()
    return rec.schemas


def _shapes(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return list(schema.get("anyOf", [schema]))


def _verdicts(schema: dict[str, Any]) -> set[str]:
    return {v for s in _shapes(schema) for v in s["properties"]["verdict"]["enum"]}


def _closed(node: dict[str, Any]) -> None:
    """Every object lists all its fields as required; every free string is bounded."""
    if node.get("type") == "object":
        assert set(node["required"]) == set(node["properties"]) and not node["additionalProperties"]
        for prop in node["properties"].values():
            _closed(prop)
    elif node.get("type") == "array":
        assert "maxItems" in node
        _closed(node["items"])
    elif node.get("type") == "string" and "enum" not in node:
        assert 1 <= node["minLength"] <= node["maxLength"] <= 2000


@pytest.fixture(scope="module")
def debate() -> dict[str, list[dict[str, Any]]]:
    import asyncio

    raw = _debate(
        {"a": ["ship"], "b": ["hold"], "c": ["rethink"]},
        phases=["proposal", "critique", "consensus"],
        max_rounds=1,
    )
    return asyncio.run(_schemas(raw))


def test_position_vote_is_an_enum_of_the_specs_votes(debate: dict[str, Any]) -> None:
    for schema in debate[TurnKind.POSITION]:
        assert schema["properties"]["vote"] == {
            "type": "string",
            "enum": VOTES,
            "description": "One of the allowed votes.",
        }
        _closed(schema)


def test_debate_critique_offers_both_verdicts_and_the_vote_enum(debate: dict[str, Any]) -> None:
    for schema in debate[TurnKind.CRITIQUE]:
        some, none = schema["anyOf"]
        assert some["properties"]["verdict"]["enum"] == ["defects_found"]
        assert some["properties"]["weaknesses"]["minItems"] == 1
        assert none["properties"]["verdict"]["enum"] == ["no_defect_found"]
        assert none["properties"]["weaknesses"]["maxItems"] == 0
        for shape in (some, none):
            assert shape["properties"]["vote"]["enum"] == VOTES
            _closed(shape)


class Audit(BaseModel):
    """A kind a protocol from outside might add, with its own negative channel."""

    gaps: list[str]
    verdict: Literal["gaps_found", "all_clear"]


def test_a_protocols_declared_channel_splits_its_own_kinds_schema() -> None:
    """The channel is the protocol's (``negative_channels``), not a list of known names."""
    schema = kind_schema(Audit, VOTES)
    some, none = negative_channel(schema, ("gaps", "all_clear"))["anyOf"]
    assert some["properties"]["verdict"]["enum"] == ["gaps_found"]
    assert some["properties"]["gaps"]["minItems"] == 1
    assert none["properties"]["verdict"]["enum"] == ["all_clear"]
    assert none["properties"]["gaps"]["maxItems"] == 0
    assert negative_channel(schema, None) is schema  # a kind without one is sent as it is


async def test_adversary_critique_routing_score_and_both_verdicts() -> None:
    schemas = await _schemas(adversary_raw(["revise", "release"]))
    for schema in schemas[adversary.ADVERSARY_CRITIQUE]:
        assert _verdicts(schema) == {"defects_found", "no_defect_found"}
        for shape in _shapes(schema):
            props = shape["properties"]
            assert "vote" not in props  # the routing is the vote; the engine reads it
            assert props["routing"]["enum"] == ["release", "revise", "escalate"]
            assert props["score"]["minimum"] == 0 and props["score"]["maximum"] == 100
            _closed(shape)


async def test_challenge_report_and_defense_name_the_ids_to_answer() -> None:
    schemas = await _schemas(_example("scripted-challenge.toml"))
    first, later = (
        schemas[challenge_protocol.CHALLENGE_REPORT][0],
        schemas[challenge_protocol.CHALLENGE_REPORT][1],
    )
    assert _verdicts(first) == _verdicts(later) == {"objections", "no_objections"}
    for shape in _shapes(first) + _shapes(later):
        props = shape["properties"]
        challenge = props["challenges"]["items"]["properties"]
        assert challenge["severity"]["enum"] == ["critical", "significant", "minor"]
        assert props["convergence"]["enum"] == ["continue", "converging", "deadlock"]
        _closed(shape)
    assert all(s["properties"]["assessments"]["maxItems"] == 0 for s in _shapes(first))
    for shape in _shapes(later):  # round 2 assesses exactly round 1's challenges
        arr = shape["properties"]["assessments"]
        assert arr["minItems"] == arr["maxItems"] == 2
        item = arr["items"]["properties"]
        assert item["challenge_id"]["enum"] == ["C1.1", "C1.2"]
        assert item["status"]["enum"] == ["addressed", "rejected", "unaddressed"]
    defense = schemas[challenge_protocol.DEFENSE][0]
    responses = defense["properties"]["responses"]
    assert responses["minItems"] == responses["maxItems"] == 2
    assert responses["items"]["properties"]["challenge_id"]["enum"] == ["C1.1", "C1.2"]
    assert responses["items"]["properties"]["status"]["enum"] == ["addressed", "rejected"]
    _closed(defense)


async def test_refine_candidate_critique_and_judgment() -> None:
    schemas = await _schemas(_example("scripted-refine.toml"))
    for schema in schemas[refine.CANDIDATE]:
        assert set(schema["properties"]) == {"candidate", "rationale"}
        _closed(schema)
    for schema in schemas[refine.CANDIDATE_CRITIQUE]:
        assert _verdicts(schema) == {"defects_found", "no_defect_found"}
        assert all("vote" not in s["properties"] for s in _shapes(schema))
    for schema in schemas[refine.JUDGMENT]:
        assert schema["properties"]["pick"]["enum"] == ["X", "Y"]
        _closed(schema)


async def test_rubric_answers_one_per_property_by_id() -> None:
    raw = _example("scripted-rubric.toml")
    ids = [p["id"] for p in raw["rubric"]["properties"]]
    schemas = await _schemas(raw)
    verifier = [s for kind, found in schemas.items() for s in found if kind != "position"]
    assert verifier
    for schema in verifier:
        for shape in _shapes(schema):
            arr = shape["properties"]["rubric"]
            assert arr["minItems"] == arr["maxItems"] == len(ids)
            answer = arr["items"]["properties"]
            assert answer["property"]["enum"] == ids
            assert answer["verdict"]["enum"] == ["yes", "no"]


async def test_a_debaters_max_tokens_bounds_every_string() -> None:
    raw = _debate({"a": ["ship"]}, phases=["proposal"], max_rounds=1)
    raw["debaters"][0]["max_tokens"] = 200
    schemas = await _schemas(raw)
    props = schemas[TurnKind.POSITION][0]["properties"]
    # (200 - 60 tokens of syntax) * 1.5 characters, shared by stance and rationale
    assert props["stance"]["maxLength"] == props["rationale"]["maxLength"] == 105


def test_local_tightening_keeps_both_verdicts_and_fixed_sizes(debate: dict[str, Any]) -> None:
    critique = debate[TurnKind.CRITIQUE][0]
    tight = local_schema(critique, 384)
    assert _verdicts(tight) == {"defects_found", "no_defect_found"}
    some, none = tight["anyOf"]
    assert some["properties"]["weaknesses"]["maxItems"] == 2
    assert none["properties"]["weaknesses"]["maxItems"] == 0
    assert some["properties"]["vote"]["enum"] == VOTES
    assert some["properties"]["weaknesses"]["items"]["maxLength"] <= 300


def test_a_string_cut_at_its_bound_ends_at_a_whole_sentence_or_word(
    debate: dict[str, Any],
) -> None:
    """The grammar closes a string at maxLength, mid-word; the reply keeps whole words."""
    tight = local_schema(debate[TurnKind.POSITION][0], 300)
    bound = tight["properties"]["stance"]["maxLength"]
    words = ("Ship it on Tuesday. " + "Rollback is rehearsed weekly by the on-call team " * 9)[
        :bound
    ]
    mid_word = json.dumps({"stance": words, "rationale": "Short and done.", "vote": VOTES[0]})
    assert not words.endswith((".", " "))  # the fixture really is cut mid-sentence
    ended = json.loads(ended_at_bounds(mid_word, tight))
    assert ended["stance"].endswith("…") and words.startswith(ended["stance"][:-1])
    assert ended["stance"][:-1] == words[: len(ended["stance"]) - 1].rstrip()
    core = ended["stance"][:-1]
    assert words[len(core)] == " ", "it ends where a word ended"
    assert ended["rationale"] == "Short and done." and ended["vote"] == VOTES[0]
    # past half the bound, a whole sentence is where it ends
    one = ("Keep the schema. " * 20)[: bound - 3] + "tab"
    assert end_cut_strings({"stance": one}, tight)["stance"].endswith("Keep the schema.")
    # a string that ended on its own, or under its bound, is left alone
    whole = ("x" * (bound - 1)) + "."
    assert end_cut_strings({"stance": whole}, tight) == {"stance": whole}
    assert ended_at_bounds("not json {", tight) == "not json {"
    deep = "[" * 100_000 + "]" * 100_000  # past the nesting bound: returned as it came
    assert ended_at_bounds(deep, tight) == deep
    short = json.dumps({"stance": "Brief", "rationale": "Also brief", "vote": VOTES[0]})
    assert ended_at_bounds(short, tight) == short


async def test_local_tightening_keeps_the_ids_the_engine_fixed() -> None:
    schemas = await _schemas(_example("scripted-challenge.toml"))
    tight = local_schema(schemas[challenge_protocol.CHALLENGE_REPORT][1], 384)
    for shape in _shapes(tight):
        arr = shape["properties"]["assessments"]
        assert arr["minItems"] == arr["maxItems"] == 2
        assert shape["properties"]["challenges"]["maxItems"] <= 2
    assert _verdicts(tight) == {"objections", "no_objections"}


async def test_an_openai_compatible_server_receives_the_specs_enums(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LiteLLM path: what reaches the wire is the engine's schema, votes as an enum."""
    monkeypatch.setenv("MOOT_FAKE_KEY", "fake-key")
    fake.push(
        Reply(json.dumps({"stance": "Ship it.", "rationale": "It is tested.", "vote": "ship"})),
        Reply(
            json.dumps(
                {"weaknesses": [], "suggestions": [], "verdict": "no_defect_found", "vote": "ship"}
            )
        ),
    )
    raw = _debate({}, phases=["proposal", "critique"], max_rounds=1)
    raw["debaters"] = [
        {
            "id": "a",
            "model": "openai/smollm2",
            "api_base": fake.base_url,
            "api_key_env": "MOOT_FAKE_KEY",
            "timeout_s": 60,
        },
        {"id": "b", "model": "scripted", "script": {"votes": ["hold"]}},
    ]
    provider = LiteLLMProvider(max_retries=0)
    scripted = ScriptedProvider()
    engine = Engine(
        validate_spec(raw), lambda d: provider if d.model.startswith("openai/") else scripted
    )
    await engine.run()
    sent = [r["body"]["response_format"] for r in fake.requests]
    assert sent[0]["type"] == "json_schema"
    position = sent[0]["json_schema"]["schema"]
    assert position["properties"]["vote"]["enum"] == VOTES
    critique = sent[1]["json_schema"]["schema"]
    assert _verdicts(critique) == {"defects_found", "no_defect_found"}
    turns = [t for t in engine.state.turns if t.speaker == "a"]
    assert [t.invalid for t in turns] == [False, False]
    assert turns[1].content["verdict"] == "no_defect_found"


def test_local_requests_keep_a_slot_per_debater_with_prompt_caching(
    debate: dict[str, Any],
) -> None:
    """Each debater keeps its own llama.cpp slot, so its next turn reuses its cache."""
    from tui.engine.core.schedule import Slot
    from tui.engine.specs.spec import Debater
    from tui.providers.local import LocalModelServer, LocalProvider

    provider = LocalProvider(LocalModelServer(n_parallel=2))

    def body(debater: str) -> dict[str, Any]:
        request = TurnRequest(
            debater=Debater(id=debater, model="local"),
            slot=Slot(1, 1, "critique", debater, TurnKind.CRITIQUE),
            messages=[{"role": "user", "content": "Critique."}],
            schema_name="Critique",
            json_schema=debate[TurnKind.CRITIQUE][0],
            votes=VOTES,
        )
        return provider.body(request)

    slots = [body(d)["id_slot"] for d in ("a", "b", "a", "c", "b")]
    assert slots == [0, 1, 0, 0, 1]  # stable per debater; shared once slots run out
    sent = body("a")
    assert sent["cache_prompt"] is True and sent["stream"] is True
    schema = sent["response_format"]["json_schema"]["schema"]
    assert _verdicts(schema) == {"defects_found", "no_defect_found"}
