"""The console traces its debate like a headless run when an OTLP endpoint is set."""

from __future__ import annotations

from tests.app.app_support import debate_spec, make_app, session_file, wait_until, write_spec
from tests.telemetry.test_telemetry import Collector, _attrs
from tui.engine.record.session import load_session
from tui.telemetry import export


async def test_a_console_debate_is_one_trace(tmp_path, moot_dirs, monkeypatch):
    collector = Collector()
    collector.thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    try:
        spec = debate_spec(debaters=3, threshold=2, scripts={1: {"votes": ["release"]}})
        app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
        async with app.run_test(size=(160, 45)) as pilot:
            screen = await wait_until(pilot, lambda: app.debate_screen())
            await wait_until(pilot, lambda: screen.decision is not None)
            await pilot.press("q")
        export.shutdown()  # what launch() does after the app: the last batch is sent
    finally:
        collector.server.shutdown()
        collector.server.server_close()
    data = load_session(session_file(moot_dirs))
    spans = collector.spans()
    assert len({s.trace_id for s in spans}) == 1
    kinds = [_attrs(s).get("gen_ai.operation.name") for s in spans]
    assert kinds.count("invoke_workflow") == 1
    assert kinds.count("invoke_agent") == len(data.turns)
    root = next(s for s in spans if not s.parent_span_id)
    assert _attrs(root)["moot.decision"] == "release"
