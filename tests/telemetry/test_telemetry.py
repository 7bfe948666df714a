"""OpenTelemetry GenAI traces: one trace per debate, on only when an OTLP endpoint is set.

The span tree is checked with the SDK's in-memory exporter; what reaches a
collector is checked with a real OTLP/HTTP receiver on loopback that decodes the
protobuf; a dead endpoint is one warning and an unharmed run.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from tests.batch_specs import unresolved, write
from tests.engine.test_open_votes import open_raw
from tests.helpers import SCRIPTED, debate_raw, with_script
from tui.engine.basics.vocab import DecisionChannel
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.specs.spec import validate_spec
from tui.providers.scripted import ScriptedProvider
from tui.telemetry.spans import DebateTrace, provider_name

SECRET = "hunter2-correct-horse-battery"
MOTION = "Ship the billing service on Friday."


def _run(
    tmp_path: Path, raw: dict[str, Any], *, capture: bool = False, decide: bool = False
) -> tuple[list[ReadableSpan], LiveSession]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spec = validate_spec(raw)
    scripted = ScriptedProvider()
    session = LiveSession.start(spec, raw, lambda d: scripted, directory=tmp_path / "sessions")
    trace = DebateTrace(provider.get_tracer("test"), session, capture=capture)
    session.engine.subscribe(trace)

    async def main() -> None:
        await session.engine.run()
        if decide:
            session.engine.decide("revise", "Roll back first.", DecisionChannel.MCP)

    try:
        asyncio.run(main())
    finally:
        trace.end()
        session.close()
    return list(exporter.get_finished_spans()), session


def _of(spans: list[ReadableSpan], operation: str) -> list[ReadableSpan]:
    return [s for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == operation]


def _turn_of(span: ReadableSpan) -> int:
    """The turn an agent span is about, the key to put them in speaking order."""
    turn = (span.attributes or {}).get("moot.turn")
    assert isinstance(turn, int), span.name
    return turn


def _parent_id(span: ReadableSpan) -> int:
    """The span this one is inside (a model call is inside its turn's agent span)."""
    assert span.parent is not None, span.name
    return span.parent.span_id


def _all_text(spans: list[ReadableSpan]) -> str:
    parts = []
    for s in spans:
        parts.append(s.name)
        parts += [str(v) for v in (s.attributes or {}).values()]
        for e in s.events:
            parts += [str(v) for v in (e.attributes or {}).values()]
    return "\n".join(parts)


def test_one_root_one_agent_span_per_turn_and_a_chat_span_per_call(tmp_path: Path) -> None:
    raw = unresolved()
    raw["debate"]["motion"] = MOTION
    spans, session = _run(tmp_path, raw, decide=True)
    data = load_session(session.path)
    (root,) = _of(spans, "invoke_workflow")
    assert root.parent is None and root.name == "invoke_workflow moot"
    assert root.attributes is not None
    assert root.attributes["gen_ai.conversation.id"] == _header_hash(session.path)
    assert root.attributes["moot.decided_by"] == "operator"
    assert root.attributes["moot.decided_via"] == "mcp"
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}

    agents = sorted(_of(spans, "invoke_agent"), key=_turn_of)
    assert len(agents) == len(data.turns)
    hashes = [r.stored for r in data.records if r.name.startswith("turn ")]
    for span, turn, stored in zip(agents, data.turns, hashes, strict=True):
        a = span.attributes
        assert a is not None and span.parent is not None
        assert span.parent.span_id == root.context.span_id
        assert span.name == f"invoke_agent {turn.speaker}"
        assert a["gen_ai.agent.name"] == turn.speaker
        assert a["gen_ai.conversation.id"] == _header_hash(session.path)
        assert (a["moot.round"], a["moot.phase"], a["moot.kind"]) == (
            turn.round,
            turn.phase,
            str(turn.kind),
        )
        assert a["moot.valid"] is (not turn.invalid)
        assert a.get("moot.vote") == turn.vote
        assert a["moot.record_hash"] == stored

    chats = _of(spans, "chat")
    assert len(chats) == sum(t.attempts for t in data.turns)
    by_agent = {s.context.span_id: s for s in agents}
    for chat, turn in zip(
        sorted(chats, key=lambda c: _turn_of(by_agent[_parent_id(c)])),
        data.turns,
        strict=True,
    ):
        a = chat.attributes
        assert a is not None
        assert a["gen_ai.request.model"] == "scripted"
        assert a["gen_ai.provider.name"] == "moot.scripted"
        assert a["gen_ai.usage.input_tokens"] == turn.tokens_in
        assert a["gen_ai.usage.output_tokens"] == turn.tokens_out

    events = {e.name: e.attributes for e in root.events}
    assert events["moot.operator_action"] == {
        "moot.action": "decide",
        "moot.after_turn": len(data.turns),
        "moot.vote": "revise",
        "moot.via": "mcp",
    }
    assert MOTION not in _all_text(spans) and "Roll back first." not in _all_text(spans)


