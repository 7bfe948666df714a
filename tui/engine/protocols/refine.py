"""``refine``: author, critic, second author, synthesizer, then a blind judge panel.

Every role starts cold and sees only what the loop allows. Judges compare the
incumbent and the challenger as X and Y, in an order drawn from a recorded seed;
the engine maps their picks back, counts them and keeps the streak.
"""

from __future__ import annotations

import random
import re
import secrets
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from tui.engine.basics.vocab import ESCALATE, DecisionRule
from tui.engine.core.records import NegativeChannel, Turn, TurnContent, required_text
from tui.engine.core.schedule import Slot
from tui.engine.core.sections import (
    Emphasis,
    Fact,
    Item,
    Section,
    Tone,
    critique_sections,
    each,
    facts,
    listed,
    recorded,
    text,
)
from tui.engine.core.state import DebateState, Decision
from tui.engine.core.substance import StatementRules
from tui.engine.protocols.base import (
    CRITIQUE_STATEMENTS,
    Claims,
    ContextItem,
    Protocol,
    RecordedSession,
    clipped,
    cycled,
    scripted_critique,
)
from tui.engine.protocols.raw import Entry, RawSpec

if TYPE_CHECKING:
    from tui.engine.core.ports import TurnRequest
    from tui.engine.terms.spec import RubricRole, Script, Spec

# The turn kinds this protocol adds, and the rule only it decides by (session files hold them).
CANDIDATE = "candidate"
CANDIDATE_CRITIQUE = "candidate_critique"
JUDGMENT = "judgment"
JUDGE_CONVERGENCE = "judge_convergence"


class Candidate(TurnContent):
    """A candidate answer to the motion (refine's authors and synthesizer)."""

    candidate: str = Field(min_length=1, description="The full candidate answer.")
    rationale: str = Field(default="", description="Why this candidate is strong.")

    @field_validator("candidate")
    @classmethod
    def _has_text(cls, value: str) -> str:
        return required_text(value)


class CandidateCritique(NegativeChannel):
    """The negative channel: weaknesses, or the explicit verdict no_defect_found.

    As is, it is refine's critic, which attacks a candidate and casts no vote.
    """


class Judgment(TurnContent):
    """A blind judge's pick between two unlabelled candidates."""

    pick: Literal["X", "Y"] = Field(description="The better candidate: X or Y.")
    reason: str = Field(min_length=1, description="The decisive reason, one or two sentences.")


_RUBRIC_ROLES: dict[str, RubricRole] = {
    CANDIDATE_CRITIQUE: "critic",
    JUDGMENT: "judges",
}
INCUMBENT, CHALLENGER = "incumbent", "challenger"  # what a judge's pick resolves to
INCUMBENT_FIRST, CHALLENGER_FIRST = "incumbent-first", "challenger-first"


def judge_orders(seed: int, round_no: int, judges: list[str], swap: bool) -> list[tuple[str, str]]:
    """(judge, order) pairs for a round; reproducible from the seed alone."""
    rng = random.Random(f"moot-refine:{seed}:{round_no}")
    out = []
    for judge in judges:
        first = INCUMBENT_FIRST if rng.random() < 0.5 else CHALLENGER_FIRST
        out.append((judge, first))
        if swap:
            other = CHALLENGER_FIRST if first == INCUMBENT_FIRST else INCUMBENT_FIRST
            out.append((judge, other))
    return out


def resolve_pick(pick: str, order: str) -> str:
    """X/Y back to incumbent/challenger for the order the judge was shown."""
    x_is_incumbent = order == INCUMBENT_FIRST
    return "incumbent" if (pick == "X") == x_is_incumbent else "challenger"


# A blinded label in a judge's reason: "X", "Y", "candidate X", "option Y" (not "X-ray").
_LABEL = re.compile(r"(?<![\w-])(?:(?:[Cc]andidate|[Oo]ption)\s+)?([XY])(?![\w-])")


def unblinded(reason: str, order: str, incumbent: str, challenger: str) -> str:
    """A judge's reason with X and Y named as the candidates the judge was shown.

    The labels were drawn per judge, so once exported they mean nothing on their own.
    """
    x_is_incumbent = order == INCUMBENT_FIRST

    def name(m: re.Match[str]) -> str:
        named = incumbent if (m.group(1) == "X") == x_is_incumbent else challenger
        return named[:1].upper() + named[1:] if m.start() == 0 else named

    return _LABEL.sub(name, reason)


