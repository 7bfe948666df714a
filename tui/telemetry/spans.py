"""One debate as one trace, in OpenTelemetry's GenAI conventions, built from engine events.

The root span is the debate (``invoke_workflow``); each turn played is a child
``invoke_agent`` span naming its debater, with the round, phase, kind, vote,
validity and the record's hash in the session file; each model call under a turn
is a ``chat`` span with the model, the provider and the tokens, and each lookup
an ``execute_tool`` span with the tool, the call, ok or not, the result's size and
the time it took as the session file records them (never the result, the tool's
words nor the arguments, unless capture is asked for). Operator actions and the
decision are events on the root. Message content (the motion, what each
turn said, open votes) is left out unless capture is asked for, and redacted even
then; the conversation id is the session header's hash, not the file's name,
which holds words of the title.
Turns replayed on resume were traced when they were played, so they are skipped.
"""

from __future__ import annotations

import json
import time
from typing import Any

from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode, Tracer, set_span_in_context

from tui.engine.basics.redact import Redactor
from tui.engine.core.records import Turn
from tui.engine.record.live import LiveSession
from tui.engine.run.events import (
    DecisionReached,
    Event,
    LedgerChanged,
    LookupsRan,
    OperatorActed,
    ProviderFailed,
    TurnCompleted,
    TurnStarted,
)

OPERATION = "gen_ai.operation.name"
CONVERSATION = "gen_ai.conversation.id"
AGENT = "gen_ai.agent.name"


def provider_name(model: str) -> str:
    """``gen_ai.provider.name`` from a spec's model string (LiteLLM's ``provider/model``)."""
    if model in ("scripted", "local"):
        return f"moot.{model}"
    prefix, slash, _ = model.partition("/")
    return prefix if slash else "litellm"


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


