"""The tracer provider: spans batched and sent over OTLP/HTTP, failures said once.

The endpoint, headers and timeout come from ``tui.telemetry.settings``: what it
leaves open (None) the exporter reads from the standard ``OTEL_EXPORTER_OTLP_*``
variables itself. Export runs on the batch processor's
thread, so the debate never waits for it; a collector that cannot be reached is
one warning on stderr, then silence, and the exporter's own retry logging is
kept off the console.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Tracer

from tui import __version__
from tui.telemetry.settings import TIMEOUT_ENVS, Settings

SHUTDOWN_WAIT_S = 5.0  # at exit, at most this long for the last batch
# Unless OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT says otherwise: short enough that a dead
# collector is known (and said) before the process ends, its retries included.
DEFAULT_TIMEOUT_S = 3.0
SCOPE = "moot"


class WarnOnce(SpanExporter):
    """Wraps an exporter so a failing collector is one warning, not one per batch."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.warned = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception as err:  # the exporter's own failure is never the debate's
            result = SpanExportResult.FAILURE
            reason = f"{type(err).__name__}: {err}"
        else:
            reason = "the collector did not accept them"
        if result is SpanExportResult.FAILURE and not self.warned:
            self.warned = True
            print(
                f"moot: warning: traces could not be sent ({reason}); "
                "the debate goes on, and further failures are not reported",
                file=sys.stderr,
            )
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


_provider: TracerProvider | None = None
_lock = threading.Lock()


def provider(
    settings: Settings | None = None, exporter: SpanExporter | None = None
) -> TracerProvider:
    """This process's tracer provider (made once), batching into ``exporter`` or OTLP/HTTP.

    The first call's ``settings`` hold for the process: one provider, one collector.
    """
    global _provider
    with _lock:
        if _provider is None:
            logging.getLogger("opentelemetry.exporter").setLevel(logging.CRITICAL)
            _provider = TracerProvider(
                resource=Resource.create({SERVICE_NAME: "moot", "service.version": __version__})
            )
            if exporter is None:
                exporter = _otlp(settings or Settings("environment"))
            _provider.add_span_processor(BatchSpanProcessor(WarnOnce(exporter)))
        return _provider


def _otlp(settings: Settings) -> OTLPSpanExporter:
    timeout = settings.timeout
    if timeout is None and not any(map(os.environ.get, TIMEOUT_ENVS)):
        timeout = DEFAULT_TIMEOUT_S
    return OTLPSpanExporter(endpoint=settings.endpoint, headers=settings.headers, timeout=timeout)


def tracer(settings: Settings | None = None) -> Tracer:
    return provider(settings).get_tracer(SCOPE, __version__)


def shutdown() -> None:
    """Flush and stop, waiting at most SHUTDOWN_WAIT_S (the exporter's retries run on)."""
    global _provider
    with _lock:
        current, _provider = _provider, None
    if current is None:
        return
    worker = threading.Thread(target=current.shutdown, daemon=True)
    worker.start()
    worker.join(SHUTDOWN_WAIT_S)
