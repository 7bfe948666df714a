"""Generic side panels a protocol chooses as its views: findings, judges, distribution,
and the rubric table.

Each view draws from engine-owned facts only: the plain data the protocol's
``view_data`` returns for it, and the turns' ``derived`` tables (``rubric``,
``picked``). Live, the screen asks the running engine's protocol; in replay,
:func:`tui.engine.record.replay.protocol_at` rebuilds the same protocol from the recorded
turns, so both screens show exactly what the engine decided. No panel knows which
protocol fed it. Every string from a model or a spec is cleaned and never parsed
as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.render.textsafe import clean_line, shorten

if TYPE_CHECKING:
    from tui.engine.core.records import Turn
    from tui.engine.specs.spec import Spec

Parts = list[tuple[str, str] | str]

# How each tone a protocol names shows (``tui.engine.core.sections.Tone``'s words).
TONE_STYLE = {
    "plain": "",
    "strong": "bold",
    "muted": "$text-muted",
    "good": "$success",
    "warn": "bold $warning",
    "bad": "bold $error",
    "accent": "bold $secondary",
}
# A judged pick's place in the protocol's ``picks`` list picks its colour; "none" is no pick.
PICK_STYLES = ("bold $primary", "bold $accent", "bold $secondary")
NO_PICK = "none"


def latest_rubric(turns: Sequence[Turn]) -> Turn | None:
    """The most recent turn the engine assessed against the rubric."""
    for turn in reversed(turns):
        if isinstance(turn.derived, dict) and "rubric" in turn.derived:
            return turn
    return None


def _quote(text: object, width: int) -> str:
    return "“" + shorten(str(text), width) + "”"


# ---------------------------------------------------------------- findings
def _toned(pairs: Any) -> Parts:
    """``[text, tone]`` pairs as parts: the protocol's words, in its tones."""
    return [(clean_line(str(t)), TONE_STYLE.get(str(tone), "")) for t, tone in pairs or []]


def findings_parts(data: dict[str, Any], width: int = 52) -> Parts:
    """A protocol's findings (challenges, objections): a header of facts and notes, then
    each finding with its level, group, state, text, steps and answer. Every word and
    tone is the protocol's (``view_data``); ``tones`` maps a level or state to its tone."""
    tones: dict[str, str] = dict(data.get("tones", {}))

    def style(word: str, default: str = "") -> str:
        return TONE_STYLE.get(tones.get(word, ""), default)

    parts: Parts = []
    for i, (label, value) in enumerate(data.get("facts", [])):
        parts.append((("  " if i else "") + f"{clean_line(str(label))} ", "$text-muted"))
        parts.append((clean_line(str(value)), style(str(value), "bold")))
    for line in data.get("notes", []):
        parts.append("\n")
        parts += _toned(line)
    items: list[dict[str, Any]] = data.get("items", [])
    if not items:
        parts.append((f"\n{clean_line(str(data.get('empty', 'none yet')))}", "italic $text-muted"))
        return parts
    for item in items:
        hot = bool(item.get("hot"))
        level, state = str(item.get("level", "")), str(item.get("state", ""))
        parts.append("\n")
        parts.append(("\n▌" if hot else "\n ", "bold $error" if hot else ""))
        parts.append(
            (f"{clean_line(str(item.get('id', '')))} ", "bold reverse $error" if hot else "bold")
        )
        parts.append((f"{shorten(level.upper(), 12)} ", style(level)))
        parts.append((shorten(str(item.get("group", "")), 18), "italic"))
        parts.append((f"  {clean_line(str(data.get('state_label', 'now')))} ", "$text-muted"))
        parts.append((shorten(state, 12), style(state)))
        parts.append(("\n  " + shorten(str(item.get("text", "")), width * 2), ""))
        steps = [(str(r), str(w)) for r, w in item.get("steps", [])]
        if steps:
            parts.append(("\n  ", ""))
            for i, (rnd, what) in enumerate(steps[-6:]):
                if i:
                    parts.append((" → ", "$text-muted"))
                parts.append((f"{shorten(rnd, 4)} ", "$text-muted"))
                parts.append((shorten(what, 12), style(what)))
        answer = item.get("answer")
        if answer:
            who, status, said = (str(a) for a in answer)
            parts.append((f"\n  {clean_line(who)} ", "$text-muted"))
            parts.append((shorten(status, 10), style(status, "bold")))
            parts.append((": ", "$text-muted"))
            parts.append(shorten(said, width * 2))
        else:
            parts.append(
                (f"\n  {clean_line(str(data.get('unanswered', '')))}", "italic $text-muted")
            )
    return parts


