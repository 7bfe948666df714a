"""How long a new user waits: clone → demo console painted, and clone → first test started.

Run: python3 bench/setup_time.py [--only demo|tests]

Each figure starts from a fresh ``git clone`` of this checkout's HEAD with empty
package caches (uv's cache in a new folder, pip's off), so every wheel is
downloaded again, as on a new machine. The demo runs ``./dev.sh demo`` in tmux
and stops the clock when the console shows the example's title and its first
debater; the tests run ``./dev.sh test`` and stop the clock when pytest starts its
first test (``tests/conftest.py`` writes the moment when ``MOOT_FIRST_TEST_STAMP``
names a file). Ruff, mypy and the import contracts run beside the tests, so the
second figure holds the set-up and the start of pytest's workers. The goal beside
each is the issue's (90 s for the demo); the machine's load at the time is printed
with them.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO_SPEC = REPO / "sessions" / "examples" / "local-debate.toml"
DEMO_GOAL_S = 90.0
DEADLINE_S = 1800.0


def _fresh_clone(work: Path) -> tuple[Path, dict[str, str]]:
    clone = work / "moot"
    subprocess.run(["git", "clone", "-q", "--no-local", str(REPO), str(clone)], check=True)
    env = {
        **os.environ,
        "UV_CACHE_DIR": str(work / "uv-cache"),
        "PIP_NO_CACHE_DIR": "1",
        "MOOT_CONFIG_DIR": str(work / "config"),
        "MOOT_SESSIONS_DIR": str(work / "sessions"),
    }
    for inherited in ("VIRTUAL_ENV", "UV", "UV_PROJECT_ENVIRONMENT"):
        env.pop(inherited, None)
    return clone, env


def demo_painted() -> float:
    """Seconds from the clone to the demo's console showing its title and a debater."""
    with DEMO_SPEC.open("rb") as f:
        spec = tomllib.load(f)
    title, first = spec["debate"]["title"], spec["debaters"][0]["id"]
    socket = f"moot-setup-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="moot-setup-") as tmp:
        start = time.monotonic()
        clone, env = _fresh_clone(Path(tmp))
        exports = " ".join(
            f"{k}={shlex.quote(v)}"
            for k, v in env.items()
            if k.startswith(("UV_", "PIP_", "MOOT_"))
        )
        tmux = ["tmux", "-L", socket]
        subprocess.run(
            [*tmux, "new-session", "-d", "-x", "160", "-y", "48", "-s", "demo", "-c", str(clone)],
            check=True,
            env=env,
        )
        subprocess.run(
            [*tmux, "send-keys", "-t", "demo", f"env {exports} ./dev.sh demo", "Enter"], check=True
        )
        try:
            while time.monotonic() - start < DEADLINE_S:
                screen = subprocess.run(
                    [*tmux, "capture-pane", "-p", "-J", "-t", "demo"],
                    capture_output=True,
                    text=True,
                ).stdout
                if title in screen and first in screen:
                    return time.monotonic() - start
                time.sleep(0.1)
            raise SystemExit(f"the demo did not paint within {DEADLINE_S:.0f} s:\n{screen}")
        finally:
            subprocess.run([*tmux, "kill-server"], capture_output=True)


def first_test_started() -> float:
    """Seconds from the clone to pytest starting the suite's first test."""
    with tempfile.TemporaryDirectory(prefix="moot-setup-") as tmp:
        start = time.monotonic()
        clone, env = _fresh_clone(Path(tmp))
        stamp = Path(tmp) / "first-test"
        env["MOOT_FIRST_TEST_STAMP"] = str(stamp)
        wall_start = time.time() - (time.monotonic() - start)
        proc = subprocess.Popen(
            ["./dev.sh", "test", "-x"],
            cwd=clone,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            while time.monotonic() - start < DEADLINE_S:
                if stamp.is_file() and stamp.read_text().strip():
                    return float(stamp.read_text()) - wall_start
                if proc.poll() is not None:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    raise SystemExit(f"./dev.sh test ended before a test started:\n{err}")
                time.sleep(0.1)
            raise SystemExit(f"no test started within {DEADLINE_S:.0f} s")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["demo", "tests"])
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(
        f"fresh clone of {REPO.name} HEAD, empty package caches, load {load:.1f} on {os.cpu_count()} cores"
    )
    if args.only in (None, "demo"):
        took = demo_painted()
        print(f"clone → demo console painted   {took:6.1f} s   (goal {DEMO_GOAL_S:.0f} s)")
    if args.only in (None, "tests"):
        took = first_test_started()
        print(f"clone → first test started      {took:6.1f} s   (ruff, mypy, contracts included)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
