"""The arms, each one engine run per item with open votes.

``single`` is one agent for one round, ``vote`` K agents for one round (nobody
sees anyone: K independent answers), ``debate`` A agents for R rounds, each
round after the first showing every agent the others' latest answers and
reasons. The engine counts the votes (the most common normal form wins; a tie
at the top decides nothing), so the arms share one prompt, one parser and
one rule, and a debate's session file re-checks with ``moot verify``.

``adaptive`` is the debate stopped by the engine's own early stop as soon as a
strict majority of the A agents agrees: its first round is the vote, so an item
the vote settles costs A calls and only the others go on, up to A × R. An item
with no strict majority after R rounds has no answer (for an odd A, the same as
the debate arm's plurality).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.bench.tasks import Item, Task
from tui.engine.basics.vocab import DecisionRule
from tui.engine.core.ports import Provider, ProviderError
from tui.engine.core.records import Turn
from tui.engine.core.schedule import Slot
from tui.engine.core.tally import consensus
from tui.engine.record.live import LiveSession
from tui.engine.run.runner import Engine
from tui.engine.run.turns import FailureAction, FailureChoice
from tui.engine.specs.spec import Debater, validate_spec

ARMS = ("single", "vote", "debate", "adaptive")
DEBATES = ("debate", "adaptive")  # the arms of several rounds, each kept as a session file
PROVIDER_FAILURE = "provider failure"  # how the engine records a call that failed
ROLE = (
    "Solves the problem. In a later round, reads the other agents' answers and reasons, "
    "checks them, and answers again."
)


@dataclass(frozen=True, slots=True)
class Setup:
    """What a bench run is: the task, the model and the size of each arm."""

    task: Task
    model: str
    agents: int = 3
    rounds: int = 2
    samples: int = 3
    api_base: str | None = None  # an OpenAI-compatible server (vLLM, llama.cpp) for the model

    def shape(self, arm: str) -> tuple[int, int]:
        """(agents, rounds) of an arm: calls per item are their product."""
        if arm in DEBATES:
            return (self.agents, self.rounds)
        return {"single": (1, 1), "vote": (self.samples, 1)}[arm]


def arm_spec(setup: Setup, arm: str, item: Item) -> dict[str, Any]:
    """The spec one item's arm runs: answers only; a plurality decides after every round is
    played, or, for ``adaptive``, a strict majority as soon as one agrees."""
    agents, rounds = setup.shape(arm)
    return {
        "debate": {
            "title": f"{setup.task.name} item {item.index} ({arm})",
            "motion": item.question,
            "votes": "open",
            "normalise": setup.task.normaliser,
            "phases": ["proposal"],
            "max_rounds": rounds,
            "early_stop": arm == "adaptive",
            "consensus_threshold": agents // 2 + 1 if arm == "adaptive" else 1,
            "retries": 0,  # exactly agents x rounds calls: a refused answer counts as none
            "on_invalid": "continue",
            "cross_family": "off",
            "min_words": 1,
        },
        "debaters": [
            {"id": f"a{n}", "model": setup.model, "role": ROLE} | _server(setup)
            for n in range(1, agents + 1)
        ],
    }


def _server(setup: Setup) -> dict[str, str]:
    return {} if setup.api_base is None else {"api_base": setup.api_base}


async def skip_failure(slot: Slot, error: ProviderError) -> FailureChoice:
    """A failed call is an answer not given: the turn is recorded and the item goes on."""
    return FailureChoice(FailureAction.SKIP)


async def play(
    setup: Setup,
    arm: str,
    item: Item,
    provider_for: Callable[[Debater], Provider],
    session: Path | None = None,
) -> dict[str, Any]:
    """Run one item's arm (into ``session`` if given, resuming a file left unfinished)."""
    raw = arm_spec(setup, arm, item)
    if session is None:
        engine = Engine(validate_spec(raw), provider_for, on_failure=skip_failure)
        await engine.run()
    else:
        if session.exists():
            live = LiveSession.resume(session, provider_for, on_failure=skip_failure)
        else:
            live = LiveSession.start(
                validate_spec(raw), raw, provider_for, out=session, on_failure=skip_failure
            )
        try:
            await live.engine.run()
        finally:
            live.close()
        engine = live.engine
    return outcome(setup, arm, item, engine, session)