def _unblinded_reasons(result: dict[str, Any], turns: Sequence[Turn]) -> dict[str, str] | None:
    """Each judge's reasons in the last judged round, unblinded; None if there is no round."""
    rounds = result.get("judge_rounds")
    if not isinstance(rounds, list) or not rounds or not isinstance(rounds[-1], dict):
        return None
    last = rounds[-1]
    by_index = {t.index: t for t in turns}

    def named(role: str, index: object) -> str:
        turn = by_index.get(index) if isinstance(index, int) else None
        return f"the {role} (turn {index}, {turn.speaker})" if turn else f"the {role}"

    incumbent = named("incumbent", last.get("incumbent_turn"))
    challenger = named("challenger", last.get("challenger_turn"))
    reasons: dict[str, list[str]] = {}
    for t in turns:
        if t.kind == JUDGMENT and t.round == last.get("round") and not t.invalid:
            text = unblinded(
                str(t.content.get("reason", "")), t.variant or "", incumbent, challenger
            )
            reasons.setdefault(t.speaker, []).append(text)
    return {judge: " / ".join(texts) for judge, texts in reasons.items()}


# The commented starting spec ``moot new --protocol refine`` writes; it validates as written.
TEMPLATE = """# A moot refine spec: author, critic, second author, synthesizer, blind judge panel.
[debate]
title = "Name the on-call tool"
motion = "Propose a name and a one-line description for the on-call handover tool."
protocol = "refine"
authors = ["author-a", "author-b"]
critic = "critic"            # may not be an author: self-critique is refused
synthesizer = "synth"
judges = ["judge-1", "judge-2", "judge-3"]   # an odd panel of 3 to 7, none an author
convergence = 3              # incumbent wins in a row that end the loop
position_swap = false        # true: ask each judge both ways; a flip is no preference
# seed = 42                  # judge X/Y order; drawn and recorded when absent
max_rounds = 3
retries = 3                  # the embedded model's junk answer is asked again three times

[[debaters]]
id = "author-a"
model = "local"
max_tokens = 120             # sized for the embedded model: raise it for a real one

[[debaters]]
id = "author-b"
model = "local"
max_tokens = 120

[[debaters]]
id = "critic"
model = "local"
max_tokens = 160

[[debaters]]
id = "synth"
model = "local"
max_tokens = 160

[[debaters]]
id = "judge-1"
model = "local"
max_tokens = 80

[[debaters]]
id = "judge-2"
model = "local"
max_tokens = 80

[[debaters]]
id = "judge-3"
model = "local"
max_tokens = 80
"""


DEFAULT_CONVERGENCE = 3  # incumbent wins in a row, when the spec names none


def wins_needed(spec: Spec) -> int:
    """How many incumbent wins in a row converge (``convergence``, a whole number here)."""
    given = spec.debate.convergence
    return int(given) if given is not None else DEFAULT_CONVERGENCE


