"""A ``moot bench`` run as one trace: a root span for the bench, one span per item arm.

Each run of an arm over an item (the debate, the plain vote, the single answer) is
a child ``invoke_workflow`` span carrying its record's figures: right or wrong,
calls, tokens, cost, failed calls and, for the debate, how answers moved between
rounds. The bench's report, arm by arm, goes on the root as it ends. The question
and the answers are content, so they stay out unless capture is asked for.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Span, Status, StatusCode, Tracer, set_span_in_context

from tui.telemetry.spans import CONVERSATION, OPERATION

PREFIX = "moot.bench"
RUN_FIGURES = (
    "correct",
    "calls",
    "tokens",
    "cost",
    "failed",
    "wrong_to_right",
    "right_to_wrong",
    "agreement",
)


def _value(value: Any) -> Any:
    """An attribute value OpenTelemetry takes: scalars, and lists (not tuples) of them."""
    return list(value) if isinstance(value, list | tuple) else value


class BenchTrace:
    """The spans of one bench run; ``run`` and ``ran`` bracket each item arm."""

    def __init__(self, tracer: Tracer, about: dict[str, Any], *, capture: bool, model: str) -> None:
        self.tracer = tracer
        self.capture = capture
        self.model = model
        self.root = tracer.start_span(
            "invoke_workflow moot bench",
            attributes={
                OPERATION: "invoke_workflow",
                "gen_ai.request.model": model,
                **{f"{PREFIX}.{k}": _value(v) for k, v in about.items()},
            },
        )
        self.open: dict[tuple[int, str], Span] = {}

    def run(self, item: int, arm: str, question: str) -> None:
        span = self.tracer.start_span(
            f"invoke_workflow moot bench {arm}",
            context=set_span_in_context(self.root),
            attributes={
                OPERATION: "invoke_workflow",
                "gen_ai.request.model": self.model,
                f"{PREFIX}.item": item,
                f"{PREFIX}.arm": arm,
            },
        )
        if self.capture:
            span.set_attribute(f"{PREFIX}.question", question)
        self.open[(item, arm)] = span

    def ran(self, record: dict[str, Any]) -> None:
        span = self.open.pop((record["item"], record["arm"]), None)
        if span is None:
            return
        for key in RUN_FIGURES:
            if key in record:
                span.set_attribute(f"{PREFIX}.{key}", record[key])
        span.set_attribute(f"{PREFIX}.answered", record.get("answer") is not None)
        if "session" in record:
            span.set_attribute(CONVERSATION, str(record["session"]).removesuffix(".toml"))
        if self.capture and record.get("answer") is not None:
            span.set_attribute(f"{PREFIX}.answer", str(record["answer"]))
        span.end()

    def report(self, result: dict[str, Any]) -> None:
        """The bench's figures, arm by arm (``moot.bench.vote.accuracy``, ...)."""
        self.root.set_attribute(f"{PREFIX}.new_calls", result["new_calls"])
        for arm, figures in result["arms"].items():
            for key, value in figures.items():
                self.root.set_attribute(f"{PREFIX}.{arm}.{key}", _value(value))

    def end(self) -> None:
        """Runs cut short (Ctrl+C, an error) end as errors, then the bench's span."""
        for span in self.open.values():
            span.set_status(Status(StatusCode.ERROR, "the bench stopped first"))
            span.end()
        self.open.clear()
        self.root.end()
