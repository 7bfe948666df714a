"""``moot export --format adr``: a session as an architecture decision record (MADR 4).

Every statement comes from the session file: the motion and its documents (with
their hashes), who signed it, the positions held and by whom, the chosen option and the rule
that chose it, the arguments for it and the weaknesses raised (and whether a
later turn answered each), dissent, the admitted evidence, and whether ``moot
verify`` holds. Model text goes through tui.render.textsafe's Markdown sanitiser, so it
can never restructure the record.

The status and the decision-makers are written twice: as MADR 4's YAML front
matter, and as a list under the title, which is where log4brains reads them
(MADR 2's layout; log4brains does not read front matter). The front matter ends
with a blank line, so a Markdown reader that does not know front matter sees a
paragraph and a rule, not a heading, before the title.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from tui.engine.basics.vocab import ESCALATE, DecidedBy, TurnKind
from tui.engine.core.records import Turn
from tui.engine.core.sections import Quoted
from tui.engine.protocols import protocol_class
from tui.engine.record.redacted import redacted_session
from tui.engine.record.session import SessionData
from tui.engine.record.signing import check as check_signatures
from tui.plural import counted, do_not_hold
from tui.render.export import outcome_lines, verification
from tui.render.present import SHAPE_ERRORS
from tui.render.textsafe import md_code, md_inline, md_text

T = TypeVar("T")

_TITLE_LENGTH = 80
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

# Why a shared rule ended the debate, in words for "Chosen option: ..., because ..."
# (a protocol's own rules are in its ``rule_reasons``).
_BECAUSE = {
    "threshold_vote": "the votes reached the consensus threshold",
    "max_rounds_exhausted": "the rounds ran out with no decision",
    "rubric_failed": "the rubric's required evidence did not hold",
    "operator_decision": "the operator decided so",
    "operator_escalation": "the operator escalated it",
    "invalid_turn": "a turn was invalid and the policy is to escalate",
    "provider_failure": "a provider failed",
    "session_full": "the session file had no room for another turn",
}


def _said(ask: Callable[..., list[T]], *about: Any) -> list[T]:
    """A protocol hook's lines about the record; a damaged field (verify names it) says
    nothing here, as a damaged field the ADR reads itself does."""
    try:
        return ask(*about)
    except SHAPE_ERRORS:
        return []


def _listed(value: object) -> list[Any]:
    """A stored list; in a damaged file (``moot verify`` names it) another type holds none."""
    return value if isinstance(value, list) else []


def _table(value: object) -> dict[str, Any]:
    """A stored table; in a damaged file another type holds none."""
    return value if isinstance(value, dict) else {}


def status(data: SessionData) -> str:
    """MADR's word: accepted (the first vote), rejected (another), proposed (no decision yet).

    An open vote's answer, or a value a protocol decides (an estimate), is accepted.
    An escalation, or anything else that is not one of the spec's votes, leaves the
    decision to a person: the record stays proposed.
    """
    r = data.result
    if not r:
        return "proposed"
    decision = r.get("decision")
    options = data.spec.debate.vote_options
    if decision == ESCALATE:  # escalated, or deferred by the operator: still to decide
        return "proposed"
    if not options or protocol_class(data.spec).value_prompt(data.spec) is not None:
        return "accepted"  # open votes, or a decided value: the answer reached is the decision
    if decision not in options:
        return "proposed"
    return "accepted" if decision == options[0] else "rejected"


def decision_makers(data: SessionData) -> list[str]:
    """Who decided: the operator, or the debaters whose votes or verdicts the rules count."""
    if (data.result or {}).get("decided_by") == DecidedBy.OPERATOR:
        return ["operator"]
    voters = [v for v in protocol_class(data.spec).voters(data.spec) if v]
    return voters or list(data.spec.ids)


def _date(data: SessionData) -> str:
    """The day of the last record: when the decision (or the latest action) was made."""
    stamps = [str(data.meta.get("created", ""))]
    stamps += [t.started_at for t in data.turns] + [str(a.get("at", "")) for a in data.actions]
    days = [s[:10] for s in stamps if _DATE.match(s)]
    return max(days) if days else ""


def _front_matter(data: SessionData) -> list[str]:
    """MADR 4's metadata; names are JSON strings, which YAML reads as quoted strings."""
    lines = ["---", f"status: {status(data)}"]
    if day := _date(data):
        lines.append(f"date: {day}")
    lines += ["decision-makers:", *(f"    - {json.dumps(who)}" for who in decision_makers(data))]
    return [*lines, "", "---"]


