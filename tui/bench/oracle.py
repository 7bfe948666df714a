"""``oracle:P``: an answerer right with probability P, to check the harness against theory.

Each answer is drawn from a generator seeded by (seed, item, agent, round), so a
rerun draws alike, and its wrong answers never coincide (each agent and round has
its own), so a vote of three is right exactly when two or three are: 3P² − 2P³.
"""

from __future__ import annotations

import json
import random

from tui.bench.tasks import Item, Task
from tui.engine.errors import MootInputError
from tui.engine.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.spec import MAX_DEBATERS

PREFIX = "oracle:"


def oracle_p(model: str) -> float | None:
    """P of an ``oracle:P`` model name; None for any other model."""
    if not model.startswith(PREFIX):
        return None
    try:
        p = float(model[len(PREFIX) :])
    except ValueError:
        p = -1.0
    if not 0.0 <= p <= 1.0:
        raise MootInputError(f"--model {model}", ["oracle:P needs P between 0 and 1"])
    return p


def agent_number(debater_id: str) -> int:
    """``a3`` -> 3: the bench names its agents a1..aN."""
    return int(debater_id.lstrip("a"))


class Oracle:
    """A provider for one item: it answers every slot without a model."""

    def __init__(self, task: Task, item: Item, p: float, seed: int) -> None:
        self.task, self.item, self.p, self.seed = task, item, p, seed

    def answer(self, agent: int, round_no: int) -> str:
        rng = random.Random(f"oracle:{self.seed}:{self.item.index}:{agent}:{round_no}")
        if rng.random() < self.p:
            return self.item.answer
        return self.task.wrong(self.item, (round_no - 1) * MAX_DEBATERS + agent)

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        vote = self.answer(agent_number(request.debater.id), request.slot.round)
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
