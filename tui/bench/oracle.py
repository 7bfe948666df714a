"""``oracle:P`` and ``oracle:P:C``: answerers right with probability P, to check the harness
against theory.

Each answer is drawn from a generator seeded by (seed, item, agent, round), so a
rerun draws alike, and its wrong answers never coincide (each agent and round has
its own), so a vote of three is right exactly when two or three are: 3P² − 2P³.
With C, from round 2 on, an agent first takes the plurality of the answers its
prompt shows (the previous round's) with probability C, from a generator of its
own, so the draw "as today" is the same whatever C is.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass

from tui.bench.tasks import Item, Task
from tui.engine.basics.errors import MootInputError
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.core.tally import consensus
from tui.engine.specs.spec import MAX_DEBATERS
from tui.engine.terms.openvotes import normalise

PREFIX = "oracle:"
SHOWN_VOTE = re.compile(r"^Vote: (.+)$", re.MULTILINE)  # how a prompt shows a position's vote


@dataclass(frozen=True, slots=True)
class OracleOdds:
    """P: the chance of a right draw; C: the chance of taking the previous plurality."""

    p: float
    c: float = 0.0


def oracle_odds(model: str) -> OracleOdds | None:
    """The odds of an ``oracle:P`` or ``oracle:P:C`` model name; None for any other model."""
    if not model.startswith(PREFIX):
        return None
    parts = model[len(PREFIX) :].split(":")
    if len(parts) > 2:
        raise MootInputError(f"--model {model}", ["expected oracle:P or oracle:P:C"])
    p = _share(parts[0])
    if p is None:
        raise MootInputError(f"--model {model}", ["oracle:P needs P between 0 and 1"])
    if len(parts) == 1:
        return OracleOdds(p)
    c = _share(parts[1])
    if c is None:
        raise MootInputError(f"--model {model}", ["oracle:P:C needs C between 0 and 1"])
    return OracleOdds(p, c)


def _share(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None


def agent_number(debater_id: str) -> int:
    """``a3`` -> 3: the bench names its agents a1..aN."""
    return int(debater_id.lstrip("a"))


class Oracle:
    """A provider for one item: it answers every slot without a model."""

    def __init__(self, task: Task, item: Item, odds: OracleOdds, seed: int) -> None:
        self.task, self.item, self.odds, self.seed = task, item, odds, seed

    def answer(self, agent: int, round_no: int) -> str:
        """A fresh draw: right with probability P, else a wrong answer no other draw gives."""
        rng = random.Random(f"oracle:{self.seed}:{self.item.index}:{agent}:{round_no}")
        if rng.random() < self.odds.p:
            return self.item.answer
        return self.task.wrong(self.item, (round_no - 1) * MAX_DEBATERS + agent)

    def reply(self, agent: int, round_no: int, shown: list[str]) -> str:
        """The answer to a prompt showing the votes ``shown``: the plurality with probability C."""
        if round_no > 1 and self.odds.c > 0:
            top = consensus(Counter(shown), 1)  # the engine's plurality: a tie is none
            key = f"oracle-conform:{self.seed}:{self.item.index}:{agent}:{round_no}"
            if top is not None and random.Random(key).random() < self.odds.c:
                right = normalise(self.task.normaliser, self.item.answer)
                return self.item.answer if top == right else top
        return self.answer(agent, round_no)

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        shown = [
            v
            for m in request.messages
            if m["role"] == "user"
            for v in SHOWN_VOTE.findall(m["content"])
        ]
        vote = self.reply(agent_number(request.debater.id), request.slot.round, shown)
        text = json.dumps(
            {
                "stance": f"The answer is {vote}.",
                "rationale": "The oracle draws its answer; it does not reason.",
                "vote": vote,
            }
        )
        if on_token is not None:
            on_token(text)
        return TurnReply(text)

    async def aclose(self) -> None:
        return None
