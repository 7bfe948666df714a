"""``moot bench`` with tracing on: one trace, a span per item arm run, the figures on them.

The tracer provider is the process's own (``tui.telemetry.export``) batching into the
SDK's in-memory exporter, so what the spans say is read back exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tui.cli import main
from tui.exitcodes import ExitCode
from tui.telemetry import export


def _into_memory() -> InMemorySpanExporter:
    """The process's provider made anew, exporting into memory (the command shuts it down)."""
    memory = InMemorySpanExporter()
    export.shutdown()
    export.provider(exporter=memory)
    return memory


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """Tracing on (an endpoint set: nothing listens there, and nothing is sent to it)."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    yield _into_memory()
    export.shutdown()


def _bench(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = main(["bench", "--model", "oracle:0.6", *args, "--json"])
    out = capsys.readouterr().out
    assert code == ExitCode.DECIDED, out
    result: dict[str, Any] = json.loads(out)
    return result


def _attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_a_bench_is_one_trace_with_a_span_per_run_and_its_figures(
    spans: InMemorySpanExporter, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    n = 6
    result = _bench(
        capsys, "--items", str(n), "--arms", "vote,debate", "--out", str(tmp_path / "b")
    )
    finished = list(spans.get_finished_spans())
    assert len({s.context.trace_id for s in finished}) == 1
    (root,) = [s for s in finished if s.parent is None]
    a = _attrs(root)
    assert root.name == "invoke_workflow moot bench"
    assert a["gen_ai.operation.name"] == "invoke_workflow"
    assert (a["moot.bench.task"], a["moot.bench.model"], a["moot.bench.items"]) == (
        "arithmetic",
        "oracle:0.6",
        n,
    )
    assert a["moot.bench.new_calls"] == result["new_calls"]
    for arm, figures in result["arms"].items():
        for key, value in figures.items():
            got = a[f"moot.bench.{arm}.{key}"]
            assert (list(got) if key == "ci95" else got) == value, (arm, key)

    runs = [s for s in finished if s.parent is not None]
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in runs)
    assert sorted((_attrs(s)["moot.bench.arm"], _attrs(s)["moot.bench.item"]) for s in runs) == [
        (arm, i) for arm in ("debate", "vote") for i in range(n)
    ]
    records = {
        (r["arm"], r["item"]): r
        for r in map(json.loads, (tmp_path / "b" / "items.jsonl").read_text().splitlines())
    }
    for span in runs:
        s = _attrs(span)
        record = records[(s["moot.bench.arm"], s["moot.bench.item"])]
        assert span.name == f"invoke_workflow moot bench {record['arm']}"
        assert s["moot.bench.correct"] is record["correct"]
        assert (s["moot.bench.calls"], s["moot.bench.tokens"]) == (
            record["calls"],
            record["tokens"],
        )
        if record["arm"] == "debate":
            assert s["moot.bench.agreement"] == record["agreement"]
            assert s["moot.bench.wrong_to_right"] == record["wrong_to_right"]
            assert s["gen_ai.conversation.id"] == record["session"].removesuffix(".toml")
        assert record["question"] not in json.dumps(s)  # the motion stays out by default


def test_a_rerun_that_runs_nothing_still_reports_its_figures(
    spans: InMemorySpanExporter, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    args = ("--items", "3", "--arms", "single", "--out", str(tmp_path / "b"))
    _bench(capsys, *args)
    memory = _into_memory()
    again = _bench(capsys, *args)
    (root,) = list(memory.get_finished_spans())
    assert _attrs(root)["moot.bench.single.accuracy"] == again["arms"]["single"]["accuracy"]
    assert _attrs(root)["moot.bench.new_calls"] == 0
