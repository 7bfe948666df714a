"""``moot verify``: every claim a session file makes, re-checked from the file alone.

Two ways, so a rule cannot vouch for itself alone. The recorded turns and
operator actions are replayed through the engine's own rules (an Engine built
from the file's spec, fed the recorded turns, with a provider that is never
asked for anything) and its result is compared with ``[result]`` field by field.
Beside it, independent checks: the commit markers, the hash chain and each
record's signature (and, when asked, that the signer is a key the user trusts), each turn
against the schedule and what its role saw (evidence quotes included), the
negative channel and self-critique rules, votes recounted, the threshold and tie
rule, who decided, judge majorities and convergence counts. The file is never written.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tui.engine.basics.clients import clients_for
from tui.engine.basics.errors import SessionError
from tui.engine.basics.redact import REDACTED, SECRET_SHAPES
from tui.engine.basics.vocab import (
    DecidedBy,
    DecisionChannel,
    DecisionRule,
    OperatorAction,
    is_deferral,
)
from tui.engine.core.parsing import TurnParseError, check_content
from tui.engine.core.ports import ProviderError, TokenSink, TurnReply, TurnRequest
from tui.engine.core.rawtext import cut_problem
from tui.engine.core.records import CONTENT_MODELS, Turn
from tui.engine.core.schedule import Slot
from tui.engine.core.state import DebateState, Decision
from tui.engine.core.usage import BOUNDS, in_range
from tui.engine.grounding.context import ARTIFACT, digest, seen_documents, slot_context
from tui.engine.grounding.evidence import assess, with_rubric
from tui.engine.grounding.lookups import lookup_problems
from tui.engine.grounding.lookups import results as lookup_results
from tui.engine.protocols import protocol_class, protocol_for
from tui.engine.protocols.base import ContextItem, Protocol
from tui.engine.record.outcomes import claims as outcome_claims
from tui.engine.record.session import SessionData, load_session, record_room
from tui.engine.record.signing import Span
from tui.engine.record.signing import check as check_signatures
from tui.engine.record.trust import adopted_by, adoption_problem, unvouched, who_vouches
from tui.engine.run.budget import (
    CAPS,
    SESSION,
    Budget,
    cap_key,
    lookup_budget_problems,
    lookup_caps,
)
from tui.engine.run.roster import Roster
from tui.engine.run.runner import Engine
from tui.engine.run.turns import NOT_ARTIFACT, FailureAction, FailureChoice
from tui.engine.specs.spec import Spec
from tui.plural import all_hold, counted, do_not_hold

_OPERATOR_RULES = {DecisionRule.OPERATOR_DECISION, DecisionRule.OPERATOR_ESCALATION}
# What a provider said when it failed is recorded, not re-derivable from the file.
_PROVIDER_SAID = "failure"


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim of the file: where it is made, which field, whether it holds, and why."""

    where: str  # "file", "header", "turn 3", "operator action 2 (decide)", "result"
    field: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"where": self.where, "field": self.field, "ok": self.ok, "detail": self.detail}


@dataclass
class Verification:
    """Every claim checked, and notes on what is not a claim (a torn tail, no result yet)."""

    path: str
    turns: int = 0
    records: int = 0
    decision: str | None = None
    claims: list[Claim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    signers: list[Span] = field(default_factory=list)  # who signed which records
    unsigned: int = 0  # records before any signer was declared
    adopted_by: str | None = None  # the key whose `moot adopt` vouches for those records
    trusted: dict[str, str] | None = (
        None  # fingerprint -> name the user knows it by; None: not asked
    )
    own: str | None = None  # the fingerprint of the user's own signing key

    @property
    def signed(self) -> bool:
        return bool(self.signers)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.claims)

    @property
    def failures(self) -> list[Claim]:
        return [c for c in self.claims if not c.ok]

    def check(self, where: str, name: str, ok: bool, detail: str = "holds") -> bool:
        self.claims.append(Claim(where, name, ok, detail))
        return ok

    def same(self, where: str, name: str, recorded: Any, recomputed: Any, how: str) -> bool:
        """A claim that a recorded value equals the value ``how`` gives."""
        if recorded == recomputed:  # equal as they are, so equal as the file holds them
            return self.check(where, name, True, f"matches {how}")
        a, b = _plain(recorded), _plain(recomputed)
        if a == b:
            return self.check(where, name, True, f"matches {how}")
        return self.check(where, name, False, f"recorded {_show(a)}, {how} gives {_show(b)}")

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "path": self.path,
            "claims": [c.as_dict() for c in self.claims],
            "failures": [c.as_dict() for c in self.failures],
            "notes": self.notes,
            "signature": {
                "signed": self.signed,
                "unsigned_records": self.unsigned,
                "adopted_by": self.adopted_by,
                "signers": [
                    {
                        "fingerprint": s.fingerprint,
                        "public_key": s.public,
                        "first": s.first,
                        "last": s.last,
                        "records": s.records,
                        "trusted": None if self.trusted is None else s.fingerprint in self.trusted,
                        "name": (self.trusted or {}).get(s.fingerprint),
                    }
                    for s in self.signers
                ],
            },
        }


@dataclass(frozen=True, slots=True)
class Trust:
    """The keys the user trusts (fingerprint -> name), and whether a file must be signed by one."""

    keys: dict[str, str]
    required: bool = False
    own: str | None = None  # the user's own key, by fingerprint: a name can be given any key


