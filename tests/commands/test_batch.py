"""moot batch: a folder of specs run in one process, bad ones reported and skipped."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.batch_specs import decided, unresolved, write
from tests.helpers import with_script
from tests.signals import sigint_default
from tui.commands.batch import Status, collect, exit_code, run_items
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.providers.scripted import ScriptedProvider


def moot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args], capture_output=True, text=True, timeout=120
    )


def mixed_folder(root: Path) -> Path:
    specs = root / "specs"
    write(specs / "a-decided.toml", decided("First decided"))
    write(specs / "b-unresolved.toml", unresolved("Split one"))
    write(specs / "c-decided.toml", decided("Second decided"))
    (specs / "d-bad.toml").write_text('[debate]\ntitle = "no motion"\n', encoding="utf-8")
    (specs / "e-not-toml.toml").write_text("this is = = not toml", encoding="utf-8")
    (specs / "notes.txt").write_text("not a spec: left out of a folder run", encoding="utf-8")
    return specs


def test_batch_over_a_mixed_folder(tmp_path: Path) -> None:
    specs = mixed_folder(tmp_path)
    out, summary = tmp_path / "out", tmp_path / "summary.json"
    missing = tmp_path / "missing.toml"
    done = moot(
        "batch", str(specs), str(missing), "--concurrency", "2",
        "--sessions-dir", str(out), "--summary", str(summary),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr  # any bad spec wins over unresolved
    assert "Traceback" not in done.stderr + done.stdout
    # Each bad spec is reported with its problems, by key path.
    assert "d-bad.toml: bad" in done.stderr and "debate.motion" in done.stderr
    assert "e-not-toml.toml: bad" in done.stderr
    assert "missing.toml: bad" in done.stderr and "file not found" in done.stderr
    report = json.loads(summary.read_text())
    by_spec = {Path(s["spec"]).name: s for s in report["specs"]}
    assert set(by_spec) == {
        "a-decided.toml", "b-unresolved.toml", "c-decided.toml",
        "d-bad.toml", "e-not-toml.toml", "missing.toml",
    }  # fmt: skip
    assert report["counts"] == {"decided": 2, "unresolved": 1, "bad": 3, "failed": 0}
    assert report["exit_code"] == 2
    assert by_spec["a-decided.toml"]["decision"] == "release"
    assert by_spec["b-unresolved.toml"]["decision"] == "escalate"
    assert by_spec["b-unresolved.toml"]["decision_rule"] == "max_rounds_exhausted"
    assert any("debate.motion" in p for p in by_spec["d-bad.toml"]["problems"])
    assert by_spec["d-bad.toml"]["session"] is None  # nothing ran, no file made
    sessions = sorted(out.glob("*.toml"))
    assert len(sessions) == 3
    for s in report["specs"]:
        if s["session"]:
            assert Path(s["session"]) in sessions
            data = load_session(s["session"])
            assert data.result is not None and data.result["turns"] == s["turns"]
            assert verify_file(s["session"]).ok, s["session"]
    # The table names every spec and session, unwrapped (stdout is a pipe here).
    for name in by_spec:
        assert name in done.stdout
    for path in sessions:
        assert str(path) in done.stdout


def test_batch_exit_codes_without_bad_specs(tmp_path: Path) -> None:
    good = write(tmp_path / "good.toml", decided())
    split = write(tmp_path / "split.toml", unresolved())
    out = tmp_path / "out"
    assert moot("batch", str(good), "--sessions-dir", str(out)).returncode == 0
    assert moot("batch", str(good), str(split), "--sessions-dir", str(out)).returncode == 3


def test_summary_is_never_written_over(tmp_path: Path) -> None:
    good = write(tmp_path / "good.toml", decided())
    summary = tmp_path / "summary.json"
    summary.write_text("keep me", encoding="utf-8")
    done = moot(
        "batch", str(good), "--sessions-dir", str(tmp_path / "out"), "--summary", str(summary)
    )
    assert done.returncode == 2 and "not overwriting" in done.stderr
    assert summary.read_text() == "keep me"
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_concurrency_bounds_the_debates_running_at_once(tmp_path: Path) -> None:
    slow = [with_script(decided(f"D{i}"), "a", turn_delay_ms=30) for i in range(6)]
    specs = [write(tmp_path / f"s{i}.toml", raw) for i, raw in enumerate(slow)]
    items = collect([str(p) for p in specs])
    running = peak = 0

    class Count:
        def started(self, item: object) -> None:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)

        def turn(self, item: object, turn: object) -> None:
            return None

        def finished(self, item: object) -> None:
            nonlocal running
            running -= 1

    provider = ScriptedProvider()
    asyncio.run(
        run_items(
            items,
            concurrency=2,
            directory=tmp_path / "out",
            provider_for=lambda d: provider,
            reporter=Count(),
        )
    )
    assert peak == 2
    assert [i.status for i in items] == [Status.DECIDED] * 6
    assert exit_code(items) == 0


def test_an_interrupted_batch_names_each_unfinished_session(tmp_path: Path) -> None:
    slow = with_script(unresolved(), "a", turn_delay_ms=2000)
    specs = [write(tmp_path / f"s{i}.toml", slow) for i in range(2)]
    out = tmp_path / "out"
    batch = subprocess.Popen(
        [sys.executable, "-m", "tui", "batch", *map(str, specs), "--sessions-dir", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )
    end = time.monotonic() + 60
    while len(list(out.glob("*.toml"))) < 2:  # both debates started
        assert time.monotonic() < end and batch.poll() is None
        time.sleep(0.02)
    batch.send_signal(signal.SIGINT)
    _, err = batch.communicate(timeout=60)
    assert batch.returncode == 130 and "Traceback" not in err
    for session in out.glob("*.toml"):
        assert f"moot resume {session} --headless" in err
        assert verify_file(session).ok  # committed turns only, resumable


def test_preflight_reports_a_spec_whose_server_refuses_and_runs_the_rest(
    tmp_path: Path, refused_base: str
) -> None:
    dead = f"{refused_base}/v1"
    unreachable = decided("Unreachable")
    unreachable["debaters"][0] = {"id": "a", "model": "openai/fake", "api_base": dead}
    bad = write(tmp_path / "unreachable.toml", unreachable)
    good = write(tmp_path / "good.toml", decided())
    summary = tmp_path / "summary.json"
    out = tmp_path / "out"
    done = moot("batch", str(bad), str(good), "--sessions-dir", str(out), "--summary", str(summary))
    assert done.returncode == 2
    by_spec = {Path(s["spec"]).name: s for s in json.loads(summary.read_text())["specs"]}
    assert by_spec["good.toml"]["status"] == "decided"
    assert by_spec["unreachable.toml"]["status"] == "bad"
    assert by_spec["unreachable.toml"]["session"] is None  # refused before a file existed
    assert any(p.startswith("preflight: a:") for p in by_spec["unreachable.toml"]["problems"])
    assert len(list(out.glob("*.toml"))) == 1
