"""The ``scripted`` provider: canned turns from the spec, streamed like a model.

It answers with the same JSON a real model would, so scripted debates go
through the engine's parsing, validation and re-ask path unchanged.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from tui.engine.basics.vocab import TurnKind
from tui.engine.core.ports import ProviderError, TokenSink, TurnReply, TurnRequest
from tui.engine.protocols import kind_owner
from tui.engine.protocols.base import cycled, scripted_critique
from tui.engine.specs.spec import Script

JUNK = "I would rather not answer in the requested format."
_TOKEN = re.compile(r"\S+\s*|\s+")


class ScriptedProvider:
    """Plays ``[debaters.script]``; lists cycle over the debater's turns.

    ``token_delay_ms`` spaces the tokens out only when ``paced``: for the console, where
    someone watches them stream. A headless run, a batch or an MCP run shows no tokens,
    so there it would only wait. ``turn_delay_ms`` (a slow model) holds everywhere.
    """

    def __init__(self, *, paced: bool = False) -> None:
        self.paced = paced

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
        if on_token is not None and self.paced and script.token_delay_ms:
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
            content.update(cycled(script.turns, n, {}))
        return content

    @staticmethod
    def _default(request: TurnRequest, script: Script, n: int) -> dict[str, Any]:
        """The shared kinds' answers; a protocol's own kinds are its to script."""
        d, slot = request.debater, request.slot
        if (owner := kind_owner(slot.kind)) is not None:
            return owner.scripted(request, script)
        if slot.kind == TurnKind.POSITION:
            return {
                "stance": cycled(script.stances, n, f"{d.id}: position {n} on the motion."),
                "rationale": cycled(script.rationales, n, f"{d.id} reasons about turn {n}."),
                "vote": cycled(script.votes, n, request.votes[0] if request.votes else "no answer"),
            }
        return scripted_critique(request, script)

    async def aclose(self) -> None:
        return None