def verify_file(path: str | Path, trust: Trust | None = None) -> Verification:
    """Load (never write) and verify a session; SessionError when it cannot be read."""
    return verify(load_session(path, gaps_ok=True), trust)


def verify(data: SessionData, trust: Trust | None = None) -> Verification:
    """Every check on a loaded session; a value of the wrong shape fails its check, never raises.

    With ``trust``, each signer is named as the user knows it, and with
    ``trust.required`` the file must be signed, every record of it, by keys in it.
    """
    if not data.signatures.every:  # loading checked each span's last signature: verify checks all
        data = replace(data, signatures=check_signatures(data.records))
    out = Verification(str(data.path), turns=len(data.turns), records=len(data.records))
    out.signers, out.unsigned = data.signatures.spans, data.signatures.unsigned
    out.adopted_by = adopted_by(data)
    if trust is not None:
        out.trusted, out.own = trust.keys, trust.own
    if data.torn:
        out.notes.append(
            "an unfinished write after the last complete record was left out (not a claim)"
        )
    for checks in (
        _file_claims,
        _document_claims,
        _turn_claims,
        _lookup_budget_claim,
        _action_claims,
        _result_claims,
        _replay_claims,
        _outcome_claims,
    ):
        try:
            checks(data, out)
        except Exception as err:  # a damaged record: the claims resting on it do not hold
            what = checks.__name__.strip("_").replace("_", " ")
            out.check("file", what, False, f"cannot be checked: {type(err).__name__}: {err}")
    if trust is not None and trust.required:
        _trust_claim(data, out, trust.keys)
    if data.result is not None:
        out.decision = str(data.result.get("decision"))
    return out


# ------------------------------------------------------------------ the file
def _file_claims(data: SessionData, out: Verification) -> None:
    fork = data.meta.get("forked_from")
    if fork is not None:  # the source is not needed: the kept turns are checked as any others
        at = fork.get("at") if isinstance(fork, dict) else None
        ok = isinstance(at, int) and not isinstance(at, bool) and 0 <= at <= len(data.turns)
        out.check(
            "session",
            "forked_from",
            ok,
            f"forked from {_show(fork.get('id'))} after turn {at}"
            if ok
            else f"{_show(fork)}: names no turn of this file to fork after",
        )
    folder = data.meta.get("spec_folder")
    if folder is not None:  # where a resume roots the tools: only a spec with tools has one
        ok = isinstance(folder, str) and os.path.isabs(folder) and bool(data.spec.tools)
        out.check(
            "session",
            "spec_folder",
            ok,
            f"the tools are rooted in {_show(folder)}"
            if ok
            else f"{_show(folder)}: an absolute folder, recorded only for a spec with [[tools]]",
        )
    out.check(
        "file",
        "commit markers",
        data.markers == len(data.records),
        f"{data.markers} commit markers for {len(data.records)} records"
        + ("" if data.markers == len(data.records) else ": each record must end in its own"),
    )
    previous = 0
    for turn in data.turns:
        if turn.index != previous + 1:
            what = "missing" if turn.index > previous + 1 else "out of order"
            out.check(
                f"turn {previous + 1}",
                "index",
                False,
                f"{what}: turn {turn.index} follows turn {previous}",
            )
        previous = turn.index
    broken = {b.record: b.problem for b in data.chain}
    unsigned = dict(data.signatures.problems)
    signed = set(data.signatures.good)
    for record in data.records:
        if record.name in broken:
            out.check(record.name, "hash", False, broken[record.name])
        elif record.stored is None:
            out.check(record.name, "hash", True, "written before the chain (not chained)")
        else:
            out.check(record.name, "hash", True, "matches its fields and the hash before it")
        if record.name in unsigned:
            out.check(record.name, "signature", False, unsigned[record.name])
        elif record.name in signed:
            out.check(record.name, "signature", True, "holds for its hash under the declared key")


def _outcome_claims(data: SessionData, out: Verification) -> None:
    """Each outcome recorded after the result: of a decision, its values, its dates in order
    (its hash and signature are checked with every record's)."""
    for where, name, ok, detail in outcome_claims(data.outcomes, data):
        out.check(where, name, ok, detail)


def _trust_claim(data: SessionData, out: Verification, trusted: dict[str, str]) -> None:
    """Asked for (``--trusted``): every record vouched for by a key the user trusts.

    A signature vouches only for the records its signer wrote (:mod:`tui.engine.record.trust`):
    records written unsigned count only once the user adopted them (``moot adopt``).
    """
    missing = unvouched(data, trusted)
    spans = data.signatures.spans
    if not spans:
        detail = "unsigned: nothing shows who wrote it"
    elif missing:
        detail = (
            f"{counted(len(missing), 'record')} no key you trust vouches for "
            f"({_names(missing)}): {who_vouches(data, missing)}"
        )
    else:
        names = ", ".join(f"{trusted[s.fingerprint]} ({s.fingerprint})" for s in spans)
        detail = f"every record signed by {names}"
    out.check("file", "signer", bool(spans) and not missing, detail)


def _names(records: Sequence[str]) -> str:
    return ", ".join(records[:4]) + (f" and {len(records) - 4} more" if len(records) > 4 else "")


