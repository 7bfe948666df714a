"""Exports of a saved session: a Markdown report, or the result/handoff JSON."""

from __future__ import annotations

import json
from typing import Any

from tui.engine.protocols.refine import handoff
from tui.engine.records import Turn
from tui.engine.session import SessionData


def to_json(data: SessionData) -> str:
    """Machine-readable: spec, result (with protocol reports), turns and operator actions."""
    doc: dict[str, Any] = {
        "schema": "moot.export/1",
        "session": data.meta,
        "title": data.spec.debate.title,
        "motion": data.spec.debate.motion,
        "protocol": data.spec.debate.protocol,
        "result": data.result,
        "turns": [t.to_record() for t in data.turns],
        "operator_actions": data.actions,
    }
    if data.spec.debate.protocol == "refine" and data.result:
        doc["handoff"] = handoff(data.result)
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _md(text: Any) -> str:
    """Model text quoted so it cannot restructure the report."""
    return str(text).replace("\r", "").replace("\n", "\n> ")


def _turn_md(t: Turn) -> list[str]:
    head = f"### Turn {t.index + 1} · round {t.round} · {t.phase} · `{t.speaker}`"
    if t.target:
        head += f" → `{t.target}`"
    lines = [head, ""]
    meta = f"model `{t.model}` ({t.family}), saw: {', '.join(t.saw) or 'nothing'}"
    if t.invalid:
        lines += [f"**Invalid turn** — {_md(t.error or '')}", "", f"> {_md(t.raw or '')}", ""]
    elif t.kind == "position":
        c = t.content
        lines += [
            f"> **Stance:** {_md(c.get('stance', ''))}",
            ">",
            f"> **Rationale:** {_md(c.get('rationale', ''))}",
            "",
        ]
    else:
        c = t.content
        lines.append(
            f"Verdict: **{c.get('verdict', '')}**"
            + (f", score {c['score']}, routing **{c.get('routing')}**" if "score" in c else "")
        )
        lines.append("")
        lines += [f"- weakness: {_md(w)}" for w in c.get("weaknesses", [])]
        lines += [f"- suggestion: {_md(s)}" for s in c.get("suggestions", [])]
        lines.append("")
    if t.vote:
        meta = f"vote **{t.vote}** · " + meta
    lines += [meta, ""]
    return lines


def to_markdown(data: SessionData) -> str:
    d = data.spec.debate
    r = data.result or {}
    lines = [
        f"# {d.title}",
        "",
        f"**Motion:** {_md(d.motion)}",
        "",
        f"Protocol `{d.protocol}` · debaters: "
        + ", ".join(f"`{x.id}` ({x.model})" for x in data.spec.debaters),
        "",
    ]
    lines += ["## Result", ""]
    if r:
        lines += [
            f"- decision: **{r.get('decision')}** by rule `{r.get('decision_rule')}` "
            f"({r.get('decided_by')})"
        ]
        if r.get("rationale"):
            lines.append(f"- operator rationale: {_md(r['rationale'])}")
        tally = r.get("vote_tally", {})
        lines.append("- tally: " + ", ".join(f"{k} {v}" for k, v in tally.items()))
        lines.append(f"- rounds run: {r.get('rounds_run')} of {r.get('max_rounds')}")
        for key in (
            "proposal_id",
            "weakness_count",
            "critique_score",
            "verdict",
            "routing_decision",
            "cross_family_held",
            "weak_adversarial_pass",
        ):
            if key in r:
                lines.append(f"- {key}: {r[key]}")
    else:
        lines.append("_The session has not ended._")
    lines += ["", "## Transcript", ""]
    for t in data.turns:
        lines += _turn_md(t)
    if data.actions:
        lines += ["## Operator actions", ""]
        for a in data.actions:
            extra = ", ".join(
                f"{k}: {_md(v)}" for k, v in a.items() if k not in ("at", "action", "after_turn")
            )
            lines.append(f"- {a['at']} after turn {a['after_turn']}: **{a['action']}** {extra}")
        lines.append("")
    return "\n".join(lines)
