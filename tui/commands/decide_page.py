"""The decide page's HTML: what a person needs to judge an escalated session, and the form.

A phone opens it from a decide link, so it is one small page with its style inline
and no script: the motion, why it stopped, the tally, each debater's latest stance,
the critiques standing, then the vote (or the value) and a rationale. Every string
from the file (model text above all) goes through :func:`html_text`; nothing here
decides anything (``tui.commands.decide`` does).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tui.engine.basics.vocab import ESCALATE, is_deferral
from tui.engine.core.records import Turn
from tui.engine.core.state import DebateState
from tui.engine.protocols import protocol_class
from tui.engine.record.replay import protocol_at
from tui.engine.record.session import SessionData
from tui.render.present import Emphasis, Section, present
from tui.render.textsafe import bound, html_text

TEXT_LIMIT = 4000  # characters of one section shown; the file holds the rest

STYLE = """
*{box-sizing:border-box}
body{margin:0;font:16px/1.45 system-ui,sans-serif;color:#1b1b1b;background:#f6f6f4}
main{max-width:46rem;margin:0 auto;padding:1rem}
h1{font-size:1.35rem;margin:.2rem 0 .4rem}
h2{font-size:1.05rem;margin:1.4rem 0 .4rem;border-bottom:1px solid #ccc}
h3{font-size:1rem;margin:.8rem 0 .2rem}
p,li,dd,td,th{overflow-wrap:anywhere;white-space:pre-wrap}
article{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.2rem .7rem;margin:.5rem 0}
table{border-collapse:collapse}th,td{padding:.1rem .8rem .1rem 0;text-align:left}
.muted{color:#555}.refused{background:#fde8e8;border:1px solid #d33;padding:.5rem;border-radius:6px}
.done{background:#e6f4ea;border:1px solid #2a7;padding:.2rem .7rem;border-radius:6px}
.done h2{border:0;margin:.4rem 0}dl{margin:.3rem 0}dd{margin:0 0 .3rem 1rem}
fieldset{border:0;padding:0;margin:0}
label{display:block;margin:.35rem 0}
input[type=radio]{width:1.2rem;height:1.2rem;vertical-align:middle;margin-right:.4rem}
textarea,input[type=text]{width:100%;font:inherit;padding:.5rem}
textarea{min-height:7rem}
button{font:inherit;font-weight:600;padding:.7rem 1.4rem;margin:.8rem 0;width:100%}
"""


@dataclass(frozen=True, slots=True)
class Form:
    """Where the form posts, its page token, and what was posted before a refusal."""

    action: str
    page_token: str
    refused: str | None = None
    vote: str = ""
    rationale: str = ""


def _doc(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html_text(title)}</title><style>{STYLE}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def message_page(heading: str, text: str) -> str:
    """A page that only says something: a refused link, a missing session."""
    return _doc(heading, f"<h1>{html_text(heading)}</h1><p>{html_text(text)}</p>")


def _section(s: Section) -> str:
    if s.emphasis == Emphasis.LEAD:
        return f"<p><strong>{html_text(bound(s.text, TEXT_LIMIT))}</strong></p>"
    if s.emphasis == Emphasis.TEXT:
        return f"<p><em>{html_text(s.label)}:</em> {html_text(bound(s.text, TEXT_LIMIT))}</p>"
    if s.emphasis == Emphasis.FACTS:
        facts = " · ".join(f"{html_text(f.label)}: {html_text(f.value)}" for f in s.facts)
        return f'<p class="muted">{facts}</p>'
    items = "".join(
        "<li>"
        + "".join(f"{html_text(p)} " for p in (i.tag, i.status) if p)
        + html_text(bound(i.text, TEXT_LIMIT))
        + "".join(f"<br><em>{html_text(d.label)}:</em> {html_text(d.value)}" for d in i.details)
        + "</li>"
        for i in s.items
    )
    return f"<p><em>{html_text(s.label)}:</em></p><ul>{items}</ul>"


def _turn(heading: str, turn: Turn) -> str:
    vote = f' <span class="muted">· votes {html_text(turn.vote)}</span>' if turn.vote else ""
    body = "".join(_section(s) for s in present(turn))
    return f"<article><h3>{heading}{vote}</h3>{body}</article>"


def _latest(data: SessionData) -> tuple[dict[str, Turn], dict[tuple[str, str], Turn]]:
    """Each debater's latest stance (a turn aimed at no one), and the latest critique each
    critic aimed at each debater: what stands when the debate stopped."""
    stances: dict[str, Turn] = {}
    critiques: dict[tuple[str, str], Turn] = {}
    for turn in data.turns:
        if turn.invalid:
            continue
        if turn.target is None:
            stances[turn.speaker] = turn
        else:
            critiques[(turn.speaker, turn.target)] = turn
    return stances, critiques


def _summary(data: SessionData) -> str:
    debate, result = data.spec.debate, data.result or {}
    rule = str(result.get("decision_rule", ""))
    if is_deferral(result.get("decision"), rule):
        why = f"deferred by the operator: {result.get('rationale', '')}"
    else:
        why = f"stopped by {rule}" if rule else "no result yet"
    parts = [
        f"<h1>{html_text(debate.title)}</h1>",
        f'<p class="muted">{html_text(debate.protocol)} · {html_text(why)}</p>',
        f"<h2>Motion</h2><p>{html_text(bound(debate.motion, TEXT_LIMIT))}</p>",
    ]
    tally = result.get("vote_tally")
    if protocol_class(data.spec).shows_votes and isinstance(tally, dict) and tally:
        rows = "".join(
            f"<tr><th>{html_text(vote)}</th>\n<td>{html_text(count)}</td></tr>"
            for vote, count in tally.items()
        )
        parts.append(f"<h2>Tally</h2><table>{rows}</table>")
    stances, critiques = _latest(data)
    ids = [d.id for d in data.spec.debaters]
    parts.append("<h2>Stances</h2>")
    parts += [_turn(html_text(who), stances[who]) for who in ids if who in stances]
    if critiques:
        parts.append("<h2>Open critiques</h2>")
        parts += [
            _turn(f"{html_text(critic)} on {html_text(target)}", turn)
            for (critic, target), turn in critiques.items()
        ]
    return "".join(parts)


def _vetoes(data: SessionData, votes: Iterable[str]) -> dict[str, str]:
    """The votes the protocol refuses now, and why: shown disabled, as the console does."""
    state = DebateState(data.spec, data.spec.max_rounds)
    for turn in data.turns:
        state.add(turn)
    protocol = protocol_at(data.spec, data.turns)
    return {v: why for v in votes if (why := protocol.operator_veto(state, v))}


def _choices(data: SessionData, form: Form) -> str:
    prompt = protocol_class(data.spec).value_prompt(data.spec)
    if prompt is not None:
        return (
            f'<label for="value">{html_text(prompt)}</label>'
            f'<input type="text" id="value" name="value" inputmode="decimal" required '
            f'value="{html_text(form.vote)}">'
        )
    votes = data.spec.debate.vote_options
    if not votes:  # open votes: the answer is typed
        return (
            '<label for="vote">Your answer</label>'
            f'<input type="text" id="vote" name="vote" required value="{html_text(form.vote)}">'
        )
    vetoes = _vetoes(data, votes)
    rows = []
    for vote in votes:
        state = " disabled" if vote in vetoes else (" checked" if vote == form.vote else "")
        note = " (defer: it stays awaiting a person)" if vote == ESCALATE else ""
        why = vetoes.get(vote)
        refused = f' <span class="muted">refused now: {html_text(why)}</span>' if why else ""
        rows.append(
            f'<label><input type="radio" name="vote" value="{html_text(vote)}" required{state}>'
            f"{html_text(vote)}{note}{refused}</label>"
        )
    return f"<fieldset><legend><strong>Your vote</strong></legend>{''.join(rows)}</fieldset>"


def decide_page(data: SessionData, form: Form) -> str:
    """The page for a session awaiting a person: the debate, then the form."""
    refused = (
        f'<p class="refused" role="alert">Not recorded: {html_text(form.refused)}</p>'
        if form.refused
        else ""
    )
    body = (
        _summary(data)
        + "<h2>Your decision</h2>"
        + refused
        + f'<form method="post" action="{html_text(form.action)}">'
        + f'<input type="hidden" name="csrf" value="{html_text(form.page_token)}">'
        + _choices(data, form)
        + '<label for="rationale">Rationale</label>'
        + f'<textarea id="rationale" name="rationale" required>{html_text(form.rationale)}'
        + '</textarea><button type="submit">Decide</button></form>'
    )
    return _doc(f"Decide: {data.spec.debate.title}", body)


def decided_page(data: SessionData, signer: str, *, just_now: bool = False) -> str:
    """Who decided, when, how and why, in place of the form; ``just_now``: by this page."""
    result = data.result or {}
    decides = [a for a in data.actions if a.get("action") == "decide"]
    at = str(decides[-1].get("at", "")) if decides else ""
    via = result.get("decided_via")
    how = f"via {via}" if via else "in moot itself (the console or moot decide)"
    if result.get("decided_by") != "operator":
        how = "by its own rule"
    heading = f"Decided: {result.get('decision')}" if just_now else "Already decided"
    facts = [
        ("Decision", f"{result.get('decision')} ({result.get('decision_rule')})"),
        ("By", f"the {result.get('decided_by')}, signed by {signer}"),
        ("When", at or "not recorded"),
        ("How", how),
        ("Rationale", str(result.get("rationale", ""))),
    ]
    rows = "".join(f"<dt>{html_text(k)}</dt><dd>{html_text(v)}</dd>" for k, v in facts if v)
    done = f'<div class="done" role="status"><h2>{html_text(heading)}</h2><dl>{rows}</dl></div>'
    body = done + _summary(data)  # first: on a phone the answer is what is on screen
    return _doc(f"{heading}: {data.spec.debate.title}", body)