def _document_claims(data: SessionData, out: Verification) -> None:
    """Each stored document is the text its hash and size name; the spec's documents are all there."""
    labels = [d.label for d in data.spec.documents]
    for doc in data.spec.documents:
        where = f"document {doc.label}"
        size = len(doc.text.encode("utf-8"))
        out.same(where, "sha256", doc.sha256, digest(doc.text), "the stored text")
        out.same(where, "size", doc.size, size, "the stored text")
        shaped = SECRET_SHAPES.search(doc.text)
        out.check(
            where,
            "no key",
            shaped is None,
            "no key-shaped string in the stored text"
            if shaped is None
            else f"a key-shaped string is stored at character {shaped.start()}",
        )
        if doc.redacted:
            marks = doc.text.count(REDACTED)
            out.check(
                where,
                "redacted",
                marks >= doc.redacted,
                f"{counted(doc.redacted, 'secret')} replaced by {REDACTED}, {marks} in the text",
            )
        if labels.count(doc.label) > 1:
            out.check(where, "label", False, "stored more than once")
    if data.spec.debate.artifact_file is not None:
        held = ARTIFACT in labels
        out.check(
            "document artifact",
            "stored",
            held,
            "the artifact file's text is stored" if held else "artifact_file given, no text stored",
        )
    for i, entry in enumerate(data.spec.context):
        held = (
            entry.label in labels
            if entry.glob is None
            else any(label.startswith(entry.label + "/") for label in labels)
        )
        out.check(
            f"document {entry.label}",
            "stored",
            held,
            f"context[{i}] is stored" if held else f"context[{i}] names a document not stored",
        )


# ----------------------------------------------------------------- the turns
def _legacy(data: SessionData) -> set[int]:
    """Turn numbers written before the chain: checked by the rules of their day only."""
    return {
        int(r.name.split()[1])
        for r in data.records
        if r.name.startswith("turn ") and r.stored is None
    }


def _turn_claims(data: SessionData, out: Verification) -> None:
    """Walk the turns phase by phase as the engine played them, checking each against its slot."""
    spec = data.spec
    protocol = protocol_for(spec)
    state = DebateState(spec, spec.max_rounds)
    legacy = _legacy(data)
    actions = _Actions(data.actions, state)
    models = content_models(spec, protocol)
    group: list[Turn] = []
    slots: list[Slot] = []
    view: _PhaseView | None = None
    for turn in data.turns:
        where = f"turn {turn.index}"
        if not group:  # a phase starts here
            actions.apply_up_to(turn.index - 2)
            surely_before = len(state.notes)  # given before the previous turn was written
            actions.apply_up_to(turn.index - 1)
            state.round, state.phase = turn.round, turn.phase
            slots = protocol.slots(state, turn.round, turn.phase, turn.index)
            parallel = spec.debate.parallel and len(slots) > 1
            view = _PhaseView(state.frozen_turns(), surely_before) if parallel else None
            actions.at_phase_start = actions.models()
        slot = slots[len(group)] if len(group) < len(slots) else None
        _usage_claim(out, turn, spec.debate.retries + 1 + bool(turn.lookups))
        if turn.client is not None:
            _client_claim(out, turn, spec)
        if turn.lookups is not None:
            _lookup_claim(data, out, turn)
        if turn.raw_cut is not None:
            problem = cut_problem(turn.raw, turn.raw_cut)
            out.check(where, "raw_cut", problem is None, problem or "the cut text as kept")
        if _schedule_claim(out, where, turn, slot) and slot is not None:
            actions.apply_up_to(turn.index - 1)
            try:
                context = (
                    slot_context(spec, protocol, state, slot)
                    if view is None
                    else view.context(protocol, slot, turn.saw)
                )
                at = _AtSlot(data, protocol, state, slot, turn, context, turn.index in legacy)
                _slot_claims(out, at, models, actions)
            except Exception as err:  # a damaged record: named, and the walk goes on
                out.check(where, "turn", False, f"cannot be checked: {type(err).__name__}: {err}")
        state.add(turn)
        group.append(turn)
        if len(group) >= max(1, len(slots)):
            state.phase_sequence.append(turn.phase)
            try:
                protocol.after_phase(state, turn.round, turn.phase, group)
            except Exception as err:  # a damaged record: named, and the walk goes on
                out.check(where, "phase", False, f"the protocol cannot close the phase: {err}")
            group = []


@dataclass(frozen=True, slots=True)
class _PhaseView:
    """What a parallel phase's calls saw: the turns as the phase began, and the notes
    given by the time each call was built.

    A note given just before or during the phase is journalled after the same turn,
    so each call may have seen it or not; every note journalled by the call's own
    turn number may have been seen, in the order given, and every earlier one was.
    """

    state: DebateState  # the turns frozen at the phase's start, the notes still growing
    surely_before: int  # notes given before the phase's calls were built

    def context(self, protocol: Protocol, slot: Slot, saw: list[str]) -> list[ContextItem]:
        """The view (among those the notes allow) that gives ``saw``; else the latest."""
        notes = self.state.notes
        views = (
            [self.state]
            + [  # every note given so far, then fewer: the state as it is, then copies
                replace(self.state, notes=notes[:given])
                for given in range(len(notes) - 1, self.surely_before - 1, -1)
            ]
        )
        contexts = [slot_context(self.state.spec, protocol, v, slot) for v in views]
        return next((c for c in contexts if [i[0] for i in c] == saw), contexts[0])