# ------------------------------------------------------------------ refine
def judge_parts(data: dict[str, Any], width: int = 52) -> Parts:
    """Each judge's pick per round, the agreement, the standing candidate and its streak; the
    picks of the round being judged (``pending``) first. The protocol names its own words:
    ``standing_label`` for the candidate that stands, ``picks`` for what a judge may pick
    (each its own colour) and ``orders`` for how each order it showed is shortened."""
    convergence = int(data.get("needed", 0))
    streak = int(data.get("streak", 0))
    standing: Turn | None = data.get("standing")
    styles = _pick_styles(data.get("picks", []))
    orders_shown: dict[str, str] = dict(data.get("orders", {}))
    parts: Parts = [(f"{clean_line(str(data.get('standing_label', 'standing')))} ", "$text-muted")]
    if standing is None:
        parts.append(("none yet", "italic $text-muted"))
    else:
        parts.append((f"#{standing.index} by {shorten(standing.speaker, 18)}", "bold"))
        parts.append("\n  " + _quote(data.get("standing_text", ""), width * 2 - 4))
    parts.append(("\nstreak ", "$text-muted"))
    filled = min(streak, convergence)
    parts.append(("●" * filled, "bold $success"))
    parts.append(("○" * max(0, convergence - filled), "$text-disabled"))
    parts.append((f" {streak}/{convergence} wins in a row to converge", "$text-muted"))
    rounds: list[dict[str, Any]] = data.get("rounds", [])
    pending: list[dict[str, Any]] = data.get("pending", [])
    if pending:  # newest first: the round being judged, then the counted rounds
        parts.append((f"\n\nround {pending[-1].get('round')}", "bold $secondary"))
        parts.append(("  judging…", "italic $accent"))
        for p in pending:
            orders = [str(o) for o in p.get("orders", []) if o]
            parts += _judge_line(
                str(p.get("judge", "")),
                str(p.get("pick", "")),
                str(p.get("reason", "")),
                [orders_shown.get(o, shorten(o, 8)) for o in orders],
                (styles, width),
            )
    elif not rounds:
        parts.append(("\n\nno judgement yet", "italic $text-muted"))
    for r in reversed(rounds[-4:]):
        winner = str(r.get("winner", ""))
        agreement = float(r.get("agreement", 0.0) or 0.0)
        parts.append((f"\n\nround {r.get('round')}", "bold $secondary"))
        parts.append(("  winner ", "$text-muted"))
        parts.append((shorten(winner, 12), styles.get(winner, "bold")))
        parts.append(("  agreement ", "$text-muted"))
        parts.append((f"{agreement:.0%}", "bold"))
        parts.append((f"  streak {r.get('streak', 0)}", "$text-muted"))
        for judge, p in dict(r.get("judges", {})).items():
            parts += _judge_line(
                str(judge),
                str(p.get("pick", "")),
                str(p.get("reason", "")),
                [orders_shown.get(str(o), shorten(str(o), 8)) for o in p.get("orders", []) if o],
                (styles, width),
            )
    if len(rounds) > 4:
        parts.append(
            (f"\n\n… {len(rounds) - 4} earlier rounds in the transcript (t)", "$text-muted")
        )
    return parts


# ------------------------------------------------------------ distribution
def _number(value: float) -> str:
    return f"{value:g}"


def strip(
    estimates: Sequence[float], quartiles: Sequence[float], low: float, high: float, width: int
) -> str:
    """One round on a shared scale: ``·`` estimates, ``▒`` between Q1 and Q3, ``┃`` median."""
    cells = [" "] * width

    def at(value: float) -> int:
        return 0 if high == low else round((value - low) / (high - low) * (width - 1))

    q1, median, q3 = quartiles
    for i in range(at(q1), at(q3) + 1):
        cells[i] = "▒"
    for value in estimates:
        cells[at(value)] = "·" if cells[at(value)] == " " else "●"
    cells[at(median)] = "┃"
    return "".join(cells)