def test_content_only_when_asked_and_redacted_even_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_TEST_TOKEN", SECRET)
    raw = debate_raw(
        {"a": ["release"], "b": ["release"]}, motion=f"{MOTION} The token is {SECRET}."
    )
    spans, _ = _run(tmp_path, raw, capture=True)
    (root,) = _of(spans, "invoke_workflow")
    assert root.attributes is not None
    said = json.loads(str(root.attributes["gen_ai.input.messages"]))
    assert MOTION in said[0]["parts"][0]["content"]
    assert "[redacted]" in said[0]["parts"][0]["content"]
    assert SECRET not in _all_text(spans)
    outputs = [
        (s.attributes or {}).get("gen_ai.output.messages") for s in _of(spans, "invoke_agent")
    ]
    assert all(outputs) and json.loads(str(outputs[0]))[0]["role"] == "assistant"


def test_a_failed_call_is_an_error_span_and_the_run_still_ends(tmp_path: Path) -> None:
    spans, session = _run(tmp_path, with_script(unresolved(), "b", fail=[1]))
    failed = [s for s in _of(spans, "chat") if s.status.status_code is StatusCode.ERROR]
    assert len(failed) == 1
    assert failed[0].attributes is not None and failed[0].attributes["error.type"] == "server"
    (root,) = _of(spans, "invoke_workflow")
    assert root.attributes is not None
    assert root.attributes["moot.decision_rule"] == "provider_failure"
    assert all(s.end_time is not None for s in spans)


def test_provider_names_from_model_strings() -> None:
    assert provider_name("openai/gpt-4o") == "openai"
    assert provider_name("anthropic/claude-sonnet") == "anthropic"
    assert provider_name("gpt-4o") == "litellm"
    assert provider_name("local") == "moot.local"