class _Actions:
    """Operator actions applied as the walk passes the turn they were recorded after."""

    def __init__(self, actions: list[dict[str, Any]], state: DebateState) -> None:
        self._pending = sorted(actions, key=lambda a: a.get("after_turn", 0))
        self._state = state
        self.roster = Roster(state.spec.debaters)
        self.at_phase_start: dict[str, tuple[str, str]] = {}

    def models(self) -> dict[str, tuple[str, str]]:
        """Each speaker's (model, family) now."""
        return {s: (d.model, self.roster.family[s]) for s, d in self.roster.debaters.items()}

    def apply_up_to(self, done: int) -> None:
        while self._pending and self._pending[0].get("after_turn", 0) <= done:
            action = self._pending.pop(0)
            kind = action.get("action")
            if kind == OperatorAction.NOTE:
                self._state.notes.append(str(action.get("text", "")))
            elif kind == OperatorAction.EXTEND:
                self._state.max_rounds += 1
            elif kind == OperatorAction.REPLACE_MODEL:
                self.roster.swap_model(str(action.get("speaker")), str(action.get("model")))

    def model_claim(self, out: Verification, turn: Turn, against: list[str]) -> None:
        """The model and family a turn names are the speaker's, as swaps left them.

        A swap made while a phase's calls ran at once may or may not have reached
        a call already under way, so both the phase-start and the current models count.
        """
        where = f"turn {turn.index}"
        now, start = self.models(), self.at_phase_start
        held = {now.get(turn.speaker), start.get(turn.speaker)}
        out.check(
            where,
            "model",
            (turn.model, turn.family) in held,
            f"{turn.model} ({turn.family})"
            + ("" if (turn.model, turn.family) in held else ": not the speaker's model then"),
        )
        if turn.cross_family_held is None or not against:
            return
        possible = {
            all(models[turn.speaker][1] != models.get(a, ("", ""))[1] for a in against)
            for models in (now, start)
            if turn.speaker in models
        }
        out.check(
            where,
            "cross_family_held",
            turn.cross_family_held in possible,
            "the critic's model family against the author's"
            + ("" if turn.cross_family_held in possible else ": the families say otherwise"),
        )


def _lookup_claim(data: SessionData, out: Verification, turn: Turn) -> None:
    """Each lookup's result hashes to its sha256, was the speaker's to make, within bounds."""
    problems = lookup_problems(data.spec, turn.speaker, turn.lookups or [])
    out.check(
        f"turn {turn.index}",
        "lookups",
        not problems,
        "; ".join(problems)
        if problems
        else f"{counted(len(turn.lookups or []), 'lookup')}: hashes, permissions and bounds hold",
    )


def _lookup_budget_claim(data: SessionData, out: Verification) -> None:
    """The lookups of every turn, counted again, within ``max_lookups`` and ``max_lookup_bytes``."""
    if not lookup_caps(data.spec):
        return
    problems = lookup_budget_problems(data.spec, data.turns)
    out.check(
        "session",
        "lookup budget",
        not problems,
        "; ".join(problems) if problems else "the lookups ran and the bytes kept stay within it",
    )


def _usage_claim(out: Verification, turn: Turn, most_calls: int) -> None:
    """Tokens and cost within what the port lets through for the turn's calls; ``clamped``
    names only counts the port holds in range."""
    calls = min(max(1, turn.attempts), most_calls)
    wild = [
        f"{name} {_show(getattr(turn, name))}"
        for name in ("tokens_in", "tokens_out", "cost")
        if not in_range(getattr(turn, name), BOUNDS[name], calls)
    ]
    clamped = turn.clamped or []
    unknown = [name for name in clamped if name not in BOUNDS]
    if unknown:
        wild.append(f"clamped names {_show(unknown)}, not counts a provider reports")
    detail = (
        "; ".join(wild) + f": outside 0..the bound per call ({counted(calls, 'call')})"
        if wild
        else "tokens and cost within range"
        + (f"; clamped: {', '.join(clamped)}" if clamped else "")
    )
    out.check(f"turn {turn.index}", "usage", not wild, detail)


def _client_claim(out: Verification, turn: Turn, spec: Spec) -> None:
    """The client a turn names can reach its model: the openai SDK only an ``openai/``
    model at one ``api_base`` (tui.engine.basics.clients)."""
    debater = next((d for d in spec.debaters if d.id == turn.speaker), None)
    able = clients_for(turn.model, debater.api_base if debater is not None else None)
    held = turn.client in able
    out.check(
        f"turn {turn.index}",
        "client",
        held,
        f"{turn.client}" + ("" if held else f": cannot reach {turn.model} at this api_base"),
    )


def _schedule_claim(out: Verification, where: str, turn: Turn, slot: Slot | None) -> bool:
    if slot is None:
        return out.check(where, "schedule", False, f"phase {turn.phase!r} has no slot left")
    expected = (slot.round, slot.phase, slot.speaker, slot.kind, slot.target, slot.variant)
    found = (turn.round, turn.phase, turn.speaker, turn.kind, turn.target, turn.variant)
    if expected == found:
        return out.check(where, "schedule", True, "the protocol schedules this speaker here")
    return out.check(
        where, "schedule", False, f"recorded {_show(found)}, the schedule says {_show(expected)}"
    )