def _quote(text: Any, indent: str = "") -> list[str]:
    return [(indent + "> " + line).rstrip() for line in md_text(text).split("\n")]


def _position(data: SessionData, turn: Turn) -> str | None:
    """The position a turn puts forward, if it puts one forward (the protocol says which)."""
    return None if turn.invalid else protocol_class(data.spec).position(data.spec, turn)


def _key(text: str) -> str:
    return " ".join(text.split())


def options(data: SessionData) -> list[tuple[str, list[tuple[str, int]]]]:
    """Each distinct position (spacing aside) with who held it, in order of first statement."""
    held: dict[str, tuple[str, list[tuple[str, int]]]] = {}
    if data.spec.debate.artifact:
        owner = data.spec.debate.defender or "the artifact's author"
        held[_key(data.spec.debate.artifact)] = (data.spec.debate.artifact, [(owner, 0)])
    for turn in data.turns:
        text = _position(data, turn)
        if text:
            held.setdefault(_key(text), (text, []))[1].append((turn.speaker, turn.index))
    return list(held.values())


def title(text: str) -> str:
    """An option's title: its first line (a heading's marks dropped), cut at a word near 80."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    flat = _key(first.strip().lstrip("#"))
    if len(flat) <= _TITLE_LENGTH:
        return flat
    cut = flat[:_TITLE_LENGTH].rsplit(" ", 1)[0] or flat[:_TITLE_LENGTH]
    return cut.rstrip(",;:.") + "…"


def titled(data: SessionData) -> list[tuple[str, str, list[tuple[str, int]]]]:
    """Each option with a title of its own: a repeated title names where the option began."""
    out = []
    seen: Counter[str] = Counter(title(text) for text, _ in options(data))
    for text, holders in options(data):
        name = title(text)
        if seen[name] > 1:
            first = holders[0][1]
            name += " (the spec)" if first == 0 else f" (turn {first})"
        out.append((name, text, holders))
    return out


def _holders(holders: list[tuple[str, int]]) -> str:
    by: dict[str, list[str]] = {}
    for who, index in holders:
        by.setdefault(who, []).append("the spec" if index == 0 else f"turn {index}")
    return "; ".join(f"{md_code(who)} ({', '.join(where)})" for who, where in by.items())


def chosen(data: SessionData) -> str | None:
    """The text of the option the decision chose, when the decision chose a position.

    refine's winning candidate; a considered option the decision names as it is (a
    ranking's option); else, for the spec's first vote (a release), the latest
    position put forward; for another vote, the final position held by most of the
    debaters who voted for it.
    """
    r = data.result or {}
    decision = r.get("decision")
    options = data.spec.debate.vote_options  # empty when votes are open answers
    if not r or decision == ESCALATE or (options and decision not in options):
        return None
    try:
        if (text := protocol_class(data.spec).chosen_text(r)) is not None:
            return text
    except SHAPE_ERRORS:
        return None  # a damaged field names no option
    latest: dict[str, str] = {}
    for turn in data.turns:
        if (text := _position(data, turn)) is not None:
            latest[turn.speaker] = text
    if decision in latest.values():
        return str(decision)
    final_votes = _table(r.get("final_votes"))
    backers = [
        latest[who] for who, vote in final_votes.items() if vote == decision and who in latest
    ]
    if backers:
        return Counter(map(_key, backers)).most_common(1)[0][0]
    if options and decision == options[0]:
        positions = [text for t in data.turns if (text := _position(data, t))]
        return positions[-1] if positions else data.spec.debate.artifact
    return None


def outcome(data: SessionData) -> list[str]:
    """``Chosen option: "…", because …`` and the rule's details."""
    r = data.result or {}
    if not r:
        return [
            'Chosen option: "none yet", because the session has not ended; this record is proposed.'
        ]
    decision, rule = r.get("decision"), str(r.get("decision_rule"))
    text = chosen(data)
    named = {_key(t): name for name, t, _ in titled(data)}
    option = named.get(_key(text), title(text)) if text else str(decision)
    reasons = _BECAUSE | protocol_class(data.spec).rule_reasons
    because = reasons.get(rule, f"the rule {rule} decided so")
    if text is None and status(data) == "proposed":  # "escalate" is no option: none is chosen
        option = "none yet"
        because += "; no option was chosen, and the decision is left to a person"
    lines = [
        f'Chosen option: "{md_inline(option)}", because {md_inline(because)} '
        f"(decision {md_code(decision)}, rule {md_code(rule)}, "
        f"decided by {md_inline(r.get('decided_by'))}"
        + (f", relayed via {md_code(r['decided_via'])}" if r.get("decided_via") else "")
        + ")."
    ]
    said = protocol_class(data.spec).result_lines(r)  # the protocol's own outcome
    if said:
        lines += ["", *(f"- {md_inline(line)}" for line in said)]
    tally = {k: v for k, v in _table(r.get("vote_tally")).items() if v}
    if tally:
        lines += [
            "",
            "Votes: " + ", ".join(f"{md_code(k)} {md_inline(v)}" for k, v in tally.items()) + ".",
        ]
    if r.get("rationale"):
        lines += ["", "Operator's rationale:", "", *_quote(r["rationale"])]
    if r.get("budget_exhausted"):
        lines += [
            "",
            f"The budget {md_code(r['budget_exhausted'])} was reached "
            f"({md_inline(r.get('budget_spent'))} of {md_inline(r.get('budget_cap'))}).",
        ]
    return lines


