"""One widget per completed turn: a position card or a critique card."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui.engine.records import Turn
from tui.textsafe import CARD_LIMIT, bound, clean, clean_line

VERDICT_LABEL = {"defects_found": "defects found", "no_defect_found": "no defect found"}


def _p(text: object, limit: int = CARD_LIMIT) -> str:
    return bound(clean(text), limit)


def turn_heading(turn: Turn) -> list[tuple[str, str] | str]:
    parts: list[tuple[str, str] | str] = [
        (f"#{turn.index + 1} r{turn.round} {clean_line(turn.phase)}", "$text-muted")
    ]
    if turn.target:
        parts.append((f" → {clean_line(turn.target)}", "$text-muted"))
    if turn.invalid:
        parts.append(("  ✗ invalid", "bold $error"))
    return parts


def turn_body(turn: Turn, limit: int = CARD_LIMIT) -> list[tuple[str, str] | str]:
    """The readable parts of a turn, as (text, style) pairs; never markup."""
    c = turn.content or {}
    parts: list[tuple[str, str] | str] = []
    if turn.invalid:
        if turn.error:
            parts.append((f"\n{_p(turn.error, 600)}", "$error"))
        if turn.raw:
            parts.append(("\nraw reply: ", "$text-muted"))
            parts.append(_p(turn.raw, limit))
        return parts
    kind = turn.kind
    if kind == "position":
        parts.append((f"\n{_p(c.get('stance', ''), limit)}", "bold"))
        if c.get("rationale"):
            parts.append(f"\n{_p(c.get('rationale', ''), limit)}")
    elif kind == "candidate":
        parts.append((f"\n{_p(c.get('candidate', ''), limit)}", "bold"))
        if c.get("rationale"):
            parts.append(f"\n{_p(c.get('rationale', ''), limit)}")
    elif kind in ("critique", "adversary_critique", "candidate_critique"):
        parts += _critique(c)
    elif kind == "challenge_report":
        parts += _challenges(c)
    elif kind == "defense":
        for r in list(c.get("responses") or [])[:20]:
            style = "$success" if r.get("status") == "addressed" else "$warning"
            parts.append((f"\n {clean_line(r.get('challenge_id', ''))} ", "bold"))
            parts.append((clean_line(r.get("status", "")), style))
            parts.append(f" {_p(r.get('answer', ''), 1200)}")
        if c.get("revised_artifact"):
            parts.append(("\nrevised artifact\n", "$text-muted"))
            parts.append(_p(c.get("revised_artifact", ""), limit))
    elif kind == "judgment":
        parts.append((f"\npick {clean_line(c.get('pick', ''))}", "bold $accent"))
        picked = (turn.derived or {}).get("picked")
        if picked:
            parts.append((f" = {clean_line(picked)}", "$text-muted"))
        parts.append(f"  {_p(c.get('reason', ''), 1200)}")
    else:  # a kind this console does not know yet: every field, literally
        for key, value in c.items():
            parts.append((f"\n{clean_line(key)}: ", "$text-muted"))
            parts.append(_p(value, 1200))
    rubric = (turn.derived or {}).get("rubric")
    if isinstance(rubric, dict):
        passed = bool(rubric.get("pass"))
        parts.append(("\nrubric ", "$text-muted"))
        parts.append(("pass" if passed else "fail", "bold $success" if passed else "bold $error"))
        parts.append(
            (f" · {clean_line(rubric.get('missing_evidence', 0))} missing evidence", "$text-muted")
        )
    if turn.vote:
        parts.append(("\nvote ", "$text-muted"))
        parts.append((f" {clean_line(turn.vote)} ", "bold $text on $primary-muted"))
    return parts


def _critique(c: dict) -> list[tuple[str, str] | str]:
    parts: list[tuple[str, str] | str] = []
    verdict = str(c.get("verdict", ""))
    style = "bold $success" if verdict == "no_defect_found" else "bold $warning"
    parts.append((f"\nverdict: {VERDICT_LABEL.get(verdict, clean_line(verdict))}", style))
    weaknesses = c.get("weaknesses") or []
    if weaknesses:
        parts.append(("\nweaknesses", "$text-muted"))
        for w in list(weaknesses)[:20]:
            parts.append(("\n • ", "$error"))
            parts.append(_p(w, 1200))
    suggestions = c.get("suggestions") or []
    if suggestions:
        parts.append(("\nsuggestions", "$text-muted"))
        for s in list(suggestions)[:20]:
            parts.append(("\n → ", "$success"))
            parts.append(_p(s, 1200))
    if "score" in c:
        parts.append((f"\nscore {clean_line(c.get('score'))}/100", "$text-muted"))
        parts.append((f"  routing: {clean_line(c.get('routing', ''))}", "bold"))
    return parts


SEVERITY_STYLE = {"critical": "bold $error", "significant": "bold $warning", "minor": "$text-muted"}


def _challenges(c: dict) -> list[tuple[str, str] | str]:
    parts: list[tuple[str, str] | str] = []
    verdict = str(c.get("verdict", ""))
    style = "bold $success" if verdict == "no_objections" else "bold $warning"
    parts.append((f"\nverdict: {clean_line(verdict).replace('_', ' ')}", style))
    parts.append((f"  convergence: {clean_line(c.get('convergence', ''))}", "$text-muted"))
    for ch in list(c.get("challenges") or [])[:20]:
        severity = str(ch.get("severity", ""))
        parts.append((f"\n [{clean_line(severity)}] ", SEVERITY_STYLE.get(severity, "")))
        parts.append((clean_line(ch.get("category", "")) + ": ", "bold"))
        parts.append(_p(ch.get("concern", ""), 600))
        parts.append(("\n   evidence: ", "$text-muted"))
        parts.append(_p(ch.get("evidence", ""), 600))
        parts.append(("\n   → ", "$success"))
        parts.append(_p(ch.get("recommendation", ""), 600))
    for a in list(c.get("assessments") or [])[:20]:
        parts.append((f"\n {clean_line(a.get('challenge_id', ''))}: ", "bold"))
        parts.append(clean_line(a.get("status", "")))
        if a.get("note"):
            parts.append(f" {_p(a.get('note', ''), 400)}")
    return parts


def turn_content(turn: Turn, limit: int = CARD_LIMIT) -> Content:
    return Content.assemble(*turn_heading(turn), *turn_body(turn, limit))


class TurnCard(Static):
    """A completed turn."""

    DEFAULT_CSS = """
    TurnCard { padding: 0 1; margin-bottom: 1; background: $boost; }
    TurnCard.-critique { border-left: outer $warning 60%; }
    TurnCard.-invalid { border-left: outer $error; }
    """

    def __init__(self, turn: Turn) -> None:
        super().__init__(turn_content(turn), markup=False)
        self.turn = turn
        if turn.kind != "position":
            self.add_class("-critique")
        if turn.invalid:
            self.add_class("-invalid")