@dataclass(frozen=True, slots=True)
class _AtSlot:
    """A recorded turn at the slot the walk gives it, with what the slot saw then."""

    data: SessionData
    protocol: Protocol
    state: DebateState
    slot: Slot
    turn: Turn
    context: list[tuple[str, str, str]]
    legacy: bool  # written before the chain: checked by the rules of its day only


def _slot_claims(
    out: Verification,
    at: _AtSlot,
    models: dict[str, type[BaseModel]],
    actions: _Actions,
) -> None:
    protocol, slot, turn = at.protocol, at.slot, at.turn
    where = f"turn {turn.index}"
    against = protocol.cross_family_against(slot)
    actions.model_claim(out, turn, against)
    if turn.kind in protocol.verifier_kinds:
        own = turn.speaker in against if against else turn.speaker == slot.target
        out.check(
            where,
            "self-critique",
            not own,
            f"{turn.speaker} judged its own work" if own else "the critic judges another's work",
        )
    if turn.saw or not turn.invalid:  # a turn skipped after a provider failure saw nothing
        out.same(
            where, "saw", turn.saw, [label for label, _, _ in at.context], "the protocol's view"
        )
    if turn.invalid:
        return
    model = models[turn.kind]
    try:
        parsed = check_content(turn.content, model, at.data.spec.debate.vote_options)
        if at.legacy:  # the substance rules came after the file was written
            protocol.check_state(at.state, slot, parsed)
        else:
            protocol.check(at.state, slot, parsed)
    except TurnParseError as err:
        out.check(where, "content", False, f"a valid turn the rules refuse: {err}")
        return  # what follows rests on content the rules accept
    out.same(where, "content", turn.content, parsed.model_dump(), "the turn's schema")
    expected_vote = at.data.spec.debate.vote_of(turn.content)
    how = "the turn's content" + (
        f" ({at.data.spec.debate.normaliser} normaliser)" if at.data.spec.debate.open_votes else ""
    )
    out.same(where, "vote", turn.vote, expected_vote, how)
    if (negative := protocol.negative_channels.get(turn.kind)) is not None:
        items, verdict = negative
        present = bool(turn.content.get(items)) or turn.content.get("verdict") == verdict
        out.check(
            where,
            "negative channel",
            present,
            f"{items} given, or the verdict {verdict}"
            if present
            else f"no {items} and no verdict {verdict}",
        )
    protocol.turn_claims(at.data, out, turn)
    _derived_claims(out, at)


def content_models(spec: Spec, protocol: Protocol) -> dict[str, type[BaseModel]]:
    """The model the engine validates each kind with (a rubric adds its answers)."""
    models: dict[str, type[BaseModel]] = {**CONTENT_MODELS, **protocol.turn_kinds}
    if spec.rubric is not None:
        for kind in protocol.verifier_kinds:
            if protocol.rubric_role(Slot(0, 1, "", "", kind)) in spec.rubric.applies_to:
                models[kind] = with_rubric(models[kind], spec.rubric)
    return models


def _derived_claims(out: Verification, at: _AtSlot) -> None:
    """Engine-owned facts (rubric evidence, release gate, picks, ids) recomputed and compared."""
    turn, context, rubric = at.turn, at.context, at.data.spec.rubric
    where = f"turn {turn.index}"
    fresh = replace(turn, derived={})
    if "rubric" in turn.content and rubric is not None:
        fresh.derived["rubric"] = assess(
            rubric,
            turn.content.get("rubric", []),
            [(label, text) for label, _, text in context if not label.startswith(NOT_ARTIFACT)],
            (t.content for t in at.data.turns[: turn.index - 1]),
            seen_documents(context),
            lookup_results(turn.lookups),
        )
        _unlocated(turn.derived.get("rubric"), fresh.derived["rubric"])
    at.protocol.annotate(at.state, at.slot, fresh)
    for key in sorted(set(turn.derived) | set(fresh.derived)):
        if at.legacy and key not in turn.derived:
            continue  # not recorded by the version that wrote it
        how = "the evidence found verbatim in what this role saw" if key == "rubric" else "code"
        out.same(where, f"derived.{key}", turn.derived.get(key), fresh.derived.get(key), how)


def _unlocated(recorded: Any, fresh: dict[str, Any]) -> None:
    """Artifact quotes recorded before quotes were located carry no source nor lines."""
    if not isinstance(recorded, dict):
        return
    old = [
        e
        for p in recorded.get("properties", [])
        for e in p.get("evidence", [])
        if isinstance(e, dict) and e.get("kind") == "artifact_quote"
    ]
    if not old or any("lines" in e or "source" in e for e in old):
        return
    for prop in fresh["properties"]:
        for e in prop["evidence"]:
            if e["kind"] == "artifact_quote":
                e.pop("source", None)
                e.pop("lines", None)


# --------------------------------------------------------- operator actions
_TURN_ACTIONS = (OperatorAction.CUT, OperatorAction.SKIP, OperatorAction.REDO)


