"""Exports written next to the session file: a Markdown report or the result JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui.engine.session import SessionData, load_session


def _md_escape(text: str) -> str:
    return "".join("\\" + c if c in "\\`*_[]<>#|" else c for c in text)


def markdown_report(data: SessionData) -> str:
    d = data.spec.debate
    lines = [f"# {_md_escape(d.title)}", "", f"**Motion:** {_md_escape(d.motion)}", ""]
    lines.append(f"Protocol `{d.protocol}`, debaters: " + ", ".join(data.spec.ids))
    lines.append("")
    result = data.result or {}
    if result:
        lines += [
            "## Result",
            "",
            f"- decision: **{_md_escape(str(result.get('decision', '')))}**",
            f"- rule: `{result.get('decision_rule', '')}`, decided by {result.get('decided_by', '')}",
        ]
        if result.get("rationale"):
            lines.append(f"- rationale: {_md_escape(str(result['rationale']))}")
        tally = result.get("vote_tally", {})
        if tally:
            lines.append("- tally: " + ", ".join(f"{k} {v}" for k, v in tally.items()))
        lines.append("")
    lines += ["## Transcript", ""]
    actions: dict[int, list[dict[str, Any]]] = {}
    for a in data.actions:
        actions.setdefault(int(a.get("after_turn", 0)), []).append(a)
    for t in data.turns:
        for a in actions.pop(t.index, []):
            lines += [f"> operator {a.get('action')}: {_md_escape(str(a.get('text') or a.get('rationale') or a.get('vote') or ''))}", ""]
        head = f"### {t.index + 1}. {t.speaker} — round {t.round}, {t.phase}"
        if t.target:
            head += f" (on {t.target})"
        lines += [head, ""]
        c = t.content
        if t.invalid:
            lines += [f"*invalid turn*: {_md_escape(t.error or '')}", ""]
        elif t.kind == "position":
            lines += [_md_escape(str(c.get("stance", ""))), "", _md_escape(str(c.get("rationale", ""))), ""]
        else:
            lines.append(f"verdict: {c.get('verdict', '')}")
            lines += [f"- weakness: {_md_escape(str(w))}" for w in c.get("weaknesses", [])]
            lines += [f"- suggestion: {_md_escape(str(s))}" for s in c.get("suggestions", [])]
            lines.append("")
        if t.vote:
            lines += [f"vote: **{_md_escape(t.vote)}**", ""]
    for rest in actions.values():
        for a in rest:
            lines += [f"> operator {a.get('action')}", ""]
    return "\n".join(lines)


def export_session(path: str | Path, fmt: str) -> Path:
    """Write ``<session>.md`` or ``<session>.json`` beside the session file.

    Uses the CLI's exporter (``tui.export``) when present, so ``moot export`` and
    the palette write the same files; falls back to this module's report.
    """
    try:
        from tui import export as shared
    except ImportError:
        shared = None  # type: ignore[assignment]
    data = load_session(path)
    src = Path(path)
    if fmt == "markdown":
        out = src.with_suffix(".md")
        fn = getattr(shared, "to_markdown", None)
        out.write_text(fn(data) if fn else markdown_report(data), encoding="utf-8")
    else:
        out = src.with_suffix(".json")
        fn = getattr(shared, "to_json", None)
        if fn is not None:
            out.write_text(fn(data), encoding="utf-8")
        else:
            payload = {
                "title": data.spec.debate.title,
                "motion": data.spec.debate.motion,
                "result": data.result,
                "turns": [t.to_record() for t in data.turns],
                "operator_actions": data.actions,
            }
            out.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    return out
