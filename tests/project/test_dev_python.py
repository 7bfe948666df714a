"""Which of the machine's Pythons dev.sh sets up with: $PYTHON; else, on Linux, the
system's when it is new enough to run moot, can make a venv and has its C headers; else
python3 on PATH. The function runs from dev.sh itself, with fake system Pythons: this
Python running dev.sh's own check with one part taken away."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PICK = "source <(sed -n '/^pick_python()/,/^}/p' dev.sh); pick_python \"$1\""


def _pick(system: str, python: str | None = None, first_on_path: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    if python is not None:
        env["PYTHON"] = python
    if first_on_path is not None:
        env["PATH"] = f"{first_on_path}{os.pathsep}{env['PATH']}"
    r = subprocess.run(
        ["bash", "-c", PICK, "pick", system],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return r.stdout.strip()


def _lacking(path: Path, change: str) -> str:
    """A system Python that runs dev.sh's check (its ``-c`` code) after ``change``."""
    path.write_text(f"#!{sys.executable}\nimport sys, sysconfig\n{change}\nexec(sys.argv[2])\n")
    path.chmod(0o755)
    return str(path)


def test_a_system_python_that_can_make_a_venv_is_chosen(tmp_path: Path) -> None:
    assert _pick(sys.executable) == sys.executable  # this one is 3.11+, with venv and headers
    assert _pick(whole := _lacking(tmp_path / "whole", "pass")) == whole  # the fake works


def test_python_on_path_when_the_system_one_is_missing_old_or_lacks_a_part(
    tmp_path: Path,
) -> None:
    assert _pick(str(tmp_path / "absent")) == "python3"
    old = _lacking(tmp_path / "old", "sys.version_info = (3, 10, 14)")
    no_venv = _lacking(tmp_path / "no-venv", "sys.modules['venv'] = None")
    no_headers = _lacking(
        tmp_path / "no-headers",
        "paths = sysconfig.get_paths\n"
        "sysconfig.get_paths = lambda *a, **k: {**paths(*a, **k), 'include': '/none'}",
    )
    for system in (old, no_venv, no_headers):
        assert _pick(system) == "python3", system


def test_not_on_macos_where_the_system_python_is_apples_or_a_stub(tmp_path: Path) -> None:
    (tmp_path / "uname").write_text("#!/bin/sh\necho Darwin\n")
    (tmp_path / "uname").chmod(0o755)
    assert _pick(sys.executable, first_on_path=tmp_path) == "python3"


def test_python_set_by_the_person_wins(tmp_path: Path) -> None:
    assert _pick(sys.executable, python="/opt/mine/python3") == "/opt/mine/python3"


def test_this_environment_was_made_from_the_python_dev_sh_picks() -> None:
    """The choice reaches the set-up: .venv's interpreter is the one picked (its path or
    the one it names on PATH), so ./dev.sh test runs on the faster build where there is one."""
    picked = _pick("/usr/bin/python3", python=os.environ.get("PYTHON"))
    if not os.path.isabs(picked):  # a name on PATH, perhaps a pyenv shim: ask it
        picked = subprocess.run(
            [picked, "-c", "import sys; print(sys.executable)"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
    base = getattr(sys, "_base_executable", sys.executable)
    assert os.path.realpath(base) == os.path.realpath(picked)
