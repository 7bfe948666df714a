"""``[telemetry]`` in moot's config file: the same tracing as the OTEL_* environment.

The file is the person's own statement that traces may go to its endpoint; the
environment (the command line) wins key by key, and the file's headers never go to
an endpoint the environment chose. Mistakes are named by key path, values unshown.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.batch_specs import unresolved, write
from tests.telemetry.test_telemetry import MOTION, Collector, _attrs, _moot
from tui.config import save_config
from tui.engine.record.session import load_session
from tui.telemetry.settings import Settings, from_file, resolve

KEY = "sk-test-9f8e7d6c5b4a"


def _config(tmp_path: Path, table: dict[str, Any], **more: Any) -> Path:
    folder = Path(os.environ["MOOT_CONFIG_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.toml"
    path.write_text(tomli_w.dumps({**more, "telemetry": table}), "utf-8")
    return path


def _serving() -> Iterator[Collector]:
    c = Collector()
    c.thread.start()
    yield c
    c.server.shutdown()
    c.server.server_close()


collector = pytest.fixture(_serving, name="collector")
second = pytest.fixture(_serving, name="second")


def _run(
    tmp_path: Path, env: dict[str, str] | None = None, name: str = "split"
) -> tuple[Any, Path]:
    raw = unresolved()
    raw["debate"]["motion"] = MOTION
    spec = write(tmp_path / f"{name}.toml", raw)
    out = tmp_path / f"{name}-session.toml"
    done = _moot(tmp_path, env or {}, "run", str(spec), "--headless", "--out", str(out))
    return done, out


# ------------------------------------------------------------ end to end, one process
def test_the_config_file_alone_sends_the_trace_with_its_headers(
    tmp_path: Path, collector: Collector
) -> None:
    _config(
        tmp_path,
        {"endpoint": collector.endpoint, "headers": {"x-honeycomb-team": KEY}, "timeout": 5},
        theme="moot-light",
    )
    done, out = _run(tmp_path)
    assert done.returncode == 3, done.stderr
    assert "warning" not in done.stderr
    assert set(collector.paths) == {"/v1/traces"}
    assert all(h.get("x-honeycomb-team") == KEY for h in collector.headers)
    spans = collector.spans()
    agents = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "invoke_agent"]
    assert len(agents) == len(load_session(out).turns)
    assert len({s.trace_id for s in spans}) == 1
    raw_bytes = b"".join(r.SerializeToString() for r in collector.requests)
    assert MOTION.encode() not in raw_bytes  # capture is off unless the file says so
    assert KEY not in done.stderr + done.stdout


def test_the_command_line_endpoint_wins_and_never_gets_the_files_headers(
    tmp_path: Path, collector: Collector, second: Collector
) -> None:
    _config(tmp_path, {"endpoint": collector.endpoint, "headers": {"authorization": KEY}})
    done, _ = _run(tmp_path, {"OTEL_EXPORTER_OTLP_ENDPOINT": second.endpoint})
    assert done.returncode == 3, done.stderr
    assert collector.requests == [] and second.requests
    assert all("authorization" not in h for h in second.headers)


def test_capture_from_the_file_and_the_environment_overrides_it(
    tmp_path: Path, collector: Collector, second: Collector
) -> None:
    _config(tmp_path, {"endpoint": collector.endpoint, "capture_message_content": True})
    done, _ = _run(tmp_path)
    assert done.returncode == 3, done.stderr
    assert MOTION.encode() in b"".join(r.SerializeToString() for r in collector.requests)

    _config(tmp_path, {"endpoint": second.endpoint, "capture_message_content": True})
    env = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"}
    done, _ = _run(tmp_path, env, name="again")
    assert done.returncode == 3, done.stderr
    assert second.requests
    assert MOTION.encode() not in b"".join(r.SerializeToString() for r in second.requests)


def test_a_bad_table_is_one_warning_by_key_path_and_the_debate_runs(
    tmp_path: Path, collector: Collector
) -> None:
    _config(
        tmp_path,
        {"endpoint": collector.endpoint, "timeout": "3", "headers": {"authorization": 7}},
    )
    done, out = _run(tmp_path)
    assert done.returncode == 3, done.stderr
    assert load_session(out).turns
    assert done.stderr.count("warning") == 1, done.stderr
    assert "telemetry.timeout: must be a number of seconds" in done.stderr
    assert "telemetry.headers.authorization: must be a string" in done.stderr
    assert collector.requests == []  # a table with a mistake sends nothing


def test_a_broken_config_file_is_named_and_the_debate_runs(tmp_path: Path) -> None:
    folder = Path(os.environ["MOOT_CONFIG_DIR"])
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text('[telemetry]\nendpoint = "http://x\n', "utf-8")
    done, out = _run(tmp_path)
    assert done.returncode == 3, done.stderr
    assert "config.toml" in done.stderr and "no [telemetry] settings" in done.stderr
    assert load_session(out).turns


# ------------------------------------------------------------------ resolution rules
def test_every_key_resolves_like_its_environment_variable() -> None:
    table = {
        "endpoint": "https://otel.example.com/",
        "headers": {"x-api-key": KEY},
        "timeout": 2,
        "capture_message_content": True,
    }
    found, problems = from_file(table, "cfg")
    assert problems == []
    assert found == Settings(
        "cfg", "https://otel.example.com/v1/traces", {"x-api-key": KEY}, 2.0, True
    )
    traces, _ = from_file({"traces_endpoint": "http://h:4318/custom"}, "cfg")
    assert traces is not None and traces.endpoint == "http://h:4318/custom"
    assert from_file({**table, "enabled": False}, "cfg") == (None, [])


def test_the_environment_wins_key_by_key() -> None:
    config = {"telemetry": {"endpoint": "http://file:4318", "headers": {"a": "b"}, "timeout": 9}}
    assert resolve({}, {}, "cfg") == (None, [])
    assert resolve({"OTEL_SDK_DISABLED": "true"}, config, "cfg") == (None, [])
    env_only, _ = resolve({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318"}, config, "cfg")
    assert env_only == Settings("environment", None, None, 9.0, False)
    headed, _ = resolve(
        {"OTEL_EXPORTER_OTLP_HEADERS": "a=c", "OTEL_EXPORTER_OTLP_TIMEOUT": "1"}, config, "cfg"
    )
    assert headed == Settings("cfg", "http://file:4318/v1/traces", None, None, False)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("on", "telemetry: must be a table ([telemetry])"),
        ({}, "telemetry.endpoint: missing"),
        ({"endpoint": 4318}, "telemetry.endpoint: must be a string"),
        ({"endpoint": "localhost:4318"}, "telemetry.endpoint: must be an http:// or https://"),
        ({"endpoint": "http://h", "timeout": 0}, "telemetry.timeout: must be a number"),
        ({"endpoint": "http://h", "timeout": True}, "telemetry.timeout: must be a number"),
        ({"endpoint": "http://h", "enabled": "yes"}, "telemetry.enabled: must be true or false"),
        (
            {"endpoint": "http://h", "capture_message_content": 1},
            "telemetry.capture_message_content: must be true or false",
        ),
        ({"endpoint": "http://h", "headers": "a=b"}, "telemetry.headers: must be a table"),
        ({"endpoint": "http://h", "headers": {"bad name": "x"}}, "telemetry.headers: a header"),
        ({"endpoint": "http://h", "headers": {"k": "a\nb"}}, "telemetry.headers.k: must be one"),
        ({"endpoint": "http://h", "endpiont": "x"}, "telemetry.endpiont: unknown key"),
    ],
)
def test_each_mistake_is_named_by_its_key_path(table: Any, message: str) -> None:
    found, problems = from_file(table, "cfg")
    assert found is None
    assert any(p.startswith(message) for p in problems), problems


def test_a_url_with_a_password_is_never_echoed() -> None:
    _, problems = from_file({"endpoint": f"ftp://user:{KEY}@host"}, "cfg")
    assert problems and KEY not in " ".join(problems)


def test_saving_the_theme_keeps_the_telemetry_table(tmp_path: Path) -> None:
    path = _config(tmp_path, {"endpoint": "http://127.0.0.1:4318"})
    save_config({"theme": "moot-light"})
    assert 'endpoint = "http://127.0.0.1:4318"' in path.read_text("utf-8")


def test_the_console_names_a_bad_table_before_it_takes_the_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tui.app.launch
    from tui.cli import main

    shown: list[str] = []

    def launch(**_: Any) -> int:  # the console itself: what was on stderr before it
        shown.append(capsys.readouterr().err)
        return 0

    monkeypatch.setattr(tui.app.launch, "launch", launch)
    _config(tmp_path, {"endpoint": "http://127.0.0.1:4318", "capture_message_content": "yes"})
    assert main([]) == 0
    assert shown and "telemetry.capture_message_content: must be true or false" in shown[0]


# ------------------------------------------------------- off means never imported
PROBE = """
import sys
from tui.cli import main
codes = [
    main(["run", {spec!r}, "--headless"]),
    main(["batch", {spec!r}, "--no-preflight"]),
    main(["bench", "--model", "oracle:0.6", "--items", "2", "--json"]),
]
loaded = any(m == "opentelemetry" or m.startswith("opentelemetry.") for m in sys.modules)
print("OTEL" if loaded else "NONE", [int(c) for c in codes], file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("table", "env", "imported"),
    [
        (None, {}, False),  # no config file
        ({"endpoint": "http://127.0.0.1:9", "enabled": False}, {}, False),
        ({"endpoint": "http://127.0.0.1:9"}, {"OTEL_SDK_DISABLED": "true"}, False),
        ({"endpoint": "http://127.0.0.1:9", "timeout": 1}, {}, True),  # the probe can tell
    ],
    ids=["no-config", "enabled-false", "sdk-disabled", "on"],
)
def test_run_batch_and_bench_import_no_opentelemetry_unless_tracing_is_on(
    tmp_path: Path, table: dict[str, Any] | None, env: dict[str, str], imported: bool
) -> None:
    if table is not None:
        _config(tmp_path, table, theme="moot-light")
    spec = write(tmp_path / "split.toml", unresolved())
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(spec=str(spec))],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**clean, **env},
    )
    assert done.returncode == 0, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == f"{'OTEL' if imported else 'NONE'} [3, 3, 0]", done.stderr
