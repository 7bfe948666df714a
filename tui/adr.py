"""``moot export --format adr``: a session as an architecture decision record (MADR layout).

Every statement comes from the session file: the motion and its documents (with
their hashes), who signed it, the positions held and by whom, the decision with its rule, the
weaknesses raised and how each was answered, dissent, the admitted evidence, and
whether ``moot verify`` holds. Model text goes through tui.textsafe's Markdown
sanitiser, so it can never restructure the record.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tui.engine.records import Turn
from tui.engine.redact import redacted_session
from tui.engine.session import SessionData
from tui.engine.verify import verify
from tui.engine.vocab import ESCALATE, DecidedBy, TurnKind
from tui.textsafe import md_code, md_inline, md_text

_CRITIQUES = (TurnKind.CRITIQUE, TurnKind.ADVERSARY_CRITIQUE, TurnKind.CANDIDATE_CRITIQUE)
_ANSWERS = (TurnKind.POSITION, TurnKind.CANDIDATE, TurnKind.DEFENSE)


def _listed(value: object) -> list[Any]:
    """A stored list; in a damaged file (``moot verify`` names it) another type holds none."""
    return value if isinstance(value, list) else []


def _table(value: object) -> dict[str, Any]:
    """A stored table; in a damaged file another type holds none."""
    return value if isinstance(value, dict) else {}


def status(data: SessionData) -> str:
    """accepted, rejected, escalated, or the operator's decision; open while unfinished."""
    r = data.result
    if not r:
        return "open (the session has not ended)"
    decision = str(r.get("decision"))
    if r.get("decided_by") == DecidedBy.OPERATOR and decision != ESCALATE:
        return f"decided by the operator: {decision}"
    if decision == ESCALATE:
        return "escalated"
    return "accepted" if decision == data.spec.debate.votes[0] else f"rejected ({decision})"


def _quote(text: Any) -> list[str]:
    return ["> " + line for line in md_text(text).split("\n")]


def _position(turn: Turn) -> str | None:
    """The position a turn puts forward, if it puts one forward."""
    c = turn.content
    if turn.invalid:
        return None
    if turn.kind == TurnKind.POSITION:
        return str(c.get("stance", ""))
    if turn.kind == TurnKind.CANDIDATE:
        return str(c.get("candidate", ""))
    if turn.kind == TurnKind.DEFENSE:
        return str(c.get("revised_artifact", ""))
    return None


def options(data: SessionData) -> list[tuple[str, list[tuple[str, int]]]]:
    """Each distinct position (spacing aside) with who held it, in order of first statement."""
    held: dict[str, tuple[str, list[tuple[str, int]]]] = {}
    if data.spec.debate.artifact:
        key = " ".join(data.spec.debate.artifact.split())
        owner = data.spec.debate.defender or "the artifact's author"
        held[key] = (data.spec.debate.artifact, [(owner, 0)])
    for turn in data.turns:
        text = _position(turn)
        if not text:
            continue
        key = " ".join(text.split())
        held.setdefault(key, (text, []))[1].append((turn.speaker, turn.index))
    return list(held.values())


def _holders(holders: list[tuple[str, int]]) -> str:
    by: dict[str, list[str]] = {}
    for who, index in holders:
        by.setdefault(who, []).append("the spec" if index == 0 else f"turn {index}")
    return "; ".join(f"{md_code(who)} ({', '.join(where)})" for who, where in by.items())


def _answer(data: SessionData, critique: Turn) -> str:
    """The turn that answered a critique: the critiqued author's next position, if any."""
    later = [t for t in data.turns[critique.index :] if t.kind in _ANSWERS and not t.invalid]
    for turn in later:
        if critique.target is None or turn.speaker == critique.target:
            return f"answered by {md_code(turn.speaker)} in turn {turn.index}"
    if later and critique.kind == TurnKind.CANDIDATE_CRITIQUE:
        turn = later[0]
        return f"answered by the next candidate, {md_code(turn.speaker)} in turn {turn.index}"
    return "not answered before the end"


def consequences(data: SessionData) -> list[str]:
    lines: list[str] = []
    for turn in data.turns:
        if turn.kind not in _CRITIQUES or turn.invalid:
            continue
        for weakness in _listed(turn.content.get("weaknesses")):
            lines.append(
                f"- {md_inline(weakness)} (raised by {md_code(turn.speaker)} in turn "
                f"{turn.index}; {_answer(data, turn)})"
            )
    for c in _listed((data.result or {}).get("challenges")):
        if not isinstance(c, dict):
            continue
        answer = c.get("answer")
        how = f"{c.get('status')}" + (f": {md_inline(answer)}" if answer else "")
        lines.append(
            f"- {md_inline(c.get('id'))} ({md_inline(c.get('severity'))}, "
            f"{md_inline(c.get('category', ''))}): {md_inline(c.get('concern'))} — {how}"
        )
    return lines or ["- No weakness or risk was raised."]