def answer(data: SessionData, critique: Turn) -> str:
    """The later turn that answered a critique: one written with that critique in view.

    A debater speaking again is not an answer; a revision whose prompt held the
    critique (its ``saw`` names it) is, unless it repeats an earlier turn word for word.
    """
    label = f"critique:r{critique.round}:{critique.speaker}"
    repeat = ""
    for turn in data.turns[critique.index :]:
        # An answer is a turn putting a position forward (its protocol's ``position``).
        if label in turn.saw and _position(data, turn) is not None:
            earlier = _repeated(data, turn)
            if earlier is None:
                return (
                    f"answered by {md_code(turn.speaker)} in turn {turn.index}, "
                    "which revised with this critique in view"
                )
            repeat = repeat or (
                f": {md_code(turn.speaker)} repeated turn {earlier.index} "
                f"word for word in turn {turn.index}"
            )
    return "not answered" + repeat


def _repeated(data: SessionData, turn: Turn) -> Turn | None:
    """The speaker's earlier turn of the same kind that ``turn`` repeats exactly, if any."""
    return next(
        (
            t
            for t in data.turns[: turn.index - 1]
            if (t.speaker, t.kind) == (turn.speaker, turn.kind)
            and not t.invalid
            and t.content == turn.content
        ),
        None,
    )


def _good(data: SessionData) -> list[str]:
    """The arguments for the decision: its backers' reasons, the judges', the operator's."""
    r = data.result or {}
    decision = r.get("decision")
    lines: list[str] = []
    if r.get("decided_by") == DecidedBy.OPERATOR and r.get("rationale"):
        lines.append(f"- Good, because {md_inline(r['rationale'])} (the operator's rationale)")
    said = _said(lambda: protocol_class(data.spec).arguments(r, data.turns)[0])
    lines += [f"- Good, because {md_inline(argument)}" for argument in said]
    reasons: dict[str, Turn] = {}
    for turn in data.turns:
        if turn.kind == TurnKind.POSITION and not turn.invalid:
            reasons[turn.speaker] = turn
    for who, vote in _table(r.get("final_votes")).items():
        latest = reasons.get(who)
        if vote == decision and latest is not None and latest.content.get("rationale"):
            lines.append(
                f"- Good, because {md_inline(latest.content['rationale'])} "
                f"({md_code(who)}, voting {md_code(vote)} in turn {latest.index})"
            )
    return lines


