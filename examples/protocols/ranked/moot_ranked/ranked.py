"""``ranked``: each debater ranks every option with a reason per rank; Borda count decides.

The options are the spec's ``votes``. Each round every debater gives a ranking
(the turn kind ``ranking``): every option once, best first, each with its reason.
From round 2 a debater sees the previous round's rankings. When the rounds are
run, code counts each debater's latest valid ranking by Borda count (with n
options a first place is worth n - 1 points, a last place 0) and shows the
Condorcet winner beside it (the option that beats every other head to head, or
none). A tie on points goes to the Condorcet winner among the tied options, else
to the option listed first in the spec: the rule the result names.

Written only against moot's ``Protocol`` interface and installed through the
``moot.protocols`` entry point: moot itself never imports this module.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from tui.engine.basics.vocab import ESCALATE, DecisionRule
from tui.engine.core.parsing import TurnParseError
from tui.engine.core.records import Turn
from tui.engine.core.schedule import Slot
from tui.engine.core.sections import Emphasis, Item, Section, Tone
from tui.engine.core.state import DebateState, Decision
from tui.engine.core.substance import statement_problem
from tui.engine.protocols.base import Claims, ContextItem, Protocol, RecordedSession, cycled
from tui.engine.protocols.raw import Entry, RawSpec

if TYPE_CHECKING:
    from tui.engine.core.ports import TurnRequest
    from tui.engine.terms.spec import Script, Spec

RANKING = "ranking"  # the turn kind this protocol adds
PHASE = "rank"
BORDA_COUNT = "borda_count"  # the decision rule: the highest Borda count of the final rankings
TIE_RULE = (
    "highest Borda count; a tie goes to the Condorcet winner, then to the option listed first"
)
NO_CONDORCET = ""  # TOML has no null: no option beats every other head to head

TEMPLATE = """# A moot ranked-vote spec: every debater ranks every option; Borda count decides.
[debate]
title = "Where the audit log lives"
motion = "Which datastore should keep the audit log?"
protocol = "ranked"
votes = ["postgres", "s3", "kafka"]   # the options each debater ranks, best first
max_rounds = 1                         # 2: a second ranking after seeing everyone's first

[[debaters]]
id = "dba"
model = "local"
max_tokens = 240
role = "A database administrator who has restored audit logs under pressure."

[[debaters]]
id = "platform"
model = "local"
max_tokens = 240
role = "A platform engineer who pays the storage bill."

[[debaters]]
id = "security"
model = "local"
max_tokens = 240
role = "A security engineer who must prove no entry was changed."
"""


class RankedOption(BaseModel):
    """One place in a ranking: the option, and why it stands there."""

    model_config = ConfigDict(extra="ignore")

    option: str = Field(min_length=1, description="One of the options, each exactly once.")
    reason: str = Field(min_length=1, description="Why this option stands at this rank.")


class Ranking(BaseModel):
    """A debater's ranking of every option, best first, a reason per rank."""

    model_config = ConfigDict(extra="ignore")

    ranking: list[RankedOption] = Field(
        min_length=1, description="Every option exactly once, best first."
    )


# ----------------------------------------------------------------- the count
def latest_rankings(turns: Sequence[Turn]) -> dict[str, list[str]]:
    """Each debater's latest valid ranking, as options best first, in speaking order."""
    out: dict[str, list[str]] = {}
    for t in turns:
        if t.kind == RANKING and not t.invalid:
            out[t.speaker] = [str(row["option"]) for row in t.content["ranking"]]
    return out


