"""OpenTelemetry GenAI traces of debates, on only when the person running moot asks.

Tracing is on when an OTLP endpoint is set in the environment
(``OTEL_EXPORTER_OTLP_ENDPOINT``) or in ``[telemetry]`` of moot's config file
(``tui.telemetry.settings``: the environment wins). Nothing here imports
OpenTelemetry until then: off, a run pays one look at the environment and the
config file. On, each debate is one trace (``tui.telemetry.spans``) sent in
batches over OTLP/HTTP (``tui.telemetry.export``, the optional extra
``moot[otel]``); a slow or dead collector never holds a debate up.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from tui.config import ConfigRefused, config_path, read_config
from tui.telemetry.settings import Settings, resolve

if TYPE_CHECKING:
    from tui.engine.record.live import LiveSession
    from tui.telemetry.bench import BenchTrace

MISSING = (
    "moot: warning: tracing is configured but the otel extra is not installed "
    "(pip install 'moot[otel]'); no traces are sent"
)

Finish = Callable[[], None]
_said: set[str] = set()


def _warn(message: str) -> None:
    """Each warning once per process (a batch of a thousand debates says it once)."""
    if message not in _said:
        _said.add(message)
        print(message, file=sys.stderr)


def settings() -> Settings | None:
    """The tracing settings in force, None when off; a bad config file is one warning."""
    path = config_path()
    try:
        config = read_config()
    except ConfigRefused as err:
        config = {}
        _warn(f"moot: warning: {err}; no [telemetry] settings are read from it")
    found, problems = resolve(os.environ, config, str(path))
    if problems:
        listed = "; ".join(problems)
        _warn(f"moot: warning: {path}: {listed}; the config file sends no traces until fixed")
    return found


def _available() -> bool:
    """The extra is installed (else one warning per process, and no traces)."""
    try:
        import tui.telemetry.export  # noqa: F401
    except ImportError:
        _warn(MISSING)
        return False
    return True


def _on() -> Settings | None:
    found = settings()
    return found if found is not None and _available() else None


def trace_session(session: LiveSession, parent: Any = None) -> Finish | None:
    """Trace ``session``'s debate when tracing is on; call the result when the run ends.

    ``parent`` is what :func:`batch_trace` yields, so a batch's debates share its trace.
    """
    found = _on()
    if found is None:
        return None
    from tui.telemetry.export import tracer
    from tui.telemetry.spans import DebateTrace

    trace = DebateTrace(tracer(found), session, capture=found.capture, parent=parent)
    session.engine.subscribe(trace)
    return trace.end


@contextmanager
def batch_trace(specs: int) -> Iterator[Any]:
    """One trace for a batch: yields the parent for its debates (None when tracing is off)."""
    found = _on()
    if found is None:
        yield None
        return
    from opentelemetry.trace import set_span_in_context

    from tui.telemetry.export import tracer
    from tui.telemetry.spans import OPERATION

    span = tracer(found).start_span(
        "invoke_workflow moot batch", attributes={OPERATION: "invoke_workflow", "moot.specs": specs}
    )
    try:
        yield set_span_in_context(span)
    finally:
        span.end()


def flush() -> None:
    """Send what is batched before the process ends (bounded: a dead collector waits not)."""
    if "tui.telemetry.export" not in sys.modules:
        return
    from tui.telemetry.export import shutdown

    shutdown()


@contextmanager
def bench_trace(about: dict[str, Any], model: str) -> Iterator[BenchTrace | None]:
    """One trace for a ``moot bench`` run (None when tracing is off); ended on the way out."""
    found = _on()
    if found is None:
        yield None
        return
    from tui.telemetry.bench import BenchTrace
    from tui.telemetry.export import tracer

    trace = BenchTrace(tracer(found), about, capture=found.capture, model=model)
    try:
        yield trace
    finally:
        trace.end()