def _bad(data: SessionData) -> list[str]:
    """The weaknesses raised and whether each was answered, and what the protocol's result
    holds against the decision (a challenge left open)."""
    lines: list[str] = []
    for turn in data.turns:
        if turn.invalid:  # the weaknesses of any critique, whatever its protocol calls it
            continue
        against = f" against {md_code(turn.target)}" if turn.target else ""
        for weakness in _listed(turn.content.get("weaknesses")):
            lines.append(
                f"- Bad, because {md_inline(weakness)} (raised by {md_code(turn.speaker)}"
                f"{against} in turn {turn.index}; {answer(data, turn)})"
            )
    r = data.result or {}
    said = _said(lambda: protocol_class(data.spec).arguments(r, data.turns)[1])
    lines += [f"- Bad, because {md_inline(argument)}" for argument in said]
    return lines


def consequences(data: SessionData) -> list[str]:
    """MADR's ``Good, because`` / ``Bad, because`` items."""
    lines = _good(data) + _bad(data)
    return lines or ["- Neutral, because no argument, weakness or risk was recorded."]


def dissent(data: SessionData) -> list[str]:
    r = data.result or {}
    decision = r.get("decision")
    lines = [
        f"- {md_code(who)} voted {md_code(vote)}"
        for who, vote in _table(r.get("final_votes")).items()
        if decision not in (None, ESCALATE) and vote != decision
    ]
    stated = _said(protocol_class(data.spec).dissent, r, data.turns)
    lines += [f"- {md_inline(d)}" for d in stated]
    return lines or ["- None recorded."]


def evidence(data: SessionData) -> list[str]:
    """Every admitted rubric evidence item, with its source and lines where located; a
    tool_quote also names the lookup behind it (tool, call, args and the result's sha256)."""
    lines = []
    protocol = protocol_class(data.spec)
    for turn in data.turns:
        lookups = {lk.get("id"): lk for lk in _listed(turn.lookups) if isinstance(lk, dict)}
        for prop in _listed(_table(turn.derived.get("rubric")).get("properties")):
            for e in _listed(_table(prop).get("evidence")):
                if not isinstance(e, dict) or not e.get("admitted"):
                    continue
                where = md_code(e["source"]) if e.get("source") else md_code(e.get("kind"))
                span = _listed(e.get("lines"))
                if len(span) == 2:
                    first, last = span
                    where += f" line {first}" if first == last else f" lines {first}-{last}"
                lines.append(
                    f"- {md_code(prop.get('property'))}, turn {turn.index} "
                    f"({md_code(turn.speaker)}), {md_code(e.get('kind'))} from {where}: "
                    f"“{md_inline(e.get('quote'))}”"
                    + _lookup_behind(
                        lookups.get(e.get("source")) if e.get("kind") == "tool_quote" else None
                    )
                )
        quoted = _said(protocol.quoted, turn)
        lines += [_quoted(turn, q, lookups.get(q.source)) for q in quoted]
    return lines or ["- No evidence was admitted (the spec has no rubric, or none held)."]


def _quoted(turn: Turn, q: Quoted, lookup: dict[str, Any] | None) -> str:
    """A quote a protocol's code admitted from a lookup's result, with the lookup behind."""
    where = md_code(q.source)
    if len(q.lines) == 2:
        first, last = q.lines
        where += f" line {first}" if first == last else f" lines {first}-{last}"
    return (
        f"- {md_inline(q.what)} {md_code(q.id)}, turn {turn.index} ({md_code(turn.speaker)}), "
        f"quoted from {where}: “{md_inline(q.quote)}”" + _lookup_behind(lookup)
    )


def _lookup_behind(lookup: dict[str, Any] | None) -> str:
    if lookup is None:
        return ""
    args = ", ".join(f"{k}={v}" for k, v in _table(lookup.get("args")).items())
    call = f"{lookup.get('tool')}.{lookup.get('call')}"
    return (
        f" (lookup {md_code(call)}"
        f"({md_inline(args)}), result sha256 {md_code(str(lookup.get('sha256', ''))[:16])}…)"
    )