class RefineProtocol(Protocol):
    """The incumbent defends its place each round; N wins in a row converge."""

    name = "refine"
    description = "rewrites judged blind until one candidate keeps winning"
    tasks = {
        ("author_a", 0): (
            "Write the strongest answer you can to the question: specific, complete, decisive."
        ),
        ("critique", 0): (
            "Attack this candidate. You did not write it and owe it nothing. List its concrete "
            "weaknesses and how to fix them; only if you find none, give no_defect_found."
        ),
        ("author_b", 0): (
            "Write a better candidate than candidate A: keep its strengths, fix every weakness the "
            "critique names."
        ),
        ("synthesis", 0): (
            "Merge the strongest elements of candidates A and B into one candidate that is better "
            "than both."
        ),
        ("judging", 0): (
            "Two candidates answer the question, labelled X and Y. Nothing else is known about "
            "them. Pick the better one on content alone and give the decisive reason."
        ),
    }
    template = TEMPLATE
    views = ("judges",)
    default_rounds = 8
    role_keys = frozenset(
        {"authors", "critic", "synthesizer", "judges", "convergence", "seed", "position_swap"}
    )
    debater_keys = frozenset({"authors", "critic", "synthesizer", "judges"})
    shows_votes = False
    rule_reasons = {JUDGE_CONVERGENCE: "the judges preferred it in enough rounds in a row"}
    negative_channels = {CANDIDATE_CRITIQUE: ("weaknesses", "no_defect_found")}
    verifier_kinds = Protocol.verifier_kinds | {CANDIDATE_CRITIQUE, JUDGMENT}
    statement_rules = {
        CANDIDATE: StatementRules(
            worded=("candidate", "rationale"), answers=("candidate",), reasons=("rationale",)
        ),
        CANDIDATE_CRITIQUE: CRITIQUE_STATEMENTS,
        JUDGMENT: StatementRules(channel=(("reason", ""),), answers=("pick",)),
    }
    examples = {
        CANDIDATE: {
            "candidate": "Do it in two steps, and check the result after the first.",
            "rationale": "A first step that is checked limits the damage of a mistake.",
        },
        CANDIDATE_CRITIQUE: {
            "weaknesses": ["The candidate does not say how success is measured."],
            "suggestions": ["Name one number that shows whether it worked."],
        },
        JUDGMENT: {"reason": "X gives a reason that can be checked; Y does not."},
    }
    turn_kinds = {
        CANDIDATE: Candidate,
        CANDIDATE_CRITIQUE: CandidateCritique,
        JUDGMENT: Judgment,
    }

    @classmethod
    def present(
        cls, kind: str, content: dict[str, Any], derived: dict[str, Any], variant: str | None
    ) -> Sequence[Section] | None:
        """A candidate leads with its text; a critique as any; a pick with what it picked."""
        if kind == CANDIDATE:
            return [
                Section("candidate", Emphasis.LEAD, str(content.get("candidate", "")), Tone.STRONG),
                *text("rationale", content.get("rationale")),
            ]
        if kind == CANDIDATE_CRITIQUE:
            return critique_sections(content)
        if kind != JUDGMENT:
            return None
        pick, picked = str(content.get("pick", "")), derived.get("picked")
        return [
            facts("pick", Fact("pick", f"{pick} = {picked}" if picked else pick, Tone.ACCENT)),
            *([facts("order", Fact("order shown", variant), full_only=True)] if variant else []),
            *text("reason", content.get("reason")),
        ]

    @classmethod
    def position(cls, spec: Spec, turn: Turn) -> str | None:
        """A candidate puts forward its text."""
        if turn.kind == CANDIDATE:
            return str(turn.content.get("candidate", ""))
        return super().position(spec, turn)

    def rubric_role(self, slot: Slot) -> RubricRole | None:
        """The critic of a candidate is a critic; a judge is one of the judges."""
        return _RUBRIC_ROLES.get(slot.kind) or super().rubric_role(slot)

    @classmethod
    def scripted(cls, request: TurnRequest, script: Script) -> dict[str, Any]:
        """A candidate from the stances, a pick of X, or a critique that casts no vote."""
        who, n, kind = request.debater.id, request.speaker_turn, request.slot.kind
        if kind == CANDIDATE:
            return {
                "candidate": cycled(script.stances, n, f"{who}: candidate {n}."),
                "rationale": cycled(script.rationales, n, f"{who} explains candidate {n}."),
            }
        if kind == JUDGMENT:
            return {"pick": "X", "reason": cycled(script.rationales, n, f"{who} prefers X.")}
        content = scripted_critique(request, script)
        del content["vote"]
        return content

    @classmethod
    def drawn_at_start(cls, spec: Spec) -> dict[str, Any]:
        """The judge order must be reproducible: draw the seed now, unless the spec sets it."""
        return {"seed": secrets.randbelow(2**31)} if spec.debate.seed is None else {}

    @classmethod
    def handoff(cls, result: dict[str, Any], turns: Sequence[Turn]) -> dict[str, Any] | None:
        """The refine handoff document: what a next step needs, nothing else.

        The judges' arguments name the candidates, not the X and Y each judge was shown.
        """
        key_arguments = result.get("key_arguments", [])
        minority_dissent = result.get("minority_dissent", [])
        reasons = _unblinded_reasons(result, turns)
        if reasons is not None:
            last = result["judge_rounds"][-1]
            majority = last.get("winner") if last.get("winner") != "tie" else None
            picks = last.get("judges") if isinstance(last.get("judges"), dict) else {}
            chose = {j: p.get("pick") if isinstance(p, dict) else None for j, p in picks.items()}
            key_arguments = [
                reasons.get(j, "") for j, pick in chose.items() if majority and pick == majority
            ]
            minority_dissent = [
                f"{j}: {reasons.get(j, '')}"
                for j, pick in chose.items()
                if not majority or pick != majority
            ]
        return {
            "winning_candidate": result.get("winning_candidate"),
            "convergence_round": result.get("convergence_round"),
            "judge_agreement": result.get("judge_agreement"),
            "key_arguments": key_arguments,
            "minority_dissent": minority_dissent,
            "decision": result.get("decision"),
            "decision_rule": result.get("decision_rule"),
        }

    @classmethod
    def voters(cls, spec: Spec) -> list[str]:
        return list(spec.debate.judges or [])

    @classmethod
    def voter_count(cls, raw: RawSpec) -> int:
        return len(raw.listed("judges"))

    @classmethod
    def critique_pairs(cls, raw: RawSpec) -> list[tuple[Entry, Entry]]:
        """The critic attacks author A's candidate; every judge weighs every maker's."""
        authors = raw.listed("authors")
        makers = [*authors, raw.debate.get("synthesizer")]
        return raw.pairs([raw.debate.get("critic")], authors[:1]) + raw.pairs(
            raw.listed("judges"), makers
        )

    @classmethod
    def spec_problems(cls, raw: RawSpec) -> list[str]:
        """Two authors, a critic who writes no candidate, an odd panel judging no own work."""
        problems = super().spec_problems(raw)
        convergence = raw.debate.get("convergence")
        if convergence is not None and (
            isinstance(convergence, bool)
            or not isinstance(convergence, int)
            or not 1 <= convergence <= 50
        ):
            problems.append("debate.convergence: a whole number of wins in a row, 1 to 50")
        authors = raw.debate.get("authors")
        if not isinstance(authors, list) or len(authors) != 2:
            problems.append("debate.authors: name exactly two debaters, author A and author B")
        authors = raw.listed("authors")
        for i, a in enumerate(authors):
            if isinstance(a, str) and a not in raw.ids:
                problems.append(f"debate.authors[{i}]: {a!r} is not a debater id")
        problems += raw.role_problems(cls.name, "critic") + raw.role_problems(
            cls.name, "synthesizer"
        )
        critic, synthesizer = raw.debate.get("critic"), raw.debate.get("synthesizer")
        if critic is not None and critic in [*authors, synthesizer]:
            problems.append(
                f"debate.critic: {critic!r} also writes candidates (author or "
                "synthesizer); self-critique is refused"
            )
        judges = raw.debate.get("judges")
        if not isinstance(judges, list) or not judges:
            problems.append(
                "debate.judges: required for the refine protocol (an odd panel of 3 to 7)"
            )
            return problems
        if len(judges) % 2 == 0 or not 3 <= len(judges) <= 7:
            problems.append(f"debate.judges: an odd panel of 3 to 7 judges, not {len(judges)}")
        if len(set(map(str, judges))) != len(judges):
            problems.append("debate.judges: a judge is named twice")
        makers = {*(a for a in authors if isinstance(a, str)), synthesizer}
        for i, j in enumerate(judges):
            if isinstance(j, str) and j not in raw.ids:
                problems.append(f"debate.judges[{i}]: {j!r} is not a debater id")
            if j in makers:
                problems.append(
                    f"debate.judges[{i}]: {j!r} wrote a candidate; a judge may not judge its own work"
                )
        return problems

    def __init__(self, spec: Spec) -> None:
        super().__init__(spec)
        d = spec.debate
        self.author_a, self.author_b = (d.authors or ["", ""])[:2]
        self.critic = d.critic or ""
        self.synthesizer = d.synthesizer or ""
        self.judges = list(d.judges or [])
        self.seed = d.seed if d.seed is not None else 0
        self.incumbent: Turn | None = None
        self.candidates: dict[str, Turn] = {}  # this round's A critique, B and C
        self.streak = 0
        self.rounds: list[dict[str, Any]] = []

    # ------------------------------------------------------------- schedule
    def phases(self, round_no: int) -> list[str]:
        base = ["critique", "author_b", "synthesis", "judging"]
        return (["author_a", *base]) if round_no == 1 else base

    def slots(self, state: DebateState, round_no: int, phase: str, start: int) -> list[Slot]:
        if phase == "author_a":
            return [Slot(start, round_no, phase, self.author_a, CANDIDATE)]
        if phase == "critique":
            return [
                Slot(
                    start,
                    round_no,
                    phase,
                    self.critic,
                    CANDIDATE_CRITIQUE,
                    self._inc_author(),
                )
            ]
        if phase == "author_b":
            return [Slot(start, round_no, phase, self.author_b, CANDIDATE)]
        if phase == "synthesis":
            return [Slot(start, round_no, phase, self.synthesizer, CANDIDATE)]
        pairs = judge_orders(self.seed, round_no, self.judges, self.spec.debate.position_swap)
        return [
            Slot(start + i, round_no, phase, judge, JUDGMENT, variant=order)
            for i, (judge, order) in enumerate(pairs)
        ]

    def _inc_author(self) -> str:
        return self.incumbent.speaker if self.incumbent is not None else self.author_a

    @staticmethod
    def _candidate_item(label: str, heading: str, turn: Turn) -> ContextItem:
        return (label, heading, str(turn.content.get("candidate", "")))

    def context(self, state: DebateState, slot: Slot) -> list[ContextItem]:
        items: list[ContextItem] = [("motion", "The question", self.spec.debate.motion)]
        inc = self.incumbent
        if slot.phase == "critique" and inc is not None:
            items.append(
                self._candidate_item(f"candidate:t{inc.index}", "Candidate to attack", inc)
            )
        elif slot.phase == "author_b" and inc is not None:
            items.append(self._candidate_item(f"candidate:t{inc.index}", "Candidate A", inc))
            crit = self.candidates.get("critique")
            if crit is not None:
                items.append(self.critique_item(crit, "Critique of candidate A"))
        elif slot.phase == "synthesis" and inc is not None:
            b = self.candidates.get("b")
            items.append(self._candidate_item(f"candidate:t{inc.index}", "Candidate A", inc))
            if b is not None:
                items.append(self._candidate_item(f"candidate:t{b.index}", "Candidate B", b))
        elif slot.phase == "judging" and inc is not None:
            challenger = self.candidates.get("c")
            if challenger is not None:
                pair = [inc, challenger] if slot.variant == INCUMBENT_FIRST else [challenger, inc]
                items.append(self._candidate_item("X", "Candidate X", pair[0]))
                items.append(self._candidate_item("Y", "Candidate Y", pair[1]))
        return items + self.note_items(state)

    def cross_family_against(self, slot: Slot) -> list[str]:
        if slot.kind == JUDGMENT:
            return [self.author_a, self.author_b, self.synthesizer]
        if slot.kind == CANDIDATE_CRITIQUE:
            return [self._inc_author()]
        return []

    def annotate(self, state: DebateState, slot: Slot, turn: Turn) -> None:
        if slot.kind == JUDGMENT:
            turn.derived["picked"] = resolve_pick(turn.content["pick"], slot.variant or "")

    # ------------------------------------------------------------ decisions
    def after_phase(
        self, state: DebateState, round_no: int, phase: str, turns: list[Turn]
    ) -> Decision | None:
        if phase != "judging":
            turn = turns[-1]
            if turn.invalid:
                return Decision(ESCALATE, DecisionRule.INVALID_TURN)
            key = {"author_a": "a", "critique": "critique", "author_b": "b", "synthesis": "c"}[
                phase
            ]
            self.candidates[key] = turn
            if phase == "author_a":
                self.incumbent = turn
            return None
        return self._judge(round_no, turns)

    def _judge(self, round_no: int, turns: list[Turn]) -> Decision | None:
        by_judge: dict[str, list[Turn]] = {}
        for t in turns:
            by_judge.setdefault(t.speaker, []).append(t)
        picks: dict[str, dict[str, Any]] = {}
        for judge, ts in by_judge.items():
            valid = [t for t in ts if not t.invalid]
            resolved = {p for t in valid if isinstance(p := t.derived.get("picked"), str)}
            if len(valid) != len(ts) or not valid:
                pick = "none"  # an invalid judgement expresses no preference
            elif len(resolved) == 1:
                pick = resolved.pop()
            else:
                pick = "none"  # flipped under position swap: no preference
            picks[judge] = {
                "pick": pick,
                "reason": " / ".join(str(t.content.get("reason", "")) for t in valid),
                "orders": [t.variant for t in ts],
            }
        counts = Counter(p["pick"] for p in picks.values())
        inc_votes, chal_votes = counts.get("incumbent", 0), counts.get("challenger", 0)
        incumbent, challenger = self.incumbent, self.candidates.get("c")
        if chal_votes > inc_votes and challenger is not None:
            winner = "challenger"
            self.incumbent = challenger
            self.streak = 0
        elif inc_votes > chal_votes:
            winner = "incumbent"
            self.streak += 1
        else:
            winner = "tie"  # no majority: the incumbent stays, the streak does not grow
        majority = winner if winner != "tie" else None
        agree = sum(1 for p in picks.values() if majority and p["pick"] == majority)
        self.rounds.append(
            {
                "round": round_no,
                "incumbent_turn": incumbent.index if incumbent else -1,
                "challenger_turn": challenger.index if challenger else -1,
                "winner": winner,
                "judges": picks,
                "agreement": round(agree / len(picks), 3) if picks else 0.0,
                "streak": self.streak,
            }
        )
        self.candidates = {}
        if self.streak >= wins_needed(self.spec):
            return Decision("release", JUDGE_CONVERGENCE)
        return None

    def view_data(self, view: str, turns: Sequence[Turn]) -> dict[str, Any]:
        """The judges panel: incumbent, streak against the wins needed, the judged rounds,
        and the picks of the round being judged (an invalid judgment picked none)."""
        judged = {int(r.get("round", 0)) for r in self.rounds}
        pending = [
            {
                "round": t.round,
                "judge": t.speaker,
                "pick": "none" if t.invalid else str((t.derived or {}).get("picked", "none")),
                "reason": "" if t.invalid else str((t.content or {}).get("reason", "")),
                "orders": [t.variant or ""],
            }
            for t in turns
            if t.kind == JUDGMENT and t.round not in judged
        ]
        incumbent = self.incumbent
        return {
            "standing_label": "incumbent",
            "standing": incumbent,
            "standing_text": incumbent.content.get("candidate", "") if incumbent else "",
            "picks": [INCUMBENT, CHALLENGER],
            "orders": {INCUMBENT_FIRST: "X=inc", CHALLENGER_FIRST: "X=chal"},
            "streak": self.streak,
            "needed": wins_needed(self.spec),
            "rounds": self.rounds,
            "pending": pending,
        }

    @classmethod
    def chosen_text(cls, result: dict[str, Any]) -> str | None:
        """The winning candidate is the option chosen."""
        text = result.get("winning_candidate")
        return text if isinstance(text, str) else None

    @classmethod
    def arguments(
        cls, result: dict[str, Any], turns: Sequence[Turn]
    ) -> tuple[list[str], list[str]]:
        """The majority judges' reasons, naming the candidates (the handoff's)."""
        said = (cls.handoff(result, turns) or {}).get("key_arguments")
        return [f"{a} (a judge's reason)" for a in each(said)], []

    @classmethod
    def dissent(cls, result: dict[str, Any], turns: Sequence[Turn]) -> list[str]:
        """The judges who picked otherwise, with their reasons."""
        return [str(d) for d in each((cls.handoff(result, turns) or {}).get("minority_dissent"))]

    @classmethod
    def result_sections(cls, result: dict[str, Any], turns: Sequence[Turn]) -> list[Section]:
        """The judges' agreement and streak, each round's picks, the winning candidate, and
        the judges' arguments naming candidates (the handoff's), not X and Y."""
        names = {
            "judge_agreement": "agreement",
            "incumbent_streak": "streak",
            "convergence_round": "converged in round",
        }
        rounds = [
            Item(
                f"{r['winner']} (agreement {r['agreement']}, streak {r['streak']}): "
                + ", ".join(f"{j} {p['pick']}" for j, p in r["judges"].items()),
                tag=f"round {r['round']}",
            )
            for r in each(result.get("judge_rounds"))
        ]
        handoff = cls.handoff(result, turns) or {}
        return [
            *recorded("judges", result, names),
            *listed("judge rounds", rounds),
            *text("winning candidate", result.get("winning_candidate"), Tone.STRONG),
            *listed("key arguments", [Item(str(a)) for a in each(handoff.get("key_arguments"))]),
            *listed(
                "minority dissent", [Item(str(d)) for d in each(handoff.get("minority_dissent"))]
            ),
        ]

    @classmethod
    def result_summary(cls, key: str, value: Any) -> str | None:
        """Each judge round's winner and streak; the winning candidate cut short."""
        if key == "judge_rounds":
            return "; ".join(f"r{r['round']} {r['winner']} (streak {r['streak']})" for r in value)
        return clipped(str(value)) if key == "winning_candidate" else None

    def report(self, state: DebateState) -> dict[str, Any]:
        last = self.rounds[-1] if self.rounds else None
        out: dict[str, Any] = {
            "authors": [self.author_a, self.author_b],
            "critic_id": self.critic,
            "synthesizer_id": self.synthesizer,
            "judges": self.judges,
            "seed": self.seed,
            "position_swap": self.spec.debate.position_swap,
            "convergence": wins_needed(self.spec),
            "incumbent_streak": self.streak,
            "judge_rounds": self.rounds,
        }
        if self.incumbent is not None:
            out["winning_candidate"] = str(self.incumbent.content.get("candidate", ""))
            out["winning_turn"] = self.incumbent.index
        if last is not None:
            majority = last["winner"] if last["winner"] != "tie" else None
            judges = last["judges"]
            out["judge_agreement"] = last["agreement"]
            out["key_arguments"] = [
                p["reason"] for p in judges.values() if majority and p["pick"] == majority
            ]
            out["minority_dissent"] = [
                f"{j}: {p['reason']}"
                for j, p in judges.items()
                if not majority or p["pick"] != majority
            ]
        converged = self.streak >= wins_needed(self.spec)
        out["convergence_round"] = self.rounds[-1]["round"] if converged and self.rounds else None
        judged = [t for t in state.turns if t.kind == JUDGMENT and t.cross_family_held is not None]
        if judged:
            out["cross_family_held"] = all(t.cross_family_held for t in judged)
            out["weak_adversarial_pass"] = not out["cross_family_held"]
        return out

    def result_claims(self, data: RecordedSession, out: Claims, result: dict[str, Any]) -> None:
        """Refine's judge rounds: each majority from the picks, the streak and convergence counts."""
        if result.get("judge_rounds") is None:
            return
        by_index = {t.index: t for t in data.turns}
        streak = 0
        for row in result.get("judge_rounds") or []:
            where = f"result.judge_rounds (round {row.get('round')})"
            judges = row.get("judges") or {}
            picks = Counter(str(p.get("pick")) for p in judges.values())
            inc, chal = picks.get("incumbent", 0), picks.get("challenger", 0)
            winner = "challenger" if chal > inc else "incumbent" if inc > chal else "tie"
            out.same(where, "winner", row.get("winner"), winner, "a count of the judges' picks")
            streak = (
                0 if winner == "challenger" else streak + 1 if winner == "incumbent" else streak
            )
            out.same(where, "streak", row.get("streak"), streak, "the winners so far")
            majority = winner if winner != "tie" else None
            agree = sum(1 for p in judges.values() if majority and p.get("pick") == majority)
            share = round(agree / len(judges), 3) if judges else 0.0
            out.same(
                where, "agreement", row.get("agreement"), share, "the judges with the majority"
            )
            for judge, pick in judges.items():
                made = [
                    t
                    for t in data.turns
                    if t.round == row.get("round") and t.speaker == judge and t.kind == JUDGMENT
                ]
                valid = [t for t in made if not t.invalid]
                resolved = {t.derived.get("picked") for t in valid}
                own = resolved.pop() if len(valid) == len(made) and len(resolved) == 1 else "none"
                out.same(where, f"judges.{judge}", pick.get("pick"), own, "the judge's turns")
            for key in ("incumbent_turn", "challenger_turn"):
                number = row.get(key)
                ok = number == -1 or (
                    isinstance(number, int)
                    and number in by_index
                    and by_index[number].kind == CANDIDATE
                )
                out.check(where, key, ok, f"turn {number} is a candidate" if ok else "no candidate")
        if result.get("decision_rule") == JUDGE_CONVERGENCE:
            needed = wins_needed(data.spec)
            out.check(
                "result",
                "convergence",
                streak >= needed,
                f"the incumbent won {streak} rounds in a row; convergence needs {needed}",
            )
