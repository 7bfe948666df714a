"""``delphi``: anonymous estimate rounds until the panel's spread is small enough.

Each round every panelist gives a number (in the spec's ``unit``) and a
rationale. From round 2 a panelist sees the previous round anonymised: its
median, its quartiles and its rationales, never who said what. The panel has
converged when (Q3 − Q1) / |median| ≤ ``convergence``; the decision is then the
median. Otherwise, after ``max_rounds``, the operator decides a number.

Written only against the ``Protocol`` interface: nothing outside this module
knows Delphi exists.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from tui.engine.basics.vocab import ESCALATE, DecisionRule
from tui.engine.core.parsing import TurnParseError
from tui.engine.core.records import Turn, TurnContent
from tui.engine.core.schedule import Slot
from tui.engine.core.state import DebateState, Decision
from tui.engine.core.substance import StatementRules
from tui.engine.protocols.base import Claims, ContextItem, Protocol, RecordedSession
from tui.engine.protocols.raw import Entry, RawSpec

if TYPE_CHECKING:
    from tui.engine.terms.spec import Spec

PHASE = "estimate"
DEFAULT_CONVERGENCE = 0.25  # (Q3 − Q1) / |median|: the middle half within a quarter of it
ROUNDS_KEY = "estimate_rounds"

TEMPLATE = """# A moot Delphi spec: anonymous estimate rounds until the panel agrees.
[debate]
title = "Effort for the billing export"
motion = "How many engineer-days will the billing CSV export take, tested and shipped?"
protocol = "delphi"
unit = "engineer-days"       # what every estimate counts
minimum = 0                  # the least estimate the unit allows: no negative days
max_rounds = 3               # rounds before the operator decides the number
convergence = 0.25           # converged when (Q3 - Q1) / |median| is at most this

[[debaters]]
id = "backend"
model = "local"
max_tokens = 120             # sized for the embedded model: raise it for a real one
role = "A backend engineer who has built exports before."

[[debaters]]
id = "qa"
model = "local"
max_tokens = 120
role = "A tester who counts the cases nobody mentions."

[[debaters]]
id = "lead"
model = "local"
max_tokens = 120
role = "A team lead who remembers how long the last three features took."
"""

# The turn kind this protocol adds, and the rule only it decides by (session files hold them).
ESTIMATE = "estimate"  # a number with its rationale
CONVERGED = "converged"  # the estimates' spread fell within the convergence bound


class Estimate(TurnContent):
    """A panelist's number and why; the estimate must be a finite number."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    estimate: float = Field(description="Your estimate, a single number in the spec's unit.")
    rationale: str = Field(min_length=1, description="Why this number, in one or two sentences.")


def number_text(value: float) -> str:
    """A number as the decision records it: whole numbers without a decimal point."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def round_stats(estimates: list[float], convergence: float) -> dict[str, Any]:
    """One round's median, quartiles, spread and whether it converged (pure, for verify)."""
    q1, median, q3 = statistics.quantiles(estimates, n=4, method="inclusive")
    spread = (q3 - q1) / abs(median) if median else (0.0 if q3 == q1 else math.inf)
    return {
        "n": len(estimates),
        "median": median,
        "quartiles": [q1, median, q3],
        "spread": round(spread, 6) if math.isfinite(spread) else -1.0,
        "converged": spread <= convergence,
    }


def round_estimates(turns: Sequence[Turn], round_no: int) -> list[float]:
    """The valid estimates given in a round, in turn order."""
    return [
        float(t.content["estimate"])
        for t in turns
        if t.round == round_no and t.kind == ESTIMATE and not t.invalid
    ]


def below_minimum(spec: Spec, estimate: float) -> str | None:
    """Why ``estimate`` is less than the unit allows (``debate.minimum``), or None."""
    least = spec.debate.minimum
    if least is None or estimate >= least:
        return None
    return (
        f"{number_text(estimate)} is below the least estimate the spec allows "
        f"({number_text(least)} {spec.debate.unit})"
    )


def convergence_of(spec: Spec) -> float:
    given = spec.debate.convergence
    return float(given) if given is not None else DEFAULT_CONVERGENCE


