"""Headless output a script can use: unwrapped paths, quiet closed pipes, --json, named mix-ups.

Each test runs the real ``moot`` process on a real pipe, as a script would.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.fake_openai import FakeOpenAI, Reply
from tests.signals import sigint_default, sigint_ignored
from tui.engine.record.session import load_session
from tui.exitcodes import ExitCode

ROOT = Path(__file__).resolve().parents[2]
LONG_ID = "a-rather-long-debater-identifier-0123"

SPEC = f"""
[debate]
title = "Script-friendly output"
motion = "Keep the output scriptable."
max_rounds = 2
consensus_threshold = 2
phases = ["proposal", "consensus"]

[[debaters]]
id = "{LONG_ID}"
model = "scripted"
[debaters.script]
votes = ["release"]
turn_delay_ms = {{delay}}

[[debaters]]
id = "b"
model = "scripted"
[debaters.script]
votes = ["revise"]
turn_delay_ms = {{delay}}
"""


def spec(tmp_path: Path, delay: int = 0) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.format(delay=delay))
    return path


def moot(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def test_paths_and_ids_never_wrap_in_a_narrow_pipe(tmp_path: Path) -> None:
    out = tmp_path / "a-session-file-with-a-name-far-wider-than-twenty-columns.toml"
    done = moot("run", str(spec(tmp_path)), "--headless", "--out", str(out), env={"COLUMNS": "20"})
    assert done.returncode == ExitCode.UNRESOLVED, done.stderr
    lines = done.stdout.splitlines()
    assert f"session: {out}" in lines
    assert f"saved: {out}" in lines
    assert sum(LONG_ID in line for line in lines) >= 4  # every turn names it whole


def test_a_closed_pipe_ends_quietly_with_the_runs_exit_code(tmp_path: Path) -> None:
    out = tmp_path / "piped.toml"
    command = " ".join(
        [shlex.quote(sys.executable), "-m", "tui", "run", shlex.quote(str(spec(tmp_path, 40)))]
        + ["--headless", "--out", shlex.quote(str(out))]
    )
    done = subprocess.run(
        ["bash", "-c", f"{command} | head -3; exit ${{PIPESTATUS[0]}}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert len(done.stdout.splitlines()) == 3
    assert done.returncode == ExitCode.UNRESOLVED, done.stderr
    assert done.stderr == ""  # no traceback, no "internal error", no "Exception ignored"
    result = load_session(out).result  # the run went on to its end, on record
    assert result is not None and result["decision_rule"] == "max_rounds_exhausted"


def test_json_prints_one_object_and_nothing_else_on_stdout(tmp_path: Path) -> None:
    out = tmp_path / "j.toml"
    done = moot("run", str(spec(tmp_path)), "--headless", "--json", "--out", str(out))
    assert done.returncode == ExitCode.UNRESOLVED, done.stderr
    doc = json.loads(done.stdout)
    assert doc["session"] == str(out) and doc["exit_code"] == ExitCode.UNRESOLVED
    assert doc["result"] == load_session(out).result
    again = moot("resume", str(out), "--headless", "--json")
    assert again.returncode == ExitCode.UNRESOLVED, again.stderr
    assert json.loads(again.stdout)["result"]["turns"] == doc["result"]["turns"]


def test_a_session_given_for_a_spec_is_named_with_the_command_to_use(tmp_path: Path) -> None:
    out = tmp_path / "done.toml"
    assert moot("run", str(spec(tmp_path)), "--headless", "--out", str(out)).returncode == 3
    before = out.read_bytes()
    for command in ("run", "validate", "batch"):
        done = moot(command, str(out), *(["--headless"] if command == "run" else []))
        assert done.returncode == ExitCode.BAD_INPUT
        assert "is a session file, not a spec" in done.stderr
        assert f"moot resume {out}" in done.stderr and f"moot replay {out}" in done.stderr
        assert "unknown key" not in done.stderr
    assert out.read_bytes() == before


SESSION_COMMANDS = {
    "replay": [],
    "resume": ["--headless"],
    "export": [],
    "verify": [],
    "decide": ["--vote", "revise", "--rationale", "Roll back first."],
    "fork": ["--at", "1"],
    "watch": [],
}


@pytest.mark.parametrize("command", list(SESSION_COMMANDS))
def test_a_spec_given_for_a_session_is_named_with_the_command_to_use(
    tmp_path: Path, command: str
) -> None:
    path = spec(tmp_path)
    before = path.read_bytes()
    done = moot(command, str(path), *SESSION_COMMANDS[command])
    assert done.returncode == ExitCode.BAD_INPUT, done.stdout + done.stderr
    assert "is a spec, not a session file" in done.stderr
    assert f"moot run {path}" in done.stderr
    assert path.read_bytes() == before


BLOCKED_SPEC = f"""
[debate]
title = "Interrupted mid-turn"
motion = "Keep the output scriptable."
max_rounds = 2
consensus_threshold = 2
phases = ["proposal", "consensus"]
parallel = false