def outcome(
    setup: Setup, arm: str, item: Item, engine: Engine, session: Path | None
) -> dict[str, Any]:
    """The record of an arm the engine just ran."""
    decision = engine.decision
    answer = counted(decision.rule, decision.decision) if decision is not None else None
    return record(setup, arm, item, engine.state.turns, answer, session)


def counted(rule: str, decision: str) -> str | None:
    """The answer an arm gives: a vote's winner; no answer when the rounds ran out undecided."""
    return decision if rule == DecisionRule.THRESHOLD_VOTE else None


def record(
    setup: Setup,
    arm: str,
    item: Item,
    turns: Sequence[Turn],
    answer: str | None,
    session: Path | None,
) -> dict[str, Any]:
    """The per-item record: the answer counted, whether it is right, what it cost.

    Built from the turns alone, so a debate's line can be rebuilt from its session file.
    """
    task = setup.task
    raw = _said(turns, answer)
    agents, rounds = setup.shape(arm)
    grid: list[list[str | None]] = [[None] * agents for _ in range(rounds)]
    right: list[list[bool]] = [[False] * agents for _ in range(rounds)]
    for t in turns:
        if not t.invalid and t.vote is not None and 1 <= t.round <= rounds:
            n = int(t.speaker[1:]) - 1
            grid[t.round - 1][n] = t.vote
            right[t.round - 1][n] = task.correct(item, str(t.content.get("vote", "")))
    record: dict[str, Any] = {
        "item": item.index,
        "arm": arm,
        "question": item.question,
        "expected": item.answer,
        "answer": answer,
        "said": raw,
        "correct": raw is not None and task.correct(item, raw),
        "calls": sum(max(1, t.attempts) for t in turns),
        "tokens": sum(t.tokens_in + t.tokens_out for t in turns),
        "cost": sum(t.cost for t in turns),
        "failed": sum(1 for t in turns if (t.error or "").startswith(PROVIDER_FAILURE)),
        "votes": grid,
    }
    record["gap"] = not record["correct"] and any(any(row) for row in right)
    if arm in DEBATES:
        played = max((t.round for t in turns), default=1)  # an adaptive item may stop early
        record["wrong_to_right"] = sum(
            not a and b
            for r in range(played - 1)
            for a, b in zip(right[r], right[r + 1], strict=True)
        )
        record["right_to_wrong"] = sum(
            a and not b
            for r in range(played - 1)
            for a, b in zip(right[r], right[r + 1], strict=True)
        )
        last = Counter(v for v in grid[played - 1] if v is not None)
        record["agreement"] = max(last.values(), default=0) / agents
        record["conformed"], record["conform_chances"] = conformity(grid)
    if session is not None:
        record["session"] = session.name
    return record


def conformity(grid: list[list[str | None]]) -> tuple[int, int]:
    """(changes to the previous round's plurality, chances to make one).

    A chance is an agent that answered in a round and in the one before it, where that
    round had a plurality the agent did not give; it is taken when the agent now gives it.
    """
    changed = chances = 0
    for before, now in itertools.pairwise(grid):
        top = consensus(Counter(v for v in before if v is not None), 1)
        for was, is_now in zip(before, now, strict=True):
            if top is not None and was is not None and was != top and is_now is not None:
                chances += 1
                changed += is_now == top
    return changed, chances


def _said(turns: Sequence[Turn], answer: str | None) -> str | None:
    """The words of the latest valid vote that counts as ``answer`` (the checker reads them)."""
    if answer is None:
        return None
    for t in reversed(turns):
        if not t.invalid and t.vote == answer:
            return str(t.content.get("vote", ""))
    return None