def _action_claims(data: SessionData, out: Verification) -> None:
    last = 0
    for n, action in enumerate(data.actions, 1):
        where = f"operator action {n} ({action.get('action')})"
        after = action.get("after_turn", 0)
        in_order = isinstance(after, int) and last <= after <= len(data.turns)
        out.check(
            where,
            "after_turn",
            in_order,
            f"after turn {after}"
            if in_order
            else f"after turn {after}: must not precede an earlier action nor pass the last turn",
        )
        last = after if isinstance(after, int) else last
        if action.get("action") in _TURN_ACTIONS and "turn" in action:
            _cut_claim(data, out, where, action, data.actions[: n - 1])
        if "partial_cut" in action:
            problem = cut_problem(action.get("partial"), action["partial_cut"])
            out.check(where, "partial_cut", problem is None, problem or "the cut text as kept")
        if action.get("action") == OperatorAction.ADOPT:
            problem = adoption_problem(data, action)
            out.check(
                where, "adopt", problem is None, problem or "names the unsigned records as they are"
            )
        if action.get("action") == OperatorAction.DECIDE:
            vote, rationale = action.get("vote"), str(action.get("rationale", ""))
            problem = protocol_class(data.spec).decision_problem(data.spec, str(vote))
            if not rationale.strip():
                problem = (problem + "; " if problem else "") + "no rationale"
            out.check(
                where,
                "vote",
                isinstance(vote, str) and problem is None,
                f"{_show(vote)} with a rationale"
                if problem is None
                else f"{_show(vote)}: {problem}",
            )
            if "via" in action:
                _channel_claim(out, where, action["via"])


def _channel_claim(out: Verification, where: str, via: Any) -> None:
    """A decision that came another way than moot's own (an MCP client, the decide page)
    names a channel moot knows."""
    known = [str(c) for c in DecisionChannel]
    ok = via in known
    out.check(
        where,
        "via",
        ok,
        f"came through {_show(via)}" if ok else f"{_show(via)} must be one of {', '.join(known)}",
    )


def _cut_claim(
    data: SessionData,
    out: Verification,
    where: str,
    action: dict[str, Any],
    earlier: list[dict[str, Any]],
) -> None:
    """A cut (or its redo) names a turn of its speaker not yet played; a skip after a cut left
    it invalid; a redo answers a cut of that turn recorded before it."""
    number, speaker = action.get("turn"), action.get("speaker")
    after = action.get("after_turn", 0)
    if not isinstance(number, int) or isinstance(number, bool) or number <= after:
        out.check(where, "turn", False, f"turn {_show(number)} was played before the action")
        return
    if number > len(data.turns):  # the run stopped before that turn was written
        out.check(where, "turn", True, f"turn {number}, not written before the run stopped")
        return
    turn = data.turns[number - 1]
    ok = turn.speaker == speaker
    if action.get("action") == OperatorAction.SKIP:
        ok = ok and turn.invalid and turn.error == "cut by the operator and skipped"
    if action.get("action") == OperatorAction.REDO:
        ok = ok and any(
            a.get("action") == OperatorAction.CUT and a.get("turn") == number for a in earlier
        )
    out.check(
        where,
        "turn",
        ok,
        f"turn {number} by {turn.speaker}" + ("" if ok else f": not {_show(speaker)}'s cut turn"),
    )


# ------------------------------------------------------ the result, recounted
def _result_claims(data: SessionData, out: Verification) -> None:
    result = data.result
    if result is None:
        return
    turns = data.turns
    extends = sum(1 for a in data.actions if a.get("action") == OperatorAction.EXTEND)
    recount = "a recount of the turns"
    out.same("result", "turns", result.get("turns"), len(turns), recount)
    rounds = max((t.round for t in turns), default=0)
    out.same("result", "rounds_run", result.get("rounds_run"), rounds, recount)
    out.same(
        "result",
        "max_rounds",
        result.get("max_rounds"),
        data.spec.max_rounds + extends,
        "the spec plus each extend action",
    )
    latest: dict[str, str] = {}
    for t in turns:
        if not t.invalid and t.vote:
            latest[t.speaker] = t.vote
    tally: dict[str, int] = dict.fromkeys(data.spec.debate.vote_options, 0)
    for vote in latest.values():
        tally[vote] = tally.get(vote, 0) + 1
    how = "the latest valid vote of each debater"
    if "vote_tally" in result:
        out.same("result", "vote_tally", result["vote_tally"], tally, how)
    elif any(tally.values()):  # left out only by a panel that votes on nothing
        out.check("result", "vote_tally", False, f"missing, though {len(latest)} debaters voted")
    if "final_votes" in result:
        out.same("result", "final_votes", result["final_votes"], latest, how)
    _rule_claims(data, out, result, tally)
    protocol_for(data.spec).result_claims(data, out, result)