[[debaters]]
id = "{LONG_ID}"
model = "scripted"
[debaters.script]
votes = ["release"]

[[debaters]]
id = "b"
model = "openai/fake-model"
api_base = "{{api_base}}"
api_key_env = "MOOT_TEST_KEY"
"""
KEY = {"MOOT_TEST_KEY": "k-test-headless-0123"}


class HoldsTheFirstCall(FakeOpenAI):
    """Leaves its first chat request unanswered until it stops, and answers the rest.

    Held before any header, not mid-stream: a turn cancelled mid-stream in the openai
    SDK can wait for ever on a stalled server (seen on Ctrl+C), which is not what
    these tests are about.
    """

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        if not self.requests:
            self.requests.append({"held": True})
            assert self._closing is not None
            await self._closing.wait()
            return web.Response(status=503)
        return await super()._chat(request)


@pytest.fixture
def held() -> Iterator[FakeOpenAI]:
    server = HoldsTheFirstCall().start()
    try:
        yield server
    finally:
        server.stop()


def start_blocked_run(
    tmp_path: Path, server: FakeOpenAI, *flags: str, preexec: Callable[[], None] = sigint_default
) -> subprocess.Popen[str]:
    """A headless run whose second turn waits on the model server until the signal: the
    scripted turn is on record, and nothing can end the run before the test signals it.

    Returns once the server holds that turn's request (the run is ready for the signal);
    the server answers every later call, so a resume can finish.
    """
    spec = tmp_path / "spec.toml"
    spec.write_text(BLOCKED_SPEC.format(api_base=server.base_url))
    answer = {"stance": "b: not yet.", "rationale": "b wants a rollback plan.", "vote": "revise"}
    server.default = Reply(json.dumps(answer))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "run", str(spec), "--headless", "--no-preflight", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **KEY},
        preexec_fn=preexec,
    )
    deadline = time.monotonic() + 120
    while not server.calls:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            stdout, stderr = proc.communicate()
            raise AssertionError(f"the run never reached its held turn: {stdout}{stderr}")
        time.sleep(0.02)
    return proc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_names_the_session_and_the_resume_line(
    tmp_path: Path, held: FakeOpenAI, sig: signal.Signals
) -> None:
    out = tmp_path / "interrupted.toml"
    proc = start_blocked_run(tmp_path, held, "--out", str(out))
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, stdout + stderr
    assert "Traceback" not in stderr
    assert str(out) in stderr and f"moot resume {out}" in stderr
    assert [t.speaker for t in load_session(out).turns] == [LONG_ID]  # the hung turn is not
    resumed = moot("resume", str(out), "--headless", env=KEY)
    assert resumed.returncode == ExitCode.UNRESOLVED, resumed.stderr
    assert load_session(out).result is not None


def test_sigterm_stops_a_run_started_with_sigint_ignored(tmp_path: Path, held: FakeOpenAI) -> None:
    """A job a shell puts in the background ignores SIGINT; ``kill`` (SIGTERM) must still
    stop it as Ctrl+C would, saving what finished (it had gone unheard)."""
    out = tmp_path / "background.toml"
    proc = start_blocked_run(tmp_path, held, "--out", str(out), preexec=sigint_ignored)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, stdout + stderr
    assert f"moot resume {out}" in stderr and "Traceback" not in stderr
    assert [t.speaker for t in load_session(out).turns] == [LONG_ID]


def test_json_on_sigterm_prints_the_object_with_status_interrupted(
    tmp_path: Path, held: FakeOpenAI
) -> None:
    out = tmp_path / "interrupted.toml"
    proc = start_blocked_run(tmp_path, held, "--json", "--out", str(out))
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, stdout + stderr
    doc = json.loads(stdout)
    assert doc["status"] == "interrupted" and doc["exit_code"] == ExitCode.INTERRUPTED
    assert doc["session"] == str(out) and doc["result"] is None
