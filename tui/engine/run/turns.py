"""The turn player: one slot in, one validated turn record out.

It builds the prompt from what the slot may see, calls the provider, asks again
when the answer does not validate, applies the provider-failure policy, and
assesses rubric answers. Whether the turn counts is decided here, not by a model.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from tui.engine.basics.redact import Redactor
from tui.engine.basics.vocab import ESCALATE, DecisionRule, OperatorAction
from tui.engine.core.parsing import TurnParseError, as_text, extract_json_object, parse_turn
from tui.engine.core.ports import (
    Provider,
    ProviderError,
    TokenSink,
    ToolBox,
    ToolFailure,
    TurnReply,
    TurnRequest,
)
from tui.engine.core.rawtext import kept
from tui.engine.core.records import CONTENT_MODELS, Turn
from tui.engine.core.schedule import Slot
from tui.engine.core.state import DebateState, Decision
from tui.engine.core.usage import clamp
from tui.engine.grounding.context import SAW_PREFIX, seen_documents, slot_context
from tui.engine.grounding.evidence import assess, with_rubric
from tui.engine.grounding.lookups import (
    asked,
    lookup_schema,
    offered,
    results,
    results_message,
    run_lookups,
    tools_of,
    with_lookups,
)
from tui.engine.protocols.base import Protocol
from tui.engine.run.events import (
    EventBus,
    LedgerChanged,
    LookupsRan,
    ProviderFailed,
    TokenReceived,
    TurnStarted,
)
from tui.engine.run.operator import OperatorLog, now
from tui.engine.run.prompts import build_messages, reask_message
from tui.engine.run.roster import Roster
from tui.engine.run.schemas import fit, kind_schema, negative_channel
from tui.engine.specs.spec import Debater, Spec

# Context labels that are not the work under assessment: rubric evidence must quote the work.
NOT_ARTIFACT = ("note:", "critique:", "challenges:", "responses:", SAW_PREFIX)


class FailureAction(StrEnum):
    """What to do when a provider call fails."""

    RETRY = "retry"
    SKIP = "skip"
    ESCALATE = "escalate"
    REPLACE = "replace"


@dataclass(frozen=True, slots=True)
class FailureChoice:
    """The answer to a provider failure; ``model`` names the replacement for REPLACE."""

    action: FailureAction
    model: str | None = None

    def __post_init__(self) -> None:
        if (self.action == FailureAction.REPLACE) != bool(self.model):
            raise ValueError("a model is given with replace, and only with replace")


FailureHandler = Callable[[Slot, ProviderError], Awaitable[FailureChoice]]


class CutAction(StrEnum):
    """What the operator does with a turn it cut."""

    REDO = "redo"  # ask again (after a note, if one is given)
    SKIP = "skip"  # record the turn invalid, its partial text kept
    REPLACE = "replace"  # ask again with another model


@dataclass(frozen=True, slots=True)
class CutChoice:
    """The operator's answer to a cut; ``model`` with REPLACE only, ``note`` with REDO only."""

    action: CutAction
    model: str | None = None
    note: str | None = None

    def __post_init__(self) -> None:
        if (self.action == CutAction.REPLACE) != bool(self.model):
            raise ValueError("a model is given with replace, and only with replace")
        if self.note is not None and self.action != CutAction.REDO:
            raise ValueError("a note goes with redo only")


class _Redo:
    """``_call``'s answer when the cut turn is to be played again from its prompt."""


@dataclass(slots=True)
class _Attempts:
    """What one turn's calls add up to, for its record: the conversation so far, their
    usage, the last reply's text and error, its content once valid, the lookups run."""

    messages: list[dict[str, Any]]
    count: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    structured: str | None = None
    client: str | None = None
    clamped: set[str] = field(default_factory=set)
    last_text: str = ""
    last_error: str = ""
    content: Any = None
    lookups: list[dict[str, Any]] | None = None

    @property
    def first(self) -> bool:
        """A call before any lookup ran: a required lookup holds it, the re-ask of an
        answer that was cut or refused too (a re-ask let off would skip the lookup)."""
        return self.lookups is None

    def took(self, reply: TurnReply) -> None:
        """Count a reply, its usage clamped first."""
        self.clamped |= clamp(reply)
        self.tokens_in += reply.tokens_in
        self.tokens_out += reply.tokens_out
        self.cost += reply.cost
        self.structured = reply.extra.get("structured")
        self.client = reply.extra.get("client")

    def answered(self, then: dict[str, Any]) -> None:
        """The last reply and what answers it (lookup results, a re-ask) join the messages."""
        self.messages = [
            *self.messages,
            {"role": "assistant", "content": self.last_text},
            then,
        ]