def distribution_parts(data: dict[str, Any], width: int = 40) -> Parts:
    """Each round's estimates on one scale, with its median, quartiles and spread; a round
    that met the protocol's bound carries the word it is marked with (``mark``)."""
    unit = str(data.get("unit", ""))
    rounds: list[dict[str, Any]] = data.get("rounds", [])
    parts: Parts = [
        ("unit ", "$text-muted"),
        (shorten(unit, 24), "bold"),
        ("  converges at ", "$text-muted"),
        (f"{data.get('convergence')}", "bold"),
    ]
    everything = [v for r in rounds for v in r.get("estimates", [])]
    if not everything:
        parts.append(("\nno estimate yet", "italic $text-muted"))
        return parts
    low, high = min(everything), max(everything)
    parts.append(
        (
            f"\n{_number(low)}".ljust(width // 2) + f"{_number(high)}".rjust(width // 2 + 1),
            "$text-muted",
        )
    )
    for r in rounds:
        parts.append((f"\nr{r['round']} ", "bold $secondary"))
        if "quartiles" not in r:
            parts.append(
                (
                    f"{len(r.get('estimates', []))} of {data.get('panelists')} so far",
                    "italic $accent",
                )
            )
            continue
        mark = str(r.get("mark") or "")
        style = "bold $success" if mark else "$warning"
        parts.append((strip(r["estimates"], r["quartiles"], low, high, width), style))
        q1, median, q3 = r["quartiles"]
        parts.append(
            (
                f"\n   median {_number(median)}  Q1 {_number(q1)}  Q3 {_number(q3)}"
                f"  spread {r.get('spread')}",
                "$text-muted",
            )
        )
        if mark:
            parts.append(("  " + clean_line(mark), "bold $success"))
    return parts


def _pick_styles(picks: Sequence[str]) -> dict[str, str]:
    styles = {str(pick): PICK_STYLES[i % len(PICK_STYLES)] for i, pick in enumerate(picks)}
    return styles | {NO_PICK: "$text-muted"}


def _judge_line(
    judge: str, pick: str, reason: str, orders: list[str], look: tuple[dict[str, str], int]
) -> Parts:
    styles, width = look
    label = " ".join(o for o in orders if o)
    parts: Parts = [
        ("\n " + shorten(judge, 12).ljust(12), "bold"),
        (" " + shorten(pick, 10).ljust(10), styles.get(pick, "bold")),
    ]
    if label:
        parts.append((f" {label}", "$text-muted"))
    if reason:
        parts.append("\n   " + shorten(reason, width * 2 - 4))
    return parts


# ------------------------------------------------------------------ rubric
def rubric_parts(turn: Turn, spec: Spec | None = None, width: int = 52) -> Parts:
    """Per property: evidence (admitted ✓/✗ and why), rationale, claimed and final verdict."""
    report: dict[str, Any] = dict(turn.derived.get("rubric") or {})
    props: list[dict[str, Any]] = list(report.get("properties") or [])
    passed = bool(report.get("pass"))
    missing = int(report.get("missing_evidence", 0) or 0)
    questions: dict[str, str] = {}
    if spec is not None and spec.rubric is not None:
        questions = {p.id: p.question for p in spec.rubric.properties}
    parts: Parts = [
        (f"turn #{turn.index} ", "$text-muted"),
        (shorten(turn.speaker, 18), "bold"),
        (f" ({clean_line(turn.kind).replace('_', ' ')})", "$text-muted"),
        ("\n", ""),
        (
            " PASS " if passed else " FAIL ",
            "bold $background on $success" if passed else "bold $background on $error",
        ),
        (
            f"  {missing} of {len(props)} properties missing evidence",
            "bold $warning" if missing else "$text-muted",
        ),
        ("\n\n" + "property".ljust(18) + "claimed  verdict", "underline $text-muted"),
    ]
    for p in props:
        verdict = str(p.get("verdict", "no"))
        claimed = str(p.get("claimed", ""))
        forced = claimed == "yes" and verdict != "yes"
        parts.append(("\n" + shorten(str(p.get("property", "")), 17).ljust(18), "bold"))
        parts.append((shorten(claimed, 8).ljust(9), "$text-muted"))
        parts.append((shorten(verdict, 6), "bold $success" if verdict == "yes" else "bold $error"))
        if forced:
            parts.append((" forced", "$warning"))
        question = questions.get(str(p.get("property", "")))
        if question:
            parts.append(("\n  " + shorten(question, width * 2 - 2), "italic $text-muted"))
        evidence = list(p.get("evidence") or [])
        if not evidence:
            parts.append(("\n  ✗ no evidence given", "$error"))
        for e in evidence[:8]:
            ok = bool(e.get("admitted"))
            parts.append(("\n  ✓ " if ok else "\n  ✗ ", "bold $success" if ok else "bold $error"))
            parts.append((shorten(str(e.get("kind", "")), 18) + " ", "$text-muted"))
            parts.append(_quote(e.get("quote", ""), width - 8))
            parts.append(
                (
                    "\n    " + shorten(str(e.get("why", "")), width * 2 - 4),
                    "$success" if ok else "$warning",
                )
            )
        if len(evidence) > 8:
            parts.append((f"\n  … {len(evidence) - 8} more evidence items", "$text-muted"))
        rationale = str(p.get("rationale", ""))
        if rationale:
            parts.append(("\n  rationale ", "$text-muted"))
            parts.append(shorten(rationale, width * 2 - 12))
    return parts


# ----------------------------------------------------------------- widgets
class _Panel(VerticalScroll):
    """A bordered, scrollable panel holding one Static of assembled, markup-free text."""

    TITLE = ""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = self.TITLE
        self.text = ""

    def compose(self) -> ComposeResult:
        yield Static(Content(""), markup=False, classes="panel-body")

    def show(self, parts: Parts, subtitle: str | None = None) -> None:
        content = Content.assemble(*parts)
        self.text = content.plain
        self.query_one(".panel-body", Static).update(content)
        self.border_subtitle = subtitle


class ViewPanel(_Panel):
    """A panel a protocol chooses by name; it draws the plain data the protocol gives it."""

    VIEW = ""

    def update_from(self, data: dict[str, Any], turns: Sequence[Turn]) -> None:
        raise NotImplementedError


class FindingsPanel(ViewPanel):
    """Findings a protocol keeps (the challenge protocol's challenges): each with its level,
    state across rounds and answer; ``alarm`` marks the panel (a release it blocks)."""

    TITLE = VIEW = "findings"

    def update_from(self, data: dict[str, Any], turns: Sequence[Turn]) -> None:
        self.border_title = clean_line(str(data.get("title", self.TITLE)))
        self.set_class(bool(data.get("alarm")), "-blocked")
        self.show(findings_parts(data), clean_line(str(data.get("subtitle", ""))) or None)


class JudgePanel(ViewPanel):
    """Judged rounds: the judges' picks per round, agreement, what stands and its streak."""

    TITLE = "judge panel"
    VIEW = "judges"

    def update_from(self, data: dict[str, Any], turns: Sequence[Turn]) -> None:
        self.show(judge_parts(data), f"streak {data.get('streak')}/{data.get('needed')}")


class DistributionPanel(ViewPanel):
    """Estimates per round: a strip from lowest to highest, the quartile box, the median."""

    TITLE = VIEW = "distribution"

    def update_from(self, data: dict[str, Any], turns: Sequence[Turn]) -> None:
        rounds = data.get("rounds", [])
        last = rounds[-1] if rounds else {}
        spread = last.get("spread")
        self.show(
            distribution_parts(data),
            f"spread {spread} of {data.get('convergence')}" if spread is not None else None,
        )


class RubricPanel(_Panel):
    """The rubric table of the latest assessed turn."""

    TITLE = "rubric"

    def update_from(self, turns: Sequence[Turn], spec: Spec | None = None) -> None:
        turn = latest_rubric(turns)
        if turn is None:
            self.remove_class("-fail", "-pass")
            self.show([("no assessed turn yet", "italic $text-muted")])
            return
        passed = bool(turn.derived["rubric"].get("pass"))
        self.set_class(passed, "-pass")
        self.set_class(not passed, "-fail")
        self.show(rubric_parts(turn, spec), "pass" if passed else "fail")