def to_adr(data: SessionData) -> str:
    """The decision record as Markdown."""
    checked = verification(data)
    data = redacted_session(data)
    d = data.spec.debate
    lines = [
        *_front_matter(data),
        "",
        f"# {md_inline(d.title)}",
        "",
        f"- Status: {status(data)}",
        f"- Deciders: {', '.join(map(md_inline, decision_makers(data)))}",
    ]
    if day := _date(data):
        lines.append(f"- Date: {day}")
    lines += [
        f"- Signed by: {_signers(data)}",
        "",
        "## Context and Problem Statement",
        "",
        *_quote(d.motion),
        "",
        f"Protocol {md_code(d.protocol)}; debaters: "
        + ", ".join(f"{md_code(x.id)} ({md_code(x.model)})" for x in data.spec.debaters)
        + ".",
        "",
    ]
    if data.spec.documents:
        lines += [
            "| document | path | bytes | sha256 | seen by |",
            "| --- | --- | --- | --- | --- |",
        ]
        for doc in data.spec.documents:
            seen = ", ".join(map(md_inline, doc.roles)) if doc.roles else "everyone"
            lines.append(
                f"| {md_inline(doc.label)} | {md_inline(doc.path)} | {doc.size} | "
                f"{md_code(doc.sha256)} | {seen} |"
            )
        lines.append("")
    lines += ["## Considered Options", ""]
    for name, text, holders in titled(data):
        lines.append(f'- "{md_inline(name)}", held by {_holders(holders)}')
        if name != text.strip():  # cut, named or on several lines: the whole text follows
            lines += ["", *_quote(text, indent="  "), ""]
    if lines[-1]:
        lines.append("")
    lines += ["## Decision Outcome", "", *outcome(data), ""]
    lines += ["### Consequences", "", *consequences(data), ""]
    lines += ["### Confirmation", "", *_confirmation(data, checked), ""]
    lines += ["## More Information", "", *_more(data), ""]
    lines += ["### Dissent", "", *dissent(data), ""]
    lines += ["### Evidence", "", *evidence(data)]
    return "\n".join(lines)


def _confirmation(data: SessionData, checked: dict[str, Any]) -> list[str]:
    """Whether ``moot verify`` holds (the record is only as good as the file behind it), and
    what became of the decision since (``moot outcome``)."""
    if not data.outcomes:
        return _verified(data, checked)
    since = "What became of it, as recorded since (`moot outcome`, signed; the latest counts):"
    return [*_verified(data, checked), "", since, "", *outcome_lines(data.outcomes)]


def _verified(data: SessionData, checked: dict[str, Any]) -> list[str]:
    name = md_code(f"moot verify {Path(data.path).name}")
    if checked["ok"]:
        return [
            f"{name} re-checks this record from the session file: all {checked['claims']} claims hold."
        ]
    return [
        f"{name} fails: {len(checked['failures'])} of {checked['claims']} claims do not hold; "
        "the session file was changed after moot wrote it, or is damaged:",
        "",
        *(
            f"- {md_inline(f['where'])}: {md_inline(f['field'])}: {md_inline(f['detail'])}"
            for f in checked["failures"]
        ),
    ]


def _signers(data: SessionData) -> str:
    """Whose keys signed the file (their fingerprints), and whether the signatures hold."""
    found = data.signatures if data.signatures.every else check_signatures(data.records)
    if not found.spans:
        return "nobody (unsigned)" + (
            f"; {do_not_hold(len(found.problems), 'signature')}" if found.problems else ""
        )
    keys = ", ".join(md_code(s.fingerprint) for s in found.spans)
    if found.problems:
        return (
            f"{keys}, but {do_not_hold(len(found.problems), 'signature')} (changed after signing)"
        )
    return f"{keys} (Ed25519; every signature holds)"


def _more(data: SessionData) -> list[str]:
    lines = [
        f"- Session file: {md_code(Path(data.path).name)} (id {md_code(data.meta.get('id', ''))}), "
        f"{counted(len(data.turns), 'turn')}, {counted(len(data.actions), 'operator action')}.",
    ]
    lines += [f"- Signer's public key: {md_code(span.public)}." for span in data.signatures.spans]
    fork = data.meta.get("forked_from")
    if isinstance(fork, dict):
        lines.append(
            f"- Forked from {md_code(fork.get('id', ''))} "
            f"({md_code(Path(str(fork.get('path', ''))).name)}) after turn {fork.get('at')}."
        )
    return lines