# ------------------------------------------------------ the moot command, end to end
class Collector:
    """An OTLP/HTTP receiver on loopback: it decodes each request's protobuf."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                collector.requests.append(request)
                collector.paths.append(self.path)
                collector.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list[Any]:
        return [
            span
            for request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    c.thread.start()
    yield c
    c.server.shutdown()
    c.server.server_close()


def _moot(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    import os

    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**clean, **env},
    )


def _attrs(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        value = kv.value
        out[kv.key] = getattr(value, value.WhichOneof("value"))
    return out


def test_a_scripted_debate_sends_one_trace_to_an_otlp_endpoint(
    tmp_path: Path, collector: Collector
) -> None:
    raw = unresolved()
    raw["debate"]["motion"] = MOTION
    spec = write(tmp_path / "split.toml", raw)
    out = tmp_path / "split-session.toml"
    done = _moot(
        tmp_path,
        {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint},
        "run",
        str(spec),
        "--headless",
        "--out",
        str(out),
    )
    assert done.returncode == 3, done.stderr
    assert "warning" not in done.stderr
    assert set(collector.paths) == {"/v1/traces"}
    spans = collector.spans()
    assert len({s.trace_id for s in spans}) == 1
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == 1 and _attrs(roots[0])["gen_ai.operation.name"] == "invoke_workflow"
    turns = load_session(out).turns
    agents = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "invoke_agent"]
    assert len(agents) == len(turns)
    assert sorted(_attrs(s)["gen_ai.agent.name"] for s in agents) == sorted(
        t.speaker for t in turns
    )
    assert {_attrs(s)["gen_ai.conversation.id"] for s in agents} == {_header_hash(out)}
    assert all(s.parent_span_id == roots[0].span_id for s in agents)
    raw_bytes = b"".join(r.SerializeToString() for r in collector.requests)
    assert MOTION.encode() not in raw_bytes


def test_tracing_off_imports_no_opentelemetry(tmp_path: Path) -> None:
    spec = write(tmp_path / "split.toml", unresolved())
    probe = (
        "import sys; from tui.cli import main; "
        f"code = main(['run', {str(spec)!r}, '--headless']); "
        "print('OTEL' if any(m.startswith('opentelemetry') for m in sys.modules) else 'NONE', "
        "file=sys.stderr); raise SystemExit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")},
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().endswith("NONE")


def test_a_dead_endpoint_is_one_warning_and_the_run_is_unharmed(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    raws = {f"s{i}": unresolved(f"Split {i}") for i in range(3)}
    specs = [str(write(tmp_path / f"{name}.toml", raw)) for name, raw in raws.items()]
    done = _moot(
        tmp_path,
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
            "OTEL_BSP_SCHEDULE_DELAY": "10",
        },
        "batch",
        *specs,
        "--no-preflight",
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("traces could not be sent") == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert len(list((tmp_path / "sessions").glob("*.toml"))) == 3


def test_a_batch_is_one_trace_with_a_root_span_per_debate_under_it(
    tmp_path: Path, collector: Collector
) -> None:
    specs = [str(write(tmp_path / f"s{i}.toml", unresolved(f"Split {i}"))) for i in range(2)]
    done = _moot(
        tmp_path,
        {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint},
        "batch",
        *specs,
        "--no-preflight",
    )
    assert done.returncode == 3, done.stderr
    spans = collector.spans()
    assert len({s.trace_id for s in spans}) == 1
    (batch,) = [s for s in spans if not s.parent_span_id]
    assert batch.name == "invoke_workflow moot batch" and _attrs(batch)["moot.specs"] == 2
    debates = [s for s in spans if s.name == "invoke_workflow moot"]
    assert len(debates) == 2 and all(d.parent_span_id == batch.span_id for d in debates)
    sessions = {_header_hash(p) for p in (tmp_path / "sessions").glob("*.toml")}
    assert {_attrs(d)["gen_ai.conversation.id"] for d in debates} == sessions


WORD = "quokka"  # in the title, the motion, every turn and every vote below, nowhere else


def _words_everywhere(raw: dict[str, Any]) -> dict[str, Any]:
    raw["debate"].update(title=f"The {WORD.title()} rollout", motion=f"Should the {WORD} ship?")
    for d in raw["debaters"]:
        d["script"].update(stances=[f"The {WORD} is ready."], rationales=[f"{WORD} tests pass."])
    return raw


def _header_hash(path: Path) -> str:
    stored = load_session(path).records[0].stored
    assert stored is not None  # a signed file's header is chained
    return stored


def test_with_capture_off_no_span_carries_a_word_of_the_title_motion_or_turns(
    tmp_path: Path, collector: Collector
) -> None:
    raw = _words_everywhere(unresolved())
    raw["debaters"][0]["script"]["votes"] = [WORD]  # an open vote: the debater's own answer
    raw["debate"].update(votes="open", normalise="text")
    spec = write(tmp_path / "spec.toml", raw)
    done = _moot(
        tmp_path,
        {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint},
        "run",
        str(spec),
        "--headless",
    )
    assert done.returncode in (0, 3), done.stderr
    (path,) = (tmp_path / "sessions").glob("*.toml")
    assert WORD in path.stem  # the session's name holds the title's words
    spans = collector.spans()
    assert spans
    for span in spans:
        attrs = {**_attrs(span), **{k: v for e in span.events for k, v in _attrs(e).items()}}
        seen = [span.name, *(f"{k}={v}" for k, v in attrs.items())]
        assert not [text for text in seen if WORD in str(text).lower()], seen
        assert attrs.get("gen_ai.conversation.id", _header_hash(path)) == _header_hash(path)


def test_a_resumed_session_is_traced_under_the_same_conversation_id(tmp_path: Path) -> None:
    raw = _words_everywhere(unresolved())
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ids = []
    session = LiveSession.start(
        validate_spec(raw), raw, lambda d: SCRIPTED, out=tmp_path / "s.toml"
    )
    for _ in range(2):  # started, then resumed
        trace = DebateTrace(provider.get_tracer("test"), session, capture=False)
        trace.end()
        session.close()
        (root,) = exporter.get_finished_spans()[-1:]
        ids.append((root.attributes or {})["gen_ai.conversation.id"])
        session = LiveSession.resume(tmp_path / "s.toml", lambda d: SCRIPTED)
    session.close()
    assert ids[0] == ids[1] == _header_hash(tmp_path / "s.toml")


def test_open_votes_reach_a_span_only_with_capture(tmp_path: Path) -> None:
    raw = open_raw({"a": [f"A {WORD}"], "b": [f"A {WORD}"]})
    raw["debate"]["normalise"] = "text"
    off, _ = _run(tmp_path / "off", raw)
    on, _ = _run(tmp_path / "on", raw, capture=True)
    assert WORD not in _all_text(off)
    (root,) = _of(on, "invoke_workflow")
    assert (root.attributes or {})["moot.decision"] == f"a {WORD}"
    assert {(s.attributes or {}).get("moot.vote") for s in _of(on, "invoke_agent")} == {f"a {WORD}"}
