"""OpenTelemetry GenAI traces of debates, on only when an OTLP endpoint is set.

Nothing here imports OpenTelemetry until ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set: off, a run pays one lookup of the
environment. On, each debate is one trace (``tui.telemetry.spans``) sent in
batches over OTLP/HTTP (``tui.telemetry.export``, the optional extra
``moot[otel]``); a slow or dead collector never holds a debate up.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tui.engine.live import LiveSession

ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
MISSING = (
    "moot: warning: OTEL_EXPORTER_OTLP_ENDPOINT is set but the otel extra is not installed "
    "(pip install 'moot[otel]'); no traces are sent"
)

Finish = Callable[[], None]
_missing_said = False


def enabled() -> bool:
    return any(os.environ.get(name) for name in ENDPOINT_ENVS)


def capture_content() -> bool:
    """Message content goes into spans only when asked for, and redacted even then."""
    return os.environ.get(CAPTURE_ENV, "").strip().lower() == "true"


def _available() -> bool:
    """The extra is installed (else one warning per process, and no traces)."""
    global _missing_said
    try:
        import tui.telemetry.export  # noqa: F401
    except ImportError:
        if not _missing_said:
            _missing_said = True
            print(MISSING, file=sys.stderr)
        return False
    return True


def trace_session(session: LiveSession, parent: Any = None) -> Finish | None:
    """Trace ``session``'s debate when tracing is on; call the result when the run ends.

    ``parent`` is what :func:`batch_trace` yields, so a batch's debates share its trace.
    """
    if not enabled() or not _available():
        return None
    from tui.telemetry.export import tracer
    from tui.telemetry.spans import DebateTrace

    trace = DebateTrace(tracer(), session, capture=capture_content(), parent=parent)
    session.engine.subscribe(trace)
    return trace.end


@contextmanager
def batch_trace(specs: int) -> Iterator[Any]:
    """One trace for a batch: yields the parent for its debates (None when tracing is off)."""
    if not enabled() or not _available():
        yield None
        return
    from opentelemetry.trace import set_span_in_context

    from tui.telemetry.export import tracer
    from tui.telemetry.spans import OPERATION

    span = tracer().start_span(
        "invoke_workflow moot batch", attributes={OPERATION: "invoke_workflow", "moot.specs": specs}
    )
    try:
        yield set_span_in_context(span)
    finally:
        span.end()


def flush() -> None:
    """Send what is batched before the process ends (bounded: a dead collector waits not)."""
    if not enabled() or "tui.telemetry.export" not in sys.modules:
        return
    from tui.telemetry.export import shutdown

    shutdown()
