"""Lookups in traces: an ``execute_tool`` span per lookup under its turn's span.

Each says the tool, the call, ok or not, the result's size and how long it took,
as the session file records them; never the file's text, the tool's words, the
arguments (unless content capture is on) nor a key.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from tests.engine.test_lookups import DESIGN, challenge_raw, reviewer_turn
from tests.helpers import SCRIPTED
from tui.engine import validate_spec
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.telemetry.spans import DebateTrace
from tui.tools.toolbox import RunTools

SECRET = "sk-live-4f3e2d1c0b9a8877"
LOOKUPS = [
    {"tool": "files", "call": "read", "args": {"path": "design.md"}},
    {"tool": "files", "call": "read", "args": {"path": "vault-plans.md"}},  # no such file
    {"tool": "files", "call": "grep", "args": {"pattern": "event id", "path": "."}},
]


def _traced(folder: Path, *, capture: bool = False) -> tuple[list[ReadableSpan], Path]:
    raw = challenge_raw(reviewer_turn("deduplicates on the event id for 24 hours", LOOKUPS))
    spec = validate_spec(raw)
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tools = RunTools(spec, folder)
    out = folder / "session.toml"
    session = LiveSession.start(spec, raw, lambda d: SCRIPTED, out=out, tools=tools)
    trace = DebateTrace(provider.get_tracer("test"), session, capture=capture)
    session.engine.subscribe(trace)

    async def go() -> None:
        try:
            await session.engine.run()
        finally:
            await tools.aclose()

    try:
        asyncio.run(go())
    finally:
        trace.end()
        session.close()
    return list(memory.get_finished_spans()), out


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MOOT_TEST_TOKEN", SECRET)  # a key the redactor knows
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text(DESIGN + f"Deploy token: {SECRET}\n")
    return tmp_path


def _text(spans: list[ReadableSpan]) -> str:
    parts: list[str] = []
    for s in spans:
        parts += [s.name, *(str(v) for v in (s.attributes or {}).values())]
        parts += [str(v) for e in s.events for v in (e.attributes or {}).values()]
        parts.append(s.status.description or "")
    return "\n".join(parts)


def test_each_lookup_is_a_tool_span_under_its_turn_with_what_the_record_says(
    folder: Path,
) -> None:
    spans, out = _traced(folder)
    (turn,) = [t for t in load_session(out).turns if t.lookups]
    assert turn.lookups is not None
    records = list(turn.lookups)
    tools = [
        s for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == "execute_tool"
    ]
    assert len(tools) == len(records) == 3
    (agent,) = [
        s
        for s in spans
        if (s.attributes or {}).get("gen_ai.operation.name") == "invoke_agent"
        and (s.attributes or {}).get("moot.turn") == turn.index
    ]
    by_id = {str((s.attributes or {})["gen_ai.tool.call.id"]): s for s in tools}
    for record in records:
        span = by_id[record["id"]]
        a = dict(span.attributes or {})
        assert span.parent is not None and span.parent.span_id == agent.context.span_id
        assert span.name == f"execute_tool {record['tool']}"
        assert a["gen_ai.tool.name"] == record["tool"]
        assert a["moot.tool.call"] == record["call"]
        assert a["moot.lookup.ok"] is record["ok"]
        assert a["moot.lookup.bytes"] == record["bytes"]
        assert a["moot.lookup.duration_ms"] == record["ms"]
        assert span.end_time is not None and span.start_time is not None
        assert span.end_time - span.start_time == round(record["ms"] * 1_000_000)
        assert span.status.status_code is (StatusCode.UNSET if record["ok"] else StatusCode.ERROR)
    assert [r["ok"] for r in records] == [True, False, True]
    assert by_id["L2"].attributes is not None and by_id["L2"].attributes["error.type"] == "failed"
    said = _text(spans)
    for never in ("deduplicates", "vault-plans", "event id", SECRET, records[1]["reason"]):
        assert never not in said, never


def test_with_capture_the_args_and_reasons_go_too_redacted(folder: Path) -> None:
    spans, _ = _traced(folder, capture=True)
    tools = [
        s for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == "execute_tool"
    ]
    said = _text(tools)
    assert "vault-plans.md" in said  # the argument, asked for
    assert "deduplicates" not in said  # the result never (the turn's own quote may go)
    assert "publishes at least once" not in _text(spans) and SECRET not in _text(spans)


def test_a_refused_lookup_names_no_tool_or_call_of_the_models_own_without_capture(
    folder: Path,
) -> None:
    asked = {"tool": "quokka-vault", "call": "quokka-open", "args": {}}  # neither in the spec
    raw = challenge_raw(reviewer_turn("deduplicates on the event id for 24 hours", [asked]))
    spec = validate_spec(raw)
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tools = RunTools(spec, folder)
    session = LiveSession.start(spec, raw, lambda d: SCRIPTED, out=folder / "s.toml", tools=tools)
    session.engine.subscribe(DebateTrace(provider.get_tracer("test"), session))

    async def go() -> None:
        try:
            await session.engine.run()
        finally:
            await tools.aclose()

    try:
        asyncio.run(go())
    finally:
        session.close()
    (record,) = [r for t in load_session(folder / "s.toml").turns for r in t.lookups or []]
    assert record["tool"] == "quokka-vault" and not record["ok"]  # refused, on record
    (span,) = [s for s in memory.get_finished_spans() if s.name.startswith("execute_tool")]
    assert "quokka" not in _text([span])
    assert (span.attributes or {})["gen_ai.tool.name"] == "(not in the spec)"
