"""How often decisions held, and how well the votes foresaw it: the figures of ``moot outcomes``.

Over the decisions that have an outcome (the latest one counts):

- **held share**: held / (held + failed), with its Wilson 95 % interval; a
  ``mixed`` outcome is counted apart, in neither, since it is neither a hit nor a miss;
- **Brier score of the tally**: the mean of (p − y)², where p is the share of the
  final votes that went to the decided option and y is 1 if it held, 0 if it
  failed; 0 is perfect, and always saying 0.5 scores 0.25;
- **Brier score of each debater**: the same with p = 1 when its final vote was
  the decision and 0 when it was not (moot's turns state no confidence);
- **calibration**: the decisions binned by p (fifths), each bin's mean p against
  the share of it that held.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.bench.report import wilson
from tui.engine.record.outcomes import Outcome, latest
from tui.engine.record.session import SessionData

BINS = 5
GROUPINGS = ("protocol", "rule", "decider", "debater")
_PLACES = 4


@dataclass(frozen=True)
class Decision:
    """One decided session, as the figures read it."""

    path: Path
    protocol: str
    rule: str
    decider: str
    decision: str
    share: float | None  # the final votes' share for the decision; None with no votes
    votes: dict[str, str] = field(default_factory=dict)  # debater -> its final vote
    outcome: str | None = None  # the latest outcome, if any

    def groups(self, by: str) -> list[str]:
        """The groups of ``--by`` this decision falls in (a debater's: one per voter)."""
        if by == "debater":
            return sorted(self.votes)
        return [{"protocol": self.protocol, "rule": self.rule, "decider": self.decider}[by]]


def decision_of(data: SessionData) -> Decision | None:
    """The decision a verified session made, or None (no result, or escalated)."""
    result = data.result
    if result is None or result.get("decision") in (None, "escalate"):
        return None
    decision = str(result["decision"])
    tally = result.get("vote_tally")
    counts = {str(k): v for k, v in tally.items()} if isinstance(tally, dict) else {}
    total = sum(v for v in counts.values() if isinstance(v, int))
    votes = result.get("final_votes")
    found = latest(data)
    return Decision(
        path=data.path,
        protocol=str(result.get("protocol", data.spec.debate.protocol)),
        rule=str(result.get("decision_rule", "")),
        decider=str(result.get("decided_by", "")),
        decision=decision,
        share=counts.get(decision, 0) / total if total else None,
        votes={str(k): str(v) for k, v in votes.items()} if isinstance(votes, dict) else {},
        outcome=None if found is None else str(found.get("outcome")),
    )


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), _PLACES) if values else None


def figures(decisions: Sequence[Decision]) -> dict[str, Any]:
    """The figures over ``decisions`` (see the module's docstring for each definition)."""
    judged = [d for d in decisions if d.outcome is not None]
    count = {o: sum(1 for d in judged if d.outcome == o) for o in Outcome}
    binary = [
        (d, 1.0 if d.outcome == Outcome.HELD else 0.0) for d in judged if d.outcome != "mixed"
    ]
    held = count[Outcome.HELD]
    lo, hi = wilson(held, len(binary))
    tally = [(d.share, y) for d, y in binary if d.share is not None]
    voters: dict[str, list[float]] = {}
    for d, y in binary:
        for who, vote in d.votes.items():
            voters.setdefault(who, []).append(((1.0 if vote == d.decision else 0.0) - y) ** 2)
    return {
        "decisions": len(decisions),
        "with_outcome": len(judged),
        "held": held,
        "failed": count[Outcome.FAILED],
        "mixed": count[Outcome.MIXED],
        "held_share": round(held / len(binary), _PLACES) if binary else None,
        "ci95": [round(lo, _PLACES), round(hi, _PLACES)] if binary else None,
        "brier_tally": _mean([(p - y) ** 2 for p, y in tally]),
        "brier_decisions": len(tally),
        "debaters": {
            who: {"votes": len(errors), "brier": _mean(errors)}
            for who, errors in sorted(voters.items())
        },
        "calibration": calibration(tally),
    }


def calibration(points: Iterable[tuple[float, float]]) -> list[dict[str, Any]]:
    """The (forecast, happened) pairs in fifths of the forecast: each bin's mean forecast
    against the share that held. Empty bins are left out."""
    bins: list[list[tuple[float, float]]] = [[] for _ in range(BINS)]
    for p, y in points:
        bins[min(int(p * BINS), BINS - 1)].append((p, y))
    return [
        {
            "from": round(i / BINS, 2),
            "to": round((i + 1) / BINS, 2),
            "decisions": len(members),
            "forecast": _mean([p for p, _ in members]),
            "held": _mean([y for _, y in members]),
        }
        for i, members in enumerate(bins)
        if members
    ]


def grouped(decisions: Sequence[Decision], by: str) -> dict[str, dict[str, Any]]:
    """The figures per group of ``--by``."""
    members: dict[str, list[Decision]] = {}
    for d in decisions:
        for key in d.groups(by):
            members.setdefault(key, []).append(d)
    return {key: figures(group) for key, group in sorted(members.items())}