def _rule_claims(
    data: SessionData, out: Verification, result: dict[str, Any], tally: dict[str, int]
) -> None:
    decision, rule = result.get("decision"), result.get("decision_rule")
    if rule == DecisionRule.THRESHOLD_VOTE:
        threshold = data.spec.threshold
        count = tally.get(str(decision), 0)
        tied = [v for v, n in tally.items() if n == count and v != decision]
        ok = count >= threshold and not tied
        out.check(
            "result",
            "decision_rule",
            ok,
            f"{decision} has {count} of {threshold} votes needed"
            + (f", tied with {', '.join(tied)}" if tied else "")
            + ("" if ok else ": the threshold and tie rule do not give this decision"),
        )
    by_operator = rule in _OPERATOR_RULES
    decided_by = result.get("decided_by")
    expected = DecidedBy.OPERATOR if by_operator else DecidedBy.RULE
    out.same("result", "decided_by", decided_by, expected, f"the rule {rule}")
    kinds = [a for a in data.actions if a.get("action") == OperatorAction.DECIDE]
    if rule == DecisionRule.OPERATOR_DECISION:
        last = kinds[-1] if kinds else {}
        ok = bool(kinds) and last.get("vote") == decision
        out.check(
            "result",
            "decision",
            ok,
            (
                "the operator deferred it to a person (escalate, operator action): unresolved"
                if is_deferral(decision, rule)
                else f"the operator decided {decision} (operator action)"
            )
            if ok
            else f"{decision} by operator_decision, but no decide action records it",
        )
    if rule == DecisionRule.BUDGET_EXHAUSTED:
        _budget_claim(data, out, result)
    if rule == DecisionRule.SESSION_FULL:
        _full_claim(data, out, result)
    if rule == DecisionRule.OPERATOR_ESCALATION:
        ok = any(a.get("action") == OperatorAction.ESCALATE for a in data.actions)
        out.check(
            "result",
            "decision",
            ok,
            "the operator escalated (operator action)"
            if ok
            else "operator_escalation, but no escalate action records it",
        )


def _budget_claim(data: SessionData, out: Verification, result: dict[str, Any]) -> None:
    """The cap named was reached: the turns' tokens or cost against the cap then in force."""
    budget = Budget(data.spec, data.turns)
    for action in data.actions:
        if action.get("action") == OperatorAction.RAISE_BUDGET:
            budget.apply(action)
    key = str(result.get("budget_exhausted"))
    speaker = str(result.get("budget_speaker"))
    named = {cap_key(scope, cap): (scope, cap) for scope in (SESSION, speaker) for cap in CAPS}
    if key not in named or speaker not in budget.ledgers:
        out.check("result", "budget_exhausted", False, f"{key} is not a cap of {speaker}")
        return
    scope, cap = named[key]
    spent, limit = budget.spent(scope, cap), budget.caps.get((scope, cap))
    out.same("result", "budget_spent", result.get("budget_spent"), spent, "a sum over the turns")
    ok = limit is not None and spent >= limit
    out.check(
        "result",
        "budget_exhausted",
        ok,
        f"{key}: {spent} spent of {limit}" + ("" if ok else ": the cap was not reached"),
    )


def _full_claim(data: SessionData, out: Verification, result: dict[str, Any]) -> None:
    """The refused record would have taken the file past the room its records had."""
    refused, room = result.get("session_full"), record_room(len(data.turns))
    ok = isinstance(refused, int) and not isinstance(refused, bool) and refused > room
    out.check(
        "result",
        "session_full",
        ok,
        f"{_show(refused)} bytes with the next turn, past the {room:,} its records may take"
        if ok
        else f"{_show(refused)} bytes is within the {room:,} its records may take: not full",
    )


# ------------------------------------------------- replayed through the engine
class _OutOfTurns(Exception):
    """The replay needs a turn the file does not hold."""

    def __init__(self, slot: Slot) -> None:
        super().__init__(slot.index)
        self.slot = slot


class _NeverCalled:
    """The replay's provider: asked only when the recorded turns have run out."""

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        raise ProviderError("replay", "the file holds no turn for this slot")

    async def aclose(self) -> None:
        return None


class _FullFile:
    """The replay's file for a session that ended full: it takes no turn, and writes nothing."""

    def __init__(self, full: int) -> None:
        self.full = full

    def append_turn(self, turn: Turn) -> None:
        return None

    async def durable(self) -> None:
        return None

    def append_action(self, action: dict[str, Any]) -> None:
        return None


class _Replay:
    """The engine fed the recorded turns and actions; it never reaches a model."""

    def __init__(self, data: SessionData) -> None:
        self.result = data.result or {}
        provider = _NeverCalled()
        full = self.result.get("session_full")
        ended_full = self.result.get("decision_rule") == DecisionRule.SESSION_FULL
        self.engine = Engine(
            data.spec,
            lambda debater: provider,
            sink=_FullFile(full) if ended_full and isinstance(full, int) else None,
            recorded_turns=data.turns,
            recorded_actions=data.actions,
            on_failure=self._out_of_turns,
        )
        self.decision: Decision | None = None
        self.needs: Slot | None = None  # the slot the recorded turns ran out at
        self.error: str | None = None
        try:
            self.decision = asyncio.run(self.engine.run())
        except _OutOfTurns as err:
            self.needs = err.slot
        except SessionError as err:
            self.error = "; ".join(err.problems)
        except Exception as err:  # a damaged record the rules cannot replay
            self.error = f"{type(err).__name__}: {err}"

    async def _out_of_turns(self, slot: Slot, error: ProviderError) -> FailureChoice:
        operator = self.engine.operator
        operator.replay()  # an operator stop recorded mid-phase ends the run here
        if operator.stop is not None:
            raise asyncio.CancelledError
        failed = self.result.get("decision_rule") == DecisionRule.PROVIDER_FAILURE
        if failed and self.result.get("failed_speaker") == slot.speaker:
            return FailureChoice(FailureAction.ESCALATE)  # the provider failed here, on record
        if self.needs is not None:  # a later call of the same phase: the first one says it
            raise asyncio.CancelledError
        self.needs = slot
        raise _OutOfTurns(slot)