class DelphiProtocol(Protocol):
    """Every panelist estimates each round; code computes the spread and decides."""

    name = "delphi"
    description = "anonymous estimate rounds; the median decides once the spread is small"
    tasks = {
        (PHASE, 1): (
            "Give your own estimate as one number in the unit named, and the reasons for it: "
            "what you counted, what you assumed, and the biggest uncertainty."
        ),
        (PHASE, 2): (
            "You see the previous round's estimates anonymised: the median, the quartiles and "
            "every rationale. Give your estimate again. Move it if a rationale convinced you; "
            "keep it if not, and say which argument you reject and why."
        ),
    }
    template = TEMPLATE
    default_rounds = 3
    role_keys = frozenset({"unit", "minimum", "convergence"})
    views = ("distribution",)
    rule_reasons = {CONVERGED: "the panel's estimates converged on the median"}
    turn_kinds = {ESTIMATE: Estimate}
    statement_rules = {ESTIMATE: StatementRules(answers=("estimate",), reasons=("rationale",))}
    examples = {
        ESTIMATE: {
            "estimate": 10,
            "rationale": "Similar work took about this long, and the main risk is already counted.",
        }
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
        return []  # nobody judges anybody's work: the spread decides

    @classmethod
    def spec_problems(cls, raw: RawSpec) -> list[str]:
        problems = super().spec_problems(raw)
        if not isinstance(raw.debate.get("unit"), str):
            problems.append('debate.unit: required for delphi (what estimates count, "days")')
        convergence = raw.debate.get("convergence")
        if convergence is not None and (
            isinstance(convergence, bool) or not isinstance(convergence, int | float)
        ):
            problems.append("debate.convergence: a number, the largest (Q3 - Q1) / |median|")
        if len(raw.entries) < 2:
            problems.append("debaters: a Delphi panel needs at least two panelists")
        return problems

    @classmethod
    def decision_problem(cls, spec: Spec, value: str) -> str | None:
        """The operator decides a number, in the spec's unit, or defers it (``escalate``)."""
        if value == ESCALATE:
            return None
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            return f"{value!r} is not a number ({spec.debate.unit})"
        return below_minimum(spec, number)

    @classmethod
    def value_prompt(cls, spec: Spec) -> str | None:
        least = spec.debate.minimum
        floor = "" if least is None else f", at least {number_text(least)}"
        return f"the estimate: a number in {spec.debate.unit}{floor}"

    @classmethod
    def position(cls, spec: Spec, turn: Turn) -> str | None:
        """An estimate, in the unit: the decision is one of them, or the median between."""
        if turn.kind != ESTIMATE:
            return None
        return f"{number_text(turn.content['estimate'])} {spec.debate.unit}".rstrip()

    @classmethod
    def result_lines(cls, result: dict[str, Any]) -> list[str]:
        unit = result.get("unit", "")
        lines = []
        decision = result.get("decision")
        if decision not in (None, ESCALATE):
            lines.append(f"Estimate: {decision} {unit}".rstrip())
        rounds = result.get(ROUNDS_KEY) or []
        if rounds:
            q1, median, q3 = rounds[-1]["quartiles"]
            lines.append(
                f"Spread (round {rounds[-1]['round']}): median {number_text(median)}, "
                f"Q1 {number_text(q1)}, Q3 {number_text(q3)} {unit}; "
                f"relative spread {rounds[-1]['spread']} (converges at {result.get('convergence')})"
            )
        return lines

    @classmethod
    def result_summary(cls, key: str, value: Any) -> str | None:
        """Each round's median, quartiles and spread, and whether it converged."""
        if key != ROUNDS_KEY:
            return None
        return "; ".join(
            f"r{r['round']} median {r['median']:g} (Q1 {r['quartiles'][0]:g}, "
            f"Q3 {r['quartiles'][2]:g}), spread {r['spread']:g}"
            + (", converged" if r["converged"] else "")
            for r in value
        )

    # ------------------------------------------------------------ the run

    def phases(self, round_no: int) -> list[str]:
        return [PHASE]

    def slots(self, state: DebateState, round_no: int, phase: str, start: int) -> list[Slot]:
        return [Slot(start + i, round_no, phase, s, ESTIMATE) for i, s in enumerate(self.spec.ids)]

    def context(self, state: DebateState, slot: Slot) -> list[ContextItem]:
        d = self.spec.debate
        items = self.motion_items()
        items.append(("unit", "Unit", f"Give your estimate in {d.unit}."))
        previous = slot.round - 1
        if previous >= 1:
            own = next(
                (
                    t
                    for t in state.turns
                    if t.round == previous and t.speaker == slot.speaker and not t.invalid
                ),
                None,
            )
            if own is not None:
                items.append(
                    (
                        f"estimate:r{previous}:{slot.speaker}",
                        "Your estimate last round",
                        f"{number_text(own.content['estimate'])} {d.unit}",
                    )
                )
            items.append(self._panel_item(state.turns, previous))
        return items + self.note_items(state)

    def _panel_item(self, turns: Sequence[Turn], round_no: int) -> ContextItem:
        """The round anonymised: statistics and rationales, sorted by estimate, no ids."""
        unit = self.spec.debate.unit
        made = sorted(
            (t for t in turns if t.round == round_no and t.kind == ESTIMATE),
            key=lambda t: (t.invalid, t.content.get("estimate", 0.0), t.content.get("rationale")),
        )
        estimates = round_estimates(turns, round_no)
        lines = []
        if len(estimates) >= 2:
            q1, median, q3 = round_stats(estimates, convergence_of(self.spec))["quartiles"]
            lines.append(
                f"Median {number_text(median)} {unit}; quartiles Q1 {number_text(q1)}, "
                f"Q3 {number_text(q3)} ({len(estimates)} estimates)."
            )
        lines += [
            f"- {number_text(t.content['estimate'])} {unit}: {t.content.get('rationale', '')}"
            for t in made
            if not t.invalid
        ]
        return (
            f"panel:r{round_no}",
            f"Round {round_no} of the panel, anonymised",
            "\n".join(lines),
        )

    def check_state(self, state: DebateState, slot: Slot, content: Any) -> None:
        """An estimate below the unit's ``minimum`` is asked again (then recorded invalid)."""
        estimate = getattr(content, "estimate", None)
        if isinstance(estimate, int | float) and (problem := below_minimum(self.spec, estimate)):
            raise TurnParseError(f"estimate: {problem}")

    def after_phase(
        self, state: DebateState, round_no: int, phase: str, turns: list[Turn]
    ) -> Decision | None:
        if self.spec.debate.on_invalid == "escalate" and any(t.invalid for t in turns):
            return Decision(ESCALATE, DecisionRule.INVALID_TURN)
        estimates = round_estimates(state.turns, round_no)
        if len(estimates) < 2:
            return None
        stats = round_stats(estimates, convergence_of(self.spec))
        if stats["converged"]:
            return Decision(
                number_text(stats["median"]),
                CONVERGED,
                extra={"median": stats["median"], "quartiles": stats["quartiles"]},
            )
        return None

    def view_data(self, view: str, turns: Sequence[Turn]) -> dict[str, Any]:
        """The distribution panel: each round's estimates and statistics, the bound; a round
        that converged is marked so."""
        rounds = []
        for round_no in sorted({t.round for t in turns if t.kind == ESTIMATE}):
            estimates = round_estimates(list(turns), round_no)
            stats = round_stats(estimates, convergence_of(self.spec)) if len(estimates) >= 2 else {}
            mark = "converged" if stats.get("converged") else ""
            rounds.append({"round": round_no, "estimates": estimates, **stats, "mark": mark})
        return {
            "unit": self.spec.debate.unit or "",
            "convergence": convergence_of(self.spec),
            "panelists": len(self.spec.ids),
            "rounds": rounds,
        }

    def report(self, state: DebateState) -> dict[str, Any]:
        rounds = []
        for round_no in sorted({t.round for t in state.turns if t.kind == ESTIMATE}):
            estimates = round_estimates(state.turns, round_no)
            if len(estimates) >= 2:
                rounds.append(
                    {"round": round_no, **round_stats(estimates, convergence_of(self.spec))}
                )
        return {
            "unit": self.spec.debate.unit or "",
            "convergence": convergence_of(self.spec),
            ROUNDS_KEY: rounds,
        }

    # ------------------------------------------------------------ verify

    def turn_claims(self, data: RecordedSession, out: Claims, turn: Turn) -> None:
        """Anonymity: an estimate's ``saw`` never names another panelist."""
        if turn.kind != ESTIMATE:
            return
        others = set(data.spec.ids) - {turn.speaker}
        named = sorted({p for label in turn.saw for p in label.split(":") if p in others})
        out.check(
            f"turn {turn.index}",
            "anonymity",
            not named,
            "saw names no other panelist" if not named else f"saw names {', '.join(named)}",
        )

    def result_claims(self, data: RecordedSession, out: Claims, result: dict[str, Any]) -> None:
        """Each round's median and quartiles from the estimates, and the rule from the last."""
        convergence = convergence_of(data.spec)
        recorded = {row.get("round"): row for row in result.get(ROUNDS_KEY) or []}
        last: dict[str, Any] | None = None
        for round_no in sorted({t.round for t in data.turns if t.kind == ESTIMATE}):
            estimates = round_estimates(data.turns, round_no)
            if len(estimates) < 2:
                continue
            last = round_stats(estimates, convergence)
            row = recorded.get(round_no, {})
            where = f"result.{ROUNDS_KEY} (round {round_no})"
            for key in ("median", "quartiles", "spread", "converged"):
                out.same(where, key, row.get(key), last[key], "the round's estimates")
        if result.get("decision_rule") == CONVERGED:
            ok = last is not None and last["converged"]
            out.check(
                "result",
                "convergence",
                ok,
                f"spread {last['spread']} is within {convergence}"
                if ok and last is not None
                else f"no round's spread is within {convergence}",
            )
            if last is not None:
                out.same(
                    "result",
                    "decision",
                    result.get("decision"),
                    number_text(last["median"]),
                    "the last round's median",
                )
                out.same(
                    "result",
                    "quartiles",
                    result.get("quartiles"),
                    last["quartiles"],
                    "the last round's estimates",
                )