def borda(options: Sequence[str], rankings: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Points per option: n - 1 for a first place down to 0 for a last, summed."""
    points = dict.fromkeys(options, 0)
    last = len(options) - 1
    for order in rankings.values():
        for place, option in enumerate(order):
            points[option] += last - place
    return points


def condorcet(options: Sequence[str], rankings: Mapping[str, Sequence[str]]) -> str:
    """The option ranked above each other one by more debaters than the reverse, or none."""
    place = [{o: i for i, o in enumerate(order)} for order in rankings.values()]

    def beats(a: str, b: str) -> bool:
        above = sum(1 for p in place if p[a] < p[b])
        return above > len(place) - above

    return next((a for a in options if all(beats(a, b) for b in options if b != a)), NO_CONDORCET)


def winner(options: Sequence[str], points: Mapping[str, int], condorcet_winner: str) -> str:
    """The highest count; a tie goes to the Condorcet winner, then to the first listed."""
    top = max(points.values())
    tied = [o for o in options if points[o] == top]
    return condorcet_winner if condorcet_winner in tied else tied[0]


def count(options: Sequence[str], turns: Sequence[Turn]) -> dict[str, Any]:
    """The result's fields, recomputed from the turns alone (the engine and verify both)."""
    rankings = latest_rankings(turns)
    points = borda(options, rankings)
    condorcet_winner = condorcet(options, rankings) if rankings else NO_CONDORCET
    return {
        "rankings_counted": len(rankings),
        "borda": points,
        "borda_winner": winner(options, points, condorcet_winner) if rankings else "",
        "condorcet_winner": condorcet_winner,
        "tie_rule": TIE_RULE,
    }


class RankedProtocol(Protocol):
    """Every debater ranks every option each round; code counts the final rankings."""

    name = "ranked"
    description = "each debater ranks the options with reasons; Borda count decides"
    tasks = {
        (PHASE, 1): (
            "Rank every option, best first, each exactly once, and give for each the reason "
            "it stands at that rank: what it does better than the one below, or worse than "
            "the one above."
        ),
        (PHASE, 2): (
            "You see every debater's previous ranking with its reasons. Rank every option "
            "again, best first. Move an option if a reason convinced you; keep your order if "
            "not, and say in that option's reason which argument you reject and why."
        ),
    }
    template = TEMPLATE
    default_rounds = 1
    turn_kinds = {RANKING: Ranking}
    rule_reasons = {
        BORDA_COUNT: "it has the highest Borda count of the debaters' final rankings "
        "(a tie goes to the Condorcet winner, then to the option listed first)"
    }
    shows_votes = False
    votes_decide = False

    @classmethod
    def voters(cls, spec: Spec) -> list[str]:
        return spec.ids

    @classmethod
    def voter_count(cls, raw: RawSpec) -> int:
        return len(raw.entries)

    @classmethod
    def critique_pairs(cls, raw: RawSpec) -> list[tuple[Entry, Entry]]:
        return []  # nobody judges anybody's work: the count decides

    @classmethod
    def spec_problems(cls, raw: RawSpec) -> list[str]:
        problems = super().spec_problems(raw)
        votes = raw.debate.get("votes")
        if not (isinstance(votes, list) and len(votes) >= 2):
            problems.append(
                'debate.votes: ranked needs the options to rank, at least two ("a", "b")'
            )
        elif len(set(map(str, votes))) != len(votes):
            problems.append("debate.votes: each option once")
        return problems

    @classmethod
    def position(cls, spec: Spec, turn: Turn) -> str | None:
        """A ranking puts forward the option it ranks first."""
        if turn.kind != RANKING or not turn.content.get("ranking"):
            return None
        return str(turn.content["ranking"][0]["option"])

    @classmethod
    def result_lines(cls, result: dict[str, Any]) -> list[str]:
        points = result.get("borda")
        if not isinstance(points, dict):
            return []
        counted = ", ".join(f"{option} {n}" for option, n in points.items())
        condorcet_winner = result.get("condorcet_winner") or "none (no option beats every other)"
        return [
            f"Borda count ({result.get('rankings_counted', 0)} rankings): {counted}",
            f"Condorcet winner: {condorcet_winner}",
            f"Tie rule: {result.get('tie_rule', TIE_RULE)}",
        ]

    @classmethod
    def present(
        cls, kind: str, content: dict[str, Any], derived: dict[str, Any], variant: str | None
    ) -> Sequence[Section] | None:
        if kind != RANKING:
            return None
        rows = content["ranking"]
        if not isinstance(rows, list):
            raise TypeError("a ranking is a list")
        order = " > ".join(str(row["option"]) for row in rows)
        items = tuple(
            Item(str(row["reason"]), tag=str(row["option"]), status=f"#{place}", tone=Tone.MUTED)
            for place, row in enumerate(rows, 1)
        )
        return [
            Section("ranking", Emphasis.LEAD, order, Tone.STRONG),
            Section("reasons", Emphasis.LIST, items=items),
        ]

    @classmethod
    def scripted(cls, request: TurnRequest, script: Script) -> dict[str, Any]:
        """The spec's order, with the debater's scripted vote (if any) moved to the top."""
        first = cycled(script.votes, request.speaker_turn, "")
        order = [first] if first in request.votes else []
        order += [o for o in request.votes if o not in order]
        who = request.debater.id
        return {
            "ranking": [
                {"option": o, "reason": f"{who} puts {o} at rank {place} on balance."}
                for place, o in enumerate(order, 1)
            ]
        }

    # ------------------------------------------------------------ the run

    def phases(self, round_no: int) -> list[str]:
        return [PHASE]

    def slots(self, state: DebateState, round_no: int, phase: str, start: int) -> list[Slot]:
        return [Slot(start + i, round_no, phase, s, RANKING) for i, s in enumerate(self.spec.ids)]

    def context(self, state: DebateState, slot: Slot) -> list[ContextItem]:
        options = self.spec.debate.vote_options
        items = self.motion_items()
        items.append(("options", "Options to rank", "\n".join(f"- {o}" for o in options)))
        previous = slot.round - 1
        for t in state.turns:
            if t.round == previous and t.kind == RANKING and not t.invalid:
                lines = [
                    f"{place}. {row['option']}: {row['reason']}"
                    for place, row in enumerate(t.content["ranking"], 1)
                ]
                label = f"ranking:r{previous}:{t.speaker}"
                items.append((label, f"{t.speaker}'s ranking, round {previous}", "\n".join(lines)))
        return items + self.note_items(state)

    def slot_schema(self, state: DebateState, slot: Slot, schema: dict[str, Any]) -> dict[str, Any]:
        """Every option exactly once: the options as an enum, as many rows as options."""
        if slot.kind != RANKING:
            return schema
        options = self.spec.debate.vote_options
        out = copy.deepcopy(schema)
        rows = out["properties"]["ranking"]
        rows["minItems"] = rows["maxItems"] = len(options)
        rows["items"]["properties"]["option"] = {"type": "string", "enum": list(options)}
        return out

    def check_state(self, state: DebateState, slot: Slot, content: Any) -> None:
        """Each option ranked exactly once; each reason a statement of its own."""
        if not isinstance(content, Ranking):
            return
        d = self.spec.debate
        options = d.vote_options
        given = [row.option for row in content.ranking]
        problems = []
        unknown = [o for o in given if o not in options]
        if unknown:
            problems.append(f"ranking: {', '.join(map(repr, unknown))} is not an option")
        missing = [o for o in options if o not in given]
        if missing:
            problems.append(f"ranking: every option once; {', '.join(missing)} is missing")
        twice = sorted({o for o in given if given.count(o) > 1})
        if twice:
            problems.append(f"ranking: {', '.join(twice)} is ranked more than once")
        reasons: set[str] = set()
        for place, row in enumerate(content.ranking):
            problem = statement_problem(
                row.reason, votes=options, motion=d.motion, min_words=d.min_words
            )
            if problem is None and row.reason.strip().casefold() in reasons:
                problem = "repeats another rank's reason; say why this option stands here"
            if problem is not None:
                problems.append(f"ranking[{place}].reason: {problem}")
            reasons.add(row.reason.strip().casefold())
        if problems:
            raise TurnParseError("; ".join(problems))

    def after_phase(
        self, state: DebateState, round_no: int, phase: str, turns: list[Turn]
    ) -> Decision | None:
        if self.spec.debate.on_invalid == "escalate" and any(t.invalid for t in turns):
            return Decision(ESCALATE, DecisionRule.INVALID_TURN)
        return None  # the rounds run out, then the count decides (``exhausted``)

    def exhausted(self, state: DebateState) -> Decision:
        """The rounds are run: the Borda count of the latest rankings decides."""
        counted = count(self.spec.debate.vote_options, state.turns)
        if not counted["rankings_counted"]:
            return super().exhausted(state)
        return Decision(counted["borda_winner"], BORDA_COUNT)

    def report(self, state: DebateState) -> dict[str, Any]:
        return count(self.spec.debate.vote_options, state.turns)

    # ------------------------------------------------------------ verify

    def result_claims(self, data: RecordedSession, out: Claims, result: dict[str, Any]) -> None:
        """The count from the rankings in the file, and the decision the tie rule gives."""
        recount = count(data.spec.debate.vote_options, data.turns)
        how = "a recount of the latest valid rankings"
        for key in ("rankings_counted", "borda", "condorcet_winner", "borda_winner", "tie_rule"):
            out.same("result", key, result.get(key), recount[key], how)
        if result.get("decision_rule") == BORDA_COUNT:
            out.same(
                "result", "decision", result.get("decision"), recount["borda_winner"], TIE_RULE
            )
