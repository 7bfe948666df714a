"""Set-up installs only what the locks hold: each lock answers its pyproject.toml, the
environments hold exactly the locked versions, and a stale lock stops dev.sh by name.

uv comes from the dev extra (so from uv.lock itself); every check runs offline.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.conftest import REPO

UV = Path(sys.executable).parent / "uv"
PROXY_PROJECT = REPO / "setup" / "litellm-proxy"
PROXY_VENV = REPO / ".venv-proxy"  # or a link to one in the dev cache (dev.sh)


def _uv(
    *args: str, cwd: Path = REPO, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    assert UV.is_file(), f"uv is in the dev extra, so it should be at {UV}"
    return subprocess.run(
        [str(UV), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _locked(lock: Path) -> dict[str, str]:
    with lock.open("rb") as f:
        return {p["name"]: p["version"] for p in tomllib.load(f)["package"] if "version" in p}


@pytest.mark.parametrize("project", [REPO, PROXY_PROJECT], ids=["app", "litellm-proxy"])
def test_each_lock_answers_its_pyproject(project: Path) -> None:
    done = _uv("lock", "--check", "--offline", "--project", str(project))
    assert done.returncode == 0, done.stderr


def _test_sync() -> list[str]:
    """What ``./dev.sh test`` syncs into .venv, from its one ``TEST_SYNC=(…)`` line."""
    found = re.search(r"^TEST_SYNC=\((.*)\)$", (REPO / "dev.sh").read_text(), re.M)
    assert found, "dev.sh names what the tests sync in one TEST_SYNC=(...) line"
    return found.group(1).split()


def test_the_test_environment_holds_exactly_the_locked_versions() -> None:
    done = _uv("sync", "--locked", "--check", "--offline", *_test_sync())
    assert done.returncode == 0, done.stderr


def test_the_proxy_environment_holds_exactly_its_locked_versions() -> None:
    assert (PROXY_VENV / "bin" / "litellm").is_file(), "./dev.sh test sets up .venv-proxy"
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(PROXY_VENV)}
    env.pop("VIRTUAL_ENV", None)
    done = _uv("sync", "--locked", "--check", "--offline", "--project", str(PROXY_PROJECT), env=env)
    assert done.returncode == 0, done.stderr
    assert _locked(PROXY_PROJECT / "uv.lock")["litellm"] == "1.108.0"


def test_the_bootstrap_uv_is_the_locked_uv() -> None:
    pinned = (REPO / "setup" / "uv.txt").read_text().split()[0]
    assert pinned == f"uv=={_locked(REPO / 'uv.lock')['uv']}"
    assert pinned == f"uv=={_uv('--version').stdout.split()[1]}"


def test_every_published_requirement_has_a_tested_upper_bound() -> None:
    with (REPO / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    locked = _locked(REPO / "uv.lock")
    requirements = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        requirements += extra
    for line in requirements:
        req = Requirement(line)
        assert any(s.operator in ("<", "<=", "==", "~=") for s in req.specifier), line
        assert req.specifier.contains(locked[req.name]), (line, locked[req.name])


@pytest.mark.parametrize("edited", ["pyproject.toml", "setup/litellm-proxy/pyproject.toml"])
def test_editing_a_pyproject_without_relocking_stops_set_up_by_name(
    tmp_path: Path, edited: str
) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("dev.sh", "pyproject.toml", "uv.lock", "README.md"):
        shutil.copy2(REPO / name, clone / name)
    shutil.copytree(REPO / "setup", clone / "setup")
    shutil.copytree(REPO / "examples", clone / "examples")  # the lock installs a package from it
    target = clone / edited
    text = target.read_text()
    marker = "dependencies = ["
    assert marker in text
    target.write_text(text.replace(marker, f'{marker}\n    "moot-no-such-package>=1",', 1))

    env = {**os.environ, "UV": str(UV), "UV_CACHE_DIR": str(tmp_path / "cache")}
    for command in ("demo", "test"):
        done = subprocess.run(
            ["./dev.sh", command],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        project = str(Path(edited).parent)
        assert lines[0] == (
            f"dev.sh: {project}/uv.lock does not match {project}/pyproject.toml; run ./dev.sh lock"
        )
        assert not (clone / ".venv").exists(), "nothing may be installed from a stale lock"