class DebateTrace:
    """An engine listener that turns one run of a session into spans."""

    def __init__(
        self,
        tracer: Tracer,
        session: LiveSession,
        *,
        capture: bool = False,
        parent: Context | None = None,
    ) -> None:
        self.tracer = tracer
        self.session = session
        self.capture = capture
        self.redact = Redactor.for_spec(session.spec)
        # The header's hash, not the file's name, which holds the title's words.
        self.conversation = session.store.header_hash
        self.open_votes = session.spec.debate.open_votes  # a vote is then the debater's answer
        self.tools = {t.name for t in session.spec.tools}
        spec = session.spec
        self.root = tracer.start_span(
            "invoke_workflow moot",
            context=parent,
            attributes={
                OPERATION: "invoke_workflow",
                CONVERSATION: self.conversation,
                "moot.protocol": spec.debate.protocol,
                "moot.debaters": list(spec.ids),
            },
        )
        if capture:
            self.root.set_attribute(
                "gen_ai.input.messages", _messages("user", self.redact(spec.debate.motion))
            )
        self.agents: dict[int, Span] = {}  # open invoke_agent spans by turn number
        self.calls: dict[str, Span] = {}  # the open chat span of each speaker
        self.spent = {k: v.tokens for k, v in session.engine.budget.ledgers.items()}
        self.ended = False

    # ----------------------------------------------------------------- events
    def __call__(self, event: Event) -> None:
        if self.ended:
            return
        if isinstance(event, TurnStarted):
            self._call_started(event)
        elif isinstance(event, LedgerChanged):
            self._call_ended(event)
        elif isinstance(event, ProviderFailed):
            self._call_failed(event)
        elif isinstance(event, LookupsRan):
            self._lookups(event)
        elif isinstance(event, TurnCompleted) and not event.replayed:
            self._turn_ended(event.turn)
        elif isinstance(event, OperatorActed):
            self._operator(event.action)
        elif isinstance(event, DecisionReached):
            self._decision(event)

    def _agent(self, index: int, speaker: str, round_: int, phase: str, kind: str) -> Span:
        span = self.agents.get(index)
        if span is None:
            span = self.tracer.start_span(
                f"invoke_agent {speaker}",
                context=set_span_in_context(self.root),
                attributes={
                    OPERATION: "invoke_agent",
                    AGENT: speaker,
                    CONVERSATION: self.conversation,
                    "moot.turn": index,
                    "moot.round": round_,
                    "moot.phase": phase,
                    "moot.kind": kind,
                },
            )
            self.agents[index] = span
        return span

    def _call_started(self, event: TurnStarted) -> None:
        slot = event.slot
        agent = self._agent(slot.index, slot.speaker, slot.round, slot.phase, str(slot.kind))
        self._close_call(slot.speaker)
        self.calls[slot.speaker] = self.tracer.start_span(
            f"chat {event.model}",
            context=set_span_in_context(agent),
            attributes={
                OPERATION: "chat",
                "gen_ai.request.model": event.model,
                "gen_ai.provider.name": provider_name(event.model),
                CONVERSATION: self.conversation,
                "moot.attempt": event.attempt,
            },
        )

    def _call_ended(self, event: LedgerChanged) -> None:
        span = self.calls.pop(event.speaker, None)
        ledger = event.ledger
        total = ledger.tokens - self.spent.get(event.speaker, 0)
        self.spent[event.speaker] = ledger.tokens
        if span is None:
            return
        prompt = ledger.context_tokens or 0
        span.set_attribute("gen_ai.usage.input_tokens", prompt)
        span.set_attribute("gen_ai.usage.output_tokens", max(0, total - prompt))
        span.end()

    def _call_failed(self, event: ProviderFailed) -> None:
        span = self.calls.pop(event.slot.speaker, None)
        if span is not None:
            span.set_attribute("error.type", event.kind)
            span.set_status(Status(StatusCode.ERROR, event.kind))
            span.end()

    def _close_call(self, speaker: str) -> None:
        span = self.calls.pop(speaker, None)
        if span is not None:
            span.end()

    def _lookups(self, event: LookupsRan) -> None:
        """The turn's lookups ran one after another, just now: each span is laid back from
        the present by the recorded times, so its duration is the one in the file."""
        slot = event.slot
        agent = self._agent(slot.index, slot.speaker, slot.round, slot.phase, str(slot.kind))
        parent = set_span_in_context(agent)
        end = time.time_ns()
        placed = []
        for record in reversed(event.lookups):
            start = end - round(float(record.get("ms", 0.0)) * 1_000_000)
            placed.append((record, start, end))
            end = start
        for record, start, finish in reversed(placed):
            span = self.tracer.start_span(
                f"execute_tool {self._tool_name(record)}",
                context=parent,
                start_time=start,
                attributes=self._lookup_facts(record),
            )
            if not record.get("ok"):
                span.set_status(Status(StatusCode.ERROR, "lookup refused or failed"))
            span.end(end_time=finish)

    def _lookup_facts(self, record: dict[str, Any]) -> dict[str, Any]:
        ok = bool(record.get("ok"))
        facts: dict[str, Any] = {
            OPERATION: "execute_tool",
            "gen_ai.tool.name": self._tool_name(record),
            "gen_ai.tool.call.id": str(record.get("id")),
            CONVERSATION: self.conversation,
            "moot.lookup.ok": ok,
            "moot.lookup.bytes": int(record.get("bytes", 0)),
            "moot.lookup.cut": bool(record.get("cut", False)),
        }
        if "ms" in record or self.capture:  # a refused call's name may be any words of a turn
            facts["moot.tool.call"] = str(record.get("call"))
        if "ms" in record:  # a refused lookup never ran
            facts["moot.lookup.duration_ms"] = float(record["ms"])
        if not ok:
            facts["error.type"] = "failed" if "ms" in record else "refused"
        if self.capture:
            facts["gen_ai.tool.call.arguments"] = self.redact(
                json.dumps(record.get("args", {}), ensure_ascii=False)
            )
            if record.get("reason"):
                facts["moot.lookup.reason"] = self.redact(str(record["reason"]))
        return facts

    def _tool_name(self, record: dict[str, Any]) -> str:
        """The spec's name for the tool; a refused lookup may name any words of a turn."""
        tool = str(record.get("tool"))
        if self.capture or tool in self.tools:
            return tool
        return "(not in the spec)"

    def _turn_ended(self, turn: Turn) -> None:
        agent = self.agents.pop(turn.index, None) or self._agent_now(turn)
        self._close_call(turn.speaker)
        agent.set_attribute("moot.valid", not turn.invalid)
        agent.set_attribute("moot.record_hash", self.session.store.last_hash)
        agent.set_attribute("gen_ai.request.model", turn.model)
        if turn.vote and self._shown_vote():
            agent.set_attribute("moot.vote", turn.vote)
        if turn.target:
            agent.set_attribute("moot.target", turn.target)
        if turn.invalid:
            agent.set_status(Status(StatusCode.ERROR, "invalid turn"))
        if self.capture:
            said = turn.raw if turn.invalid else json.dumps(turn.content, ensure_ascii=False)
            agent.set_attribute(
                "gen_ai.output.messages", _messages("assistant", self.redact(said or ""))
            )
        agent.end()

    def _shown_vote(self) -> bool:
        """An open vote is the debater's own words: content, shown only with capture."""
        return self.capture or not self.open_votes

    def _agent_now(self, turn: Turn) -> Span:
        """A turn that reached no model (skipped, cut): its span, opened as it ends."""
        span = self._agent(turn.index, turn.speaker, turn.round, turn.phase, str(turn.kind))
        del self.agents[turn.index]
        return span

    def _operator(self, action: dict[str, Any]) -> None:
        shown: dict[str, Any] = {
            "moot.action": str(action.get("action")),
            "moot.after_turn": int(action.get("after_turn", 0)),
        }
        for key in ("speaker", "model", "vote", "via", "cap", "turn"):
            if action.get(key) is not None and (key != "vote" or self._shown_vote()):
                shown[f"moot.{key}"] = str(action[key])
        if self.capture:
            for key in ("text", "rationale"):
                if action.get(key):
                    shown[f"moot.{key}"] = self.redact(str(action[key]))
        self.root.add_event("moot.operator_action", shown)

    def _decision(self, event: DecisionReached) -> None:
        facts = {
            "moot.decision_rule": str(event.rule),
            "moot.decided_by": str(event.decided_by),
        }
        if self._shown_vote():
            facts["moot.decision"] = event.decision
        via = event.result.get("decided_via")
        if via:
            facts["moot.decided_via"] = str(via)
        self.root.add_event("moot.decision", facts)
        self.root.set_attributes(facts)

    # -------------------------------------------------------------------- end
    def end(self) -> None:
        """Close whatever the run left open (a cancelled call), then the debate's span."""
        if self.ended:
            return
        self.ended = True
        for span in [*self.calls.values(), *self.agents.values()]:
            span.set_status(Status(StatusCode.ERROR, "the run stopped first"))
            span.end()
        self.calls.clear()
        self.agents.clear()
        self.root.end()
