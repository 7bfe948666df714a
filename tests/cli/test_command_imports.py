"""Each command imports only what it uses: a scripted run never pays for a model client.

A scripted ``resume --headless``, ``verify``, ``export --format json``, ``validate`` and
the console's first paint of ``moot run SPEC`` are run as the user runs them, in a
process of their own, and the heavy packages in ``sys.modules`` are read from inside
it: LiteLLM, the openai SDK, OpenTelemetry and the MCP SDK must not be among them.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import debate_raw

HEAVY = ("litellm", "openai", "opentelemetry", "mcp")
COMMIT = "# moot:commit\n"

# Runs ``moot ARGS`` as ``python -m tui`` does and writes which HEAVY packages were
# imported to the file named by MOOT_PROBE_OUT: at exit, or on SIGUSR1 for the console.
PROBE = f"""
import atexit, json, os, runpy, signal, sys

def dump(*_):
    loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)
    with open(os.environ["MOOT_PROBE_OUT"], "w") as out:
        json.dump(loaded, out)

atexit.register(dump)
signal.signal(signal.SIGUSR1, dump)
sys.argv = ["moot", *sys.argv[1:]]
runpy.run_module("tui", run_name="__main__")
"""

TITLE = "Import probe debate"


def _spec(folder: Path) -> Path:
    import tomli_w

    raw = debate_raw(
        {"a": ["release"], "b": ["revise"]}, title=TITLE, max_rounds=2, phases=["proposal"]
    )
    path = folder / "spec.toml"
    path.write_text(tomli_w.dumps(raw))
    return path


def _probe_env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return env | {"MOOT_PROBE_OUT": str(folder / "loaded.json")}


def _loaded_by(folder: Path, *args: str) -> list[str]:
    probe = folder / "probe.py"
    probe.write_text(PROBE)
    done = subprocess.run(
        [sys.executable, str(probe), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=_probe_env(folder),
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode in (0, 3), done.stderr  # 3: ended unresolved, as scripted
    loaded: list[str] = json.loads((folder / "loaded.json").read_text())
    return loaded


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A scripted spec, its finished session, and a copy cut before its result."""
    folder = tmp_path_factory.mktemp("imports")
    spec = _spec(folder)
    done = folder / "done.toml"
    subprocess.run(
        [sys.executable, "-m", "tui", "run", "--headless", str(spec), "--out", str(done)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    records = done.read_text(encoding="utf-8").split(COMMIT)
    assert "[result]" in records[-2], "the scripted run ended without a result"
    cut = folder / "cut.toml"
    cut.write_text(COMMIT.join(records[:-2]) + COMMIT, encoding="utf-8")
    return spec, done, cut


@pytest.mark.parametrize(
    "command",
    [
        ["resume", "--headless", "{cut}"],
        ["verify", "{done}"],
        ["export", "--format", "json", "{done}"],
        ["validate", "{spec}"],
    ],
    ids=["resume", "verify", "export", "validate"],
)
def test_a_scripted_command_imports_no_model_client(
    tmp_path: Path, sessions: tuple[Path, Path, Path], command: list[str]
) -> None:
    spec, done, cut = sessions
    mine = tmp_path / "cut.toml"  # resume writes: each case gets a file of its own
    mine.write_bytes(cut.read_bytes())
    args = [a.format(spec=spec, done=done, cut=mine) for a in command]
    assert _loaded_by(tmp_path, *args) == []
    if command[0] == "resume":
        assert "[result]" in mine.read_text(), "the resume did not run to its result"


def test_the_consoles_first_paint_imports_no_model_client(
    tmp_path: Path, sessions: tuple[Path, Path, Path]
) -> None:
    spec = sessions[0]
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    env = _probe_env(tmp_path) | {"TERM": "xterm-256color", "COLUMNS": "160", "LINES": "45"}
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, str(probe), "run", str(spec)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    seen = b""
    try:
        seen = _read_until(master, TITLE.encode(), deadline=time.monotonic() + 60)
        assert TITLE.encode() in seen, "the console never painted the debate's title"
        proc.send_signal(signal.SIGUSR1)
        out = tmp_path / "loaded.json"
        deadline = time.monotonic() + 30
        while not out.exists() or not out.read_text():
            assert time.monotonic() < deadline, "the console never answered the probe"
            _read_until(master, b"\0never", deadline=time.monotonic() + 0.05)  # keep it drawing
        assert json.loads(out.read_text()) == []
    finally:
        proc.kill()
        proc.wait()
        os.close(master)


def _read_until(fd: int, needle: bytes, *, deadline: float) -> bytes:
    """What the terminal showed until ``needle`` appeared or the deadline passed."""
    import select

    seen = b""
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def test_parsing_a_command_line_loads_no_protocol() -> None:
    """The parser lists the protocols only in ``moot --help`` and looks up moot's version
    only for ``--version``: building it for ``moot run`` must import neither their registry
    (pydantic and every protocol) nor ``importlib.metadata``, before the console paints."""
    probe = (
        "import json, sys\n"
        "import tui.cli\n"
        "tui.cli._parser().parse_args(['run', 'spec.toml'])\n"
        "print(json.dumps(sorted(m for m in ('pydantic', 'tui.engine.protocols', "
        "'importlib.metadata') if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_help_and_new_still_name_every_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli import main
    from tui.commands.cli.options import protocol_help

    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    assert all(f"  {name:<10} " in shown for name in protocol_help())
    with pytest.raises(SystemExit) as refused:
        main(["new", "x.toml", "--protocol", "no-such-protocol"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and all(name in err for name in protocol_help())


# Each command's ``--help`` in turn, in one process: which command modules each one loaded.
HELP_PROBE = """
import contextlib, io, json, sys
import tui.cli

def commands_loaded():
    return {m for m in sys.modules if m.startswith("tui.commands.")}

loaded = {}
before = commands_loaded()
with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
    tui.cli.main(["--help"])
loaded["--help"] = sorted(commands_loaded() - before)
for name in tui.cli.COMMANDS:
    before = commands_loaded()
    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
        tui.cli.main([name, "--help"])
    loaded[name] = sorted(commands_loaded() - before)
print(json.dumps(loaded))
"""


def test_a_commands_help_imports_that_commands_module_alone() -> None:
    """``moot --help`` lists every command from the table without importing one;
    ``moot CMD --help`` imports CMD's own module and no other command's."""
    from tui.cli import COMMANDS

    out = subprocess.run(
        [sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded.pop("--help") == []
    assert loaded == {name: [command.module] for name, command in COMMANDS.items()}