async def escalate_on_failure(slot: Slot, error: ProviderError) -> FailureChoice:
    """Headless default: a provider failure ends the debate unresolved."""
    return FailureChoice(FailureAction.ESCALATE)


class TurnPlayer:
    """Plays live slots for one engine; recorded turns never reach it."""

    def __init__(
        self,
        spec: Spec,
        protocol: Protocol,
        state: DebateState,
        roster: Roster,
        operator: OperatorLog,
        bus: EventBus,
        provider_for: Callable[[Debater], Provider],
        on_failure: FailureHandler,
        tools: ToolBox | None = None,
    ) -> None:
        self.spec = spec
        self._tools = tools
        self.protocol = protocol
        self.state = state
        self.roster = roster
        self.operator = operator
        self._bus = bus
        self._provider_for = provider_for
        self._on_failure = on_failure
        self._redact = Redactor.for_spec(spec)  # model text too: a reply can echo a key
        self.turns_under_way = 0  # slots past the pause gate whose turn is not yet played
        self._models: dict[str, type[Any]] = {**CONTENT_MODELS, **protocol.turn_kinds}
        self._rubric_kinds: set[str] = set()
        if spec.rubric is not None:
            applies = set(spec.rubric.applies_to)
            for kind in protocol.verifier_kinds:
                probe = Slot(0, 1, "", "", kind)
                if protocol.rubric_role(probe) in applies:
                    self._models[kind] = with_rubric(self._models[kind], spec.rubric)
                    self._rubric_kinds.add(kind)
        votes = spec.debate.vote_options
        self._partial: dict[int, list[str]] = {}  # text streamed so far, per slot
        self._calls: dict[int, tuple[Slot, asyncio.Task[Any]]] = {}  # the task calling
        self._cuts: dict[int, tuple[Slot, asyncio.Future[CutChoice]]] = {}
        self.schemas = {
            k: kind_schema(
                m, votes, spec.rubric if k in self._rubric_kinds else None, spec.debate.min_words
            )
            for k, m in self._models.items()
        }
        # Fitted schemas of slots the protocol leaves as their kind's, per max_tokens:
        # building one deep-copies the schema, which would cost more than the rest of a turn.
        self._fitted: dict[tuple[str, int | None], tuple[dict[str, Any], dict[str, Any]]] = {}

    def refusal(self, slot: Slot) -> Decision | None:
        """A verifier slot judging its own speaker's work is refused on record."""
        against = self.protocol.cross_family_against(slot)
        own = slot.speaker in against if against else slot.speaker == slot.target
        if slot.kind in self.protocol.verifier_kinds and own:
            return Decision(
                ESCALATE,
                DecisionRule.SELF_CRITIQUE_REFUSED,
                extra={"refused_speaker": slot.speaker, "refused_slot": slot.index},
            )
        return None

    def _slot_schemas(
        self, slot: Slot, max_tokens: int | None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The schema the prompt describes, and the one the provider constrains to."""
        base = self.schemas[slot.kind]
        schema = self.protocol.slot_schema(self.state, slot, base)
        key = (str(slot.kind), max_tokens)
        if schema is base and key in self._fitted:
            return self._fitted[key]
        fitted = fit(schema, max_tokens)
        pair = (fitted, negative_channel(fitted, self.protocol.negative_channels.get(slot.kind)))
        if schema is base:
            self._fitted[key] = pair
        return pair

    def _with_lookups(
        self, slot: Slot, pair: tuple[dict[str, Any], dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """The slot's schemas with ``lookups`` when its speaker is given a tool, and the
        one its first call is held to (a lookup required when a tool of its says so)."""
        given = tools_of(self.spec, slot.speaker)
        if not given:
            return (*pair, pair[1])
        tools = self._tools
        prop = (
            lookup_schema(self.spec, slot.speaker, offered(tools, self.spec), tools.hints)
            if tools is not None
            else lookup_schema(self.spec, slot.speaker, lambda _: ())
        )
        schema = with_lookups(pair[1], prop)
        first = (
            with_lookups(pair[1], prop, required=True)
            if any(t.required for t in given) and tools is not None
            else schema
        )
        return with_lookups(pair[0], prop), schema, first

    async def play(self, slot: Slot, view: DebateState | None = None) -> Turn | Decision | None:
        """The turn for ``slot``; None when the run was stopped before it finished, or the
        decision that ends the run at this slot (a provider failure, escalated).

        ``view`` is the state a parallel phase's calls all see (the debate as the
        phase began); a sequential slot sees the state as it is now.
        """
        if not self.operator.gate.is_set():
            await self.operator.gate.wait()
        if self.operator.stop is not None:
            return None
        self.turns_under_way += 1  # past the gate: played, whatever the gate does now
        try:
            return await self._speak(slot, view)
        finally:
            self.turns_under_way -= 1

    async def _speak(self, slot: Slot, view: DebateState | None) -> Turn | Decision | None:
        debater = self.roster[slot.speaker]
        await self._start_tools(slot)
        items = slot_context(self.spec, self.protocol, self.state if view is None else view, slot)
        prompt_schema, schema, first_schema = self._with_lookups(
            slot, self._slot_schemas(slot, debater.max_tokens)
        )
        votes = self.spec.debate.vote_options
        tally = _Attempts(build_messages(self.spec, debater, slot, items, prompt_schema, votes))
        content_model = self._models[slot.kind]
        started_at, t0 = now(), time.perf_counter()
        on_token = self._token_sink(slot)
        while tally.count <= self.spec.debate.retries + (tally.lookups is not None):
            tally.count += 1
            request = TurnRequest(
                debater=debater,
                slot=slot,
                messages=tally.messages,
                schema_name=content_model.__name__,
                json_schema=first_schema if tally.first else schema,
                votes=votes,
                attempt=tally.count,
                speaker_turn=self.state.speaker_turns.get(slot.speaker, 0) + 1,
            )
            spent = self.operator.budget.exhausted(slot.speaker)
            if spent is not None and tally.count > 1:  # no re-ask past a cap: the turn ends invalid
                tally.last_error += f"; not asked again: {spent['budget_exhausted']} is reached"
                break
            if spent is not None:
                self.operator.halt(
                    Decision(ESCALATE, DecisionRule.BUDGET_EXHAUSTED, extra=spent),
                    keep=asyncio.current_task(),
                )
                return None
            if self._bus.active:
                self._bus.emit(TurnStarted(slot, debater.model, tally.count))
            called = time.perf_counter()
            reply = await self._call(request, on_token)
            if isinstance(reply, _Redo):
                return await self.play(slot, view)  # a fresh prompt: notes and model as now
            if reply is None or isinstance(reply, Turn | Decision):
                return reply  # stopped, failed, or skipped after a provider failure or a cut
            tally.took(reply)  # before anything counts it: a server's word is not trusted
            self._charge(slot, reply, called)
            # A lone surrogate can be neither printed nor saved; a key it echoes is never kept.
            reply.text = tally.last_text = self._redact(as_text(reply.text))
            debater = self.roster[slot.speaker]
            if tally.lookups is None and (wanted := self._asked(slot, reply.text)):
                await self._look_up(slot, wanted, tally)
                continue
            if self._parsed(slot, content_model, votes, tally):
                break
        return self._turn_of(slot, items, tally, started_at, t0)

    async def _start_tools(self, slot: Slot) -> None:
        """Start the tools once, when the speaker is given one; a tool that cannot start
        refuses its lookups instead of failing the turn."""
        if self._tools is not None and tools_of(self.spec, slot.speaker):
            try:
                await self._tools.start()
            except ToolFailure:
                pass

    async def _look_up(self, slot: Slot, wanted: list[dict[str, Any]], tally: _Attempts) -> None:
        """Run the lookups the last reply asked for and give their results to the next call."""
        tally.lookups = await run_lookups(
            self.spec,
            slot.speaker,
            wanted,
            self._tools,
            self._redact,
            budget=self.operator.budget,
        )
        if self._bus.active:
            self._bus.emit(LookupsRan(slot, tuple(tally.lookups)))
        tally.answered(results_message(tally.lookups))

    def _parsed(
        self, slot: Slot, content_model: type[Any], votes: list[str], tally: _Attempts
    ) -> bool:
        """Whether the last reply is a valid turn (its content kept); if not, the re-ask
        that names why goes to the next call."""
        try:
            tally.content = parse_turn(tally.last_text, content_model, votes)
            self.protocol.check(self.state, slot, tally.content)
            return True
        except TurnParseError as err:
            tally.content = None
            tally.last_error = str(err)
            tally.answered(reask_message(tally.last_error))
            return False

    def _turn_of(
        self,
        slot: Slot,
        items: list[tuple[str, str, str]],
        tally: _Attempts,
        started_at: str,
        t0: float,
    ) -> Turn:
        """The record of a played slot: valid with its content, or invalid with its raw text."""
        turn = self.new_turn(slot, started_at)
        turn.saw = [label for label, _, _ in items]
        turn.attempts = tally.count
        turn.elapsed_ms = round((time.perf_counter() - t0) * 1000, 3)
        turn.tokens_in, turn.tokens_out, turn.cost = tally.tokens_in, tally.tokens_out, tally.cost
        turn.structured = tally.structured
        turn.client = tally.client
        turn.clamped = sorted(tally.clamped) or None
        turn.lookups = tally.lookups
        if tally.content is None:
            turn.invalid = True
            turn.raw, turn.raw_cut = kept(tally.last_text)
            turn.error = self._redact(tally.last_error)
        else:
            turn.content = self._redact.tree(tally.content.model_dump())
            turn.vote = self.spec.debate.vote_of(turn.content)
        against = self.protocol.cross_family_against(slot)
        if against:
            mine = self.roster.family[slot.speaker]
            turn.cross_family_held = all(mine != self.roster.family[a] for a in against)
        if tally.content is not None:
            if slot.kind in self._rubric_kinds and self.spec.rubric is not None:
                turn.derived["rubric"] = assess(
                    self.spec.rubric,
                    turn.content.get("rubric", []),
                    [
                        (label, text)
                        for label, _, text in items
                        if not label.startswith(NOT_ARTIFACT)
                    ],
                    (t.content for t in self.state.turns),
                    seen_documents(items),
                    results(tally.lookups),
                )
            self.protocol.annotate(self.state, slot, turn)
        return turn

    def _asked(self, slot: Slot, text: str) -> list[dict[str, Any]]:
        """The lookups a reply asks for, when the spec has tools; none from broken JSON."""
        if not self.spec.tools:
            return []
        try:
            return asked(extract_json_object(text))
        except TurnParseError:
            return []

    def _charge(self, slot: Slot, reply: TurnReply, called: float) -> None:
        """Put one call on the speaker's ledger, and show it."""
        window = reply.extra.get("context_window")
        ledger = self.operator.budget.charge(
            slot.speaker,
            reply.tokens_in + reply.tokens_out,
            reply.cost,
            latency_ms=round((time.perf_counter() - called) * 1000, 3),
            context=(reply.tokens_in, window if isinstance(window, int) else None),
        )
        if self._bus.active:
            self._bus.emit(LedgerChanged(slot.speaker, replace(ledger)))

    def _token_sink(self, slot: Slot) -> TokenSink:
        """Streams tokens to the bus and keeps them, so a cut can record the partial text."""

        def sink(text: str) -> None:
            text = as_text(text)
            self._partial.setdefault(slot.index, []).append(text)
            if self._bus.active:
                self._bus.emit(TokenReceived(slot, text))

        return sink

    # ------------------------------------------------------------------- cuts
    @property
    def speaking(self) -> list[Slot]:
        """Slots whose provider call is under way now."""
        return [slot for slot, task in self._calls.values() if not task.done()]

    @property
    def awaiting_cut(self) -> list[Slot]:
        """Cut slots waiting for the operator's choice."""
        return [slot for slot, choice in self._cuts.values() if not choice.done()]

    def cut(self, speaker: str | None = None) -> list[Slot]:
        """Cancel the speaking call of ``speaker`` (or every one) at once; journal each cut."""
        cut = []
        loop = asyncio.get_running_loop()
        for slot, task in list(self._calls.values()):
            if task.done() or slot.index in self._cuts or speaker not in (None, slot.speaker):
                continue
            self._cuts[slot.index] = (slot, loop.create_future())
            task.cancel()
            partial, partial_cut = kept(self._redact("".join(self._partial.get(slot.index, []))))
            self.operator.record(
                OperatorAction.CUT,
                speaker=slot.speaker,
                turn=slot.index,
                model=self.roster[slot.speaker].model,
                partial=partial,
                partial_cut=partial_cut,
            )
            cut.append(slot)
        return cut

    def answer_cut(self, choice: CutChoice, speaker: str | None = None) -> list[Slot]:
        """Give the operator's choice to the cut turn of ``speaker`` (or every cut turn)."""
        answered = []
        for slot, waiting in list(self._cuts.values()):
            if speaker in (None, slot.speaker) and not waiting.done():
                waiting.set_result(choice)
                answered.append(slot)
        return answered

    async def _after_cut(self, slot: Slot) -> Turn | _Redo:
        """Wait for the operator's choice on a cut turn, and carry it out."""
        try:
            choice = await self._cuts[slot.index][1]
        finally:
            del self._cuts[slot.index]
        partial = "".join(self._partial.pop(slot.index, []))
        if choice.action == CutAction.SKIP:
            self.operator.record(OperatorAction.SKIP, speaker=slot.speaker, turn=slot.index)
            turn = self.new_turn(slot, now())
            turn.invalid = True
            turn.raw, turn.raw_cut = kept(self._redact(partial))
            turn.error = "cut by the operator and skipped"
            return turn
        if choice.action == CutAction.REPLACE and choice.model:
            self.operator.replace_model(slot.speaker, choice.model)
        else:
            if choice.note:
                self.operator.note(choice.note)
            # The answer is on record, so no cut is left looking unanswered.
            self.operator.record(OperatorAction.REDO, speaker=slot.speaker, turn=slot.index)
        return _Redo()

    async def _call(
        self, request: TurnRequest, on_token: TokenSink
    ) -> TurnReply | Turn | _Redo | Decision | None:
        """One provider call; failures go to the failure handler, never up as tracebacks.

        A failure the handler escalates comes back as the decision that ends the run.
        """
        slot = request.slot
        while True:
            provider = self._provider_for(self.roster[slot.speaker])
            self._partial[slot.index] = []
            current = asyncio.current_task()
            assert current is not None
            self._calls[slot.index] = (slot, current)
            try:
                return await provider.complete(request, on_token)
            except asyncio.CancelledError:
                if slot.index not in self._cuts or self.operator.stop is not None:
                    raise  # the run itself was stopped (decide, escalate, a halt)
                if current.uncancel():
                    raise  # cancelled for another reason as well
                return await self._after_cut(slot)
            except ProviderError as err:
                error = ProviderError(err.kind, self._redact(err.message))
            except Exception as err:  # a provider bug must not crash the console
                error = ProviderError("internal", self._redact(f"{type(err).__name__}: {err}"))
            finally:
                del self._calls[slot.index]
                self._partial.pop(slot.index, None)
            self._bus.emit(ProviderFailed(slot, error.kind, error.message))
            choice = await self._on_failure(slot, error)
            if choice.action == FailureAction.RETRY:
                continue
            if choice.action == FailureAction.REPLACE and choice.model:
                self.operator.replace_model(slot.speaker, choice.model)
                request.debater = self.roster[slot.speaker]
                continue
            if choice.action == FailureAction.SKIP:
                self.operator.record(OperatorAction.SKIP, speaker=slot.speaker, error=error.message)
                turn = self.new_turn(slot, now())
                turn.invalid = True
                turn.error = f"provider failure ({error.kind}): {error.message}"
                return turn
            failure = f"{error.kind}: {error.message}"
            return Decision(  # the engine ends the run here once the slots before it are in
                ESCALATE,
                DecisionRule.PROVIDER_FAILURE,
                extra={"failed_speaker": slot.speaker, "failure": failure},
            )

    def new_turn(self, slot: Slot, started_at: str) -> Turn:
        """A turn for a slot, with the speaker's current model and family."""
        return Turn(
            index=slot.index,
            round=slot.round,
            phase=slot.phase,
            speaker=slot.speaker,
            kind=slot.kind,
            model=self.roster[slot.speaker].model,
            family=self.roster.family[slot.speaker],
            target=slot.target,
            variant=slot.variant,
            started_at=started_at,
        )