def dissent(data: SessionData) -> list[str]:
    r = data.result or {}
    decision = r.get("decision")
    lines = [
        f"- {md_code(who)} voted {md_code(vote)}"
        for who, vote in _table(r.get("final_votes")).items()
        if decision not in (None, ESCALATE) and vote != decision
    ]
    lines += [f"- {md_inline(d)}" for d in _listed(r.get("minority_dissent"))]
    lines += [
        f"- {md_inline(cid)} is still unresolved" for cid in _listed(r.get("unresolved_challenges"))
    ]
    return lines or ["- None recorded."]


def evidence(turns: Iterable[Turn]) -> list[str]:
    """Every admitted rubric evidence item, with its source and lines where located."""
    lines = []
    for turn in turns:
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
                )
    return lines or ["- No evidence was admitted (the spec has no rubric, or none held)."]


def to_adr(data: SessionData) -> str:
    """The decision record as Markdown."""
    data = redacted_session(data)
    d, r = data.spec.debate, data.result or {}
    lines = [
        f"# {md_inline(d.title)}",
        "",
        f"* Status: {status(data)}",
        f"* Deciders: {_deciders(data)}",
        f"* Date: {md_inline(str(data.meta.get('created', ''))[:10])}",
        f"* Signed by: {_signers(data)}",
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
    for n, (text, holders) in enumerate(options(data), 1):
        lines += [f"{n}. Held by {_holders(holders)}:", "", *("   " + q for q in _quote(text)), ""]
    lines += ["## Decision Outcome", ""]
    if r:
        lines.append(
            f"Decision: **{md_inline(r.get('decision'))}**, by rule "
            f"{md_code(r.get('decision_rule'))}, decided by {md_inline(r.get('decided_by'))}"
            + (f" (relayed via {md_code(r['decided_via'])})" if r.get("decided_via") else "")
            + "."
        )
        said = data.spec.protocol_class.result_lines(r)  # the protocol's own outcome
        if said:
            lines += ["", *(f"* {md_inline(line)}" for line in said)]
        if r.get("rationale"):
            lines += ["", "Operator's rationale:", "", *_quote(r["rationale"])]
        if r.get("budget_exhausted"):
            lines += [
                "",
                f"The budget {md_code(r['budget_exhausted'])} was reached "
                f"({r.get('budget_spent')} of {r.get('budget_cap')}).",
            ]
    else:
        lines.append("No decision yet: the session has not ended.")
    lines += ["", "### Consequences", "", *consequences(data), ""]
    lines += ["### Dissent", "", *dissent(data), ""]
    lines += ["### Evidence", "", *evidence(data.turns), ""]
    lines += ["## More Information", "", *_more(data), ""]
    return "\n".join(lines)


def _deciders(data: SessionData) -> str:
    r = data.result or {}
    if r.get("decided_by") == DecidedBy.OPERATOR:
        return "the operator"
    return "the debate's rules (" + ", ".join(md_code(x.id) for x in data.spec.debaters) + ")"


def _signers(data: SessionData) -> str:
    """Whose keys signed the file (their fingerprints), and whether the signatures hold."""
    found = data.signatures
    if not found.spans:
        return "nobody (unsigned)" + (
            f"; {len(found.problems)} signature(s) do not hold" if found.problems else ""
        )
    keys = ", ".join(md_code(s.fingerprint) for s in found.spans)
    if found.problems:
        return f"{keys}, but {len(found.problems)} signatures do not hold (changed after signing)"
    return f"{keys} (Ed25519; every signature holds)"


def _more(data: SessionData) -> list[str]:
    report = verify(data)
    held = (
        f"`moot verify` passes: all {len(report.claims)} claims hold"
        if report.ok
        else f"`moot verify` fails: {len(report.failures)} of {len(report.claims)} claims "
        "do not hold"
    )
    lines = [
        f"- Session file: {md_code(str(data.path))} (id {md_code(data.meta.get('id', ''))}), "
        f"{len(data.turns)} turns, {len(data.actions)} operator actions.",
        f"- {held}.",
    ]
    lines += [f"- Signer's public key: {md_code(span.public)}." for span in data.signatures.spans]
    fork = data.meta.get("forked_from")
    if isinstance(fork, dict):
        lines.append(
            f"- Forked from {md_code(fork.get('id', ''))} ({md_code(fork.get('path', ''))}) "
            f"after turn {fork.get('at')}."
        )
    return lines
