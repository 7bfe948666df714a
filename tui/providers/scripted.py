"""The ``scripted`` provider: canned turns from the spec, streamed like a model.

It answers with the same JSON a real model would, so scripted debates go
through the engine's parsing, validation and re-ask path unchanged.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from tui.engine.ports import ProviderError, TokenSink, TurnReply, TurnRequest
from tui.engine.protocols import kind_owner
from tui.engine.spec import Script
from tui.engine.vocab import TurnKind

T = TypeVar("T")
JUNK = "I would rather not answer in the requested format."
_TOKEN = re.compile(r"\S+\s*|\s+")


def _pick(items: Sequence[T], n: int, default: T) -> T:
    return items[(n - 1) % len(items)] if items else default


def _ids_to_answer(schema: dict[str, Any]) -> list[str]:
    """The challenge ids the engine's per-slot schema says this turn must cover."""
    shape = schema.get("anyOf", [schema])[0]  # every verdict's shape names the same ids
    props = shape.get("properties", {})
    for key in ("assessments", "responses"):
        item = props.get(key, {}).get("items", {})
        enum = item.get("properties", {}).get("challenge_id", {}).get("enum")
        if enum:
            return list(enum)
    return []


class ScriptedProvider:
    """Plays ``[debaters.script]``; lists cycle over the debater's turns."""

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        d = request.debater
        script = d.script or Script()
        n = request.speaker_turn
        if script.turn_delay_ms:
            await asyncio.sleep(script.turn_delay_ms / 1000)
        if n in script.fail:
            raise ProviderError("server", f"scripted failure on turn {n} of {d.id}")
        if n in script.invalid or (n in script.invalid_once and request.attempt == 1):
            text = JUNK
        else:
            text = json.dumps(self._content(request, script, n), ensure_ascii=False)
        if on_token is not None and script.token_delay_ms:
            for tok in _TOKEN.findall(text):
                await asyncio.sleep(script.token_delay_ms / 1000)
                on_token(tok)
        elif on_token is not None:
            on_token(text)
        return TurnReply(text=text, tokens_in=0, tokens_out=len(text.split()))

    @classmethod
    def _content(cls, request: TurnRequest, script: Script, n: int) -> dict[str, Any]:
        content = cls._default(request, script, n)
        if script.turns:
            content.update(_pick(script.turns, n, {}))
        return content

    @staticmethod
    def _default(request: TurnRequest, script: Script, n: int) -> dict[str, Any]:
        d, slot = request.debater, request.slot
        if (owner := kind_owner(slot.kind)) is not None:  # a kind its protocol adds
            return owner.scripted(slot, request.votes, script, n)
        vote = _pick(script.votes, n, request.votes[0] if request.votes else "no answer")
        ids = _ids_to_answer(request.json_schema)
        if slot.kind == TurnKind.CANDIDATE:
            return {
                "candidate": _pick(script.stances, n, f"{d.id}: candidate {n}."),
                "rationale": _pick(script.rationales, n, f"{d.id} explains candidate {n}."),
            }
        if slot.kind == TurnKind.JUDGMENT:
            return {"pick": "X", "reason": _pick(script.rationales, n, f"{d.id} prefers X.")}
        if slot.kind == TurnKind.CHALLENGE_REPORT:
            return {
                "challenges": [],
                "verdict": "no_objections",
                "assessments": [{"challenge_id": i, "status": "addressed"} for i in ids],
                "convergence": "converging",
            }
        if slot.kind == TurnKind.DEFENSE:
            return {
                "responses": [
                    {"challenge_id": i, "status": "addressed", "answer": f"{d.id} fixed {i}."}
                    for i in ids
                ],
                "revised_artifact": _pick(script.stances, n, f"{d.id}: revised artifact {n}."),
            }
        if slot.kind == TurnKind.POSITION:
            return {
                "stance": _pick(script.stances, n, f"{d.id}: position {n} on the motion."),
                "rationale": _pick(script.rationales, n, f"{d.id} reasons about turn {n}."),
                "vote": vote,
            }
        weaknesses = _pick(
            script.weaknesses, n, [f"{slot.target}'s position leaves its main risk unaddressed."]
        )
        verdict = _pick(script.verdicts, n, "defects_found" if weaknesses else "no_defect_found")
        content: dict[str, Any] = {
            "weaknesses": weaknesses,
            "suggestions": _pick(script.suggestions, n, [f"{slot.target} should name a fallback."]),
            "verdict": verdict,
            "vote": vote,
        }
        if slot.kind == TurnKind.ADVERSARY_CRITIQUE:
            content["score"] = _pick(script.scores, n, 50)
            content["routing"] = _pick(script.routings, n, "release")
            content["vote"] = content["routing"]
        elif slot.kind == TurnKind.CANDIDATE_CRITIQUE:
            del content["vote"]
        return content

    async def aclose(self) -> None:
        return None