def _replay_claims(data: SessionData, out: Verification) -> None:
    replayed = _Replay(data)
    engine = replayed.engine
    if replayed.error is not None:
        out.check("file", "replay", False, f"the engine cannot replay the turns: {replayed.error}")
        return
    played = len(engine.state.turns)
    if replayed.decision is not None and played < len(data.turns):
        out.check(
            f"turn {played + 1}",
            "schedule",
            False,
            f"recorded after the debate was decided at turn {played} "
            f"({replayed.decision.decision}, {replayed.decision.rule})",
        )
    result = data.result
    if result is None:
        if replayed.decision is not None:
            out.notes.append(
                f"no [result] yet: the turns reach {replayed.decision.decision} "
                f"({replayed.decision.rule}); resuming writes it"
            )
        else:
            out.notes.append(f"unfinished: {counted(played, 'turn')} and no [result] (not a claim)")
        return
    recomputed = dict(engine.result())
    if replayed.decision is None:
        slot = replayed.needs
        at = f" at turn {slot.index} ({slot.speaker}, {slot.phase})" if slot else ""
        out.check(
            "result",
            "decision",
            False,
            f"recorded {_show(result.get('decision'))}, but the recorded turns do not reach a "
            f"decision: the schedule goes on{at}",
        )
    legacy = next((r.stored is None for r in data.records if r.name == "result"), False)
    keys = set(result) if legacy else set(result) | set(recomputed)
    if result.get("decision_rule") == DecisionRule.PROVIDER_FAILURE and _PROVIDER_SAID in keys:
        keys.discard(_PROVIDER_SAID)
        out.notes.append("result.failure is what the provider said: recorded, not re-derivable")
    for key in sorted(keys):
        if replayed.decision is None and key in _DECISION_KEYS:
            continue  # named above
        if key in _VOTE_KEYS and key not in recomputed and not _table_values(result.get(key)):
            continue  # an older moot wrote a panel's empty tally; recounted above
        out.same("result", key, result.get(key), recomputed.get(key), "the engine's replay")


_DECISION_KEYS = frozenset({"decision", "decision_rule", "decided_by", "decided_via", "rationale"})
_VOTE_KEYS = frozenset({"vote_tally", "final_votes"})


def _table_values(value: Any) -> list[Any]:
    """A table's values with any zero or empty one left out ([] for anything else)."""
    return [v for v in value.values() if v] if isinstance(value, dict) else []


# --------------------------------------------------------------- formatting
def _plain(value: Any) -> Any:
    """A value as the file holds it: no None (TOML has none), tuples as lists, enums as text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value if v is not None]
    if isinstance(value, str):
        return str(value)
    return value


def _show(value: Any, limit: int = 120) -> str:
    text = json.dumps(_plain(value), ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summary_lines(report: Verification) -> Iterable[str]:
    """The human summary: one line when every claim holds, else one per failed claim."""
    if report.ok:
        decided = f"; decision {report.decision}" if report.decision else ""
        yield (
            f"{report.path}: verified: {all_hold(len(report.claims))} "
            f"({counted(report.turns, 'turn')}, {counted(report.records, 'record')}{decided})"
        )
    else:
        failures = report.failures
        yield f"{report.path}: {do_not_hold(len(failures), 'claim')}"
        for c in failures:
            yield f"  - {c.where}: {c.field}: {c.detail}"
    yield from signer_lines(
        report.signers, report.unsigned, report.trusted, report.adopted_by, report.own
    )
    for note in report.notes:
        yield f"  note: {note}"


def signer_lines(
    signers: Sequence[Span],
    unsigned: int,
    trusted: dict[str, str] | None,
    adopted: str | None = None,
    own: str | None = None,
) -> Iterable[str]:
    """Who signed the file, and whether the user trusts them (``trusted``: None if not asked);
    ``own`` (a fingerprint) alone is shown as the user's key."""
    if not signers:
        yield (
            "  unsigned: nothing shows who wrote it (files written before moot signed "
            "sessions are unsigned)"
        )
        return
    if unsigned and adopted is not None:
        yield (
            f"  the first {counted(unsigned, 'record')} {'was' if unsigned == 1 else 'were'} "
            f"written unsigned and adopted by {adopted} (`moot adopt`)"
        )
    elif unsigned:
        yield (
            f"  the first {counted(unsigned, 'record')} {'was' if unsigned == 1 else 'were'} "
            "written unsigned: no signature vouches for them (`moot adopt` takes on a file of "
            "your own written before signing)"
        )
    for s in signers:
        span = s.first if s.first == s.last else f"{s.first} to {s.last}"
        if trusted is None:
            whose = ""
        elif s.fingerprint == own:
            whose = " (your key)"
        elif s.fingerprint in trusted:
            whose = f" ({trusted[s.fingerprint]}, a key you trust)"
        else:
            whose = " (not a key you trust: `moot keys trust FILE` adds one)"
        yield f"  signed by {s.fingerprint}{whose}: {span}"
