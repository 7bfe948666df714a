"""Which of the machine's Pythons dev.sh sets up with: $PYTHON, else the system's when it
is new enough to run moot, can make a venv and has its C headers, else python3 on PATH. The function runs
from dev.sh itself, with fake system Pythons."""

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


def _script(path: Path, body: str) -> str:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_a_system_python_that_can_make_a_venv_is_chosen() -> None:
    assert _pick(sys.executable) == sys.executable  # this one is 3.11+, with venv and headers


def test_python_on_path_when_the_system_one_is_missing_old_or_lacks_a_part(
    tmp_path: Path,
) -> None:
    assert _pick(str(tmp_path / "absent")) == "python3"
    old = _script(tmp_path / "old", f'exec {sys.executable} -c "import sys; sys.exit(1)"')
    assert _pick(old) == "python3"
    no_venv = _script(tmp_path / "no-venv", f"exec {sys.executable} -c 'import no_such_module'")
    assert _pick(no_venv) == "python3"
    no_headers = tmp_path / "no-headers"  # runs the check with no include folder
    no_headers.write_text(
        f"#!{sys.executable}\nimport sys, sysconfig\n"
        "sysconfig.get_paths = lambda *a, **k: {'include': '/nonexistent'}\n"
        "exec(sys.argv[2])\n"
    )
    no_headers.chmod(0o755)
    assert _pick(str(no_headers)) == "python3"


def test_not_on_macos_where_the_system_python_is_apples_or_a_stub(tmp_path: Path) -> None:
    _script(tmp_path / "uname", "echo Darwin")
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
