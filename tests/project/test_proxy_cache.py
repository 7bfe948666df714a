"""dev.sh keeps LiteLLM's proxy's environment in the dev cache, one per lock and Python, and
links each clone's .venv-proxy to it. ``setup_proxy`` is run from dev.sh itself, with a fake
``uv`` ($UV, which dev.sh honours) that records where it was asked to sync."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

FAKE_UV = """#!/bin/sh
echo "$UV_PROJECT_ENVIRONMENT" >> "$UV_SYNCS"
mkdir -p "$UV_PROJECT_ENVIRONMENT/bin"
touch "$UV_PROJECT_ENVIRONMENT/bin/litellm"
"""
DRIVER = """
set -euo pipefail
source <(sed -n '/^uv_bin()/,/^}/p;/^setup_proxy()/,/^}/p' dev.sh)
setup_proxy
"""


def _clone(root: Path, name: str, lock: str = "lock one\n") -> Path:
    clone = root / name
    (clone / "setup" / "litellm-proxy").mkdir(parents=True)
    shutil.copy(REPO / "dev.sh", clone / "dev.sh")
    (clone / "setup" / "litellm-proxy" / "uv.lock").write_text(lock)
    return clone


def _setup_proxy(clone: Path, tmp_path: Path, cache: str) -> list[str]:
    uv = tmp_path / "uv"
    if not uv.exists():
        uv.write_text(FAKE_UV)
        uv.chmod(uv.stat().st_mode | stat.S_IXUSR)
    syncs = tmp_path / "syncs"
    env = {**os.environ, "UV": str(uv), "UV_SYNCS": str(syncs), "PY": sys.executable}
    env["MOOT_DEV_CACHE"] = cache
    done = subprocess.run(
        ["bash", "-c", DRIVER],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return syncs.read_text().split()


def test_clones_with_one_lock_share_one_proxy_environment(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _clone(tmp_path, "a")
    second = _clone(tmp_path, "b")
    synced = _setup_proxy(first, tmp_path, str(cache))
    synced = _setup_proxy(second, tmp_path, str(cache))
    assert len(synced) == 2 and synced[0] == synced[1]
    kept = Path(synced[0])
    assert kept.parent == cache and kept.name.startswith("litellm-proxy-")
    for clone in (first, second):
        link = clone / ".venv-proxy"
        assert link.is_symlink() and link.resolve() == kept.resolve()
        assert (link / "bin" / "litellm").is_file()


def test_another_lock_gets_an_environment_of_its_own(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    _setup_proxy(_clone(tmp_path, "a"), tmp_path, cache)
    synced = _setup_proxy(_clone(tmp_path, "b", lock="lock two\n"), tmp_path, cache)
    assert len(set(synced)) == 2


def test_an_old_clones_environment_is_replaced_by_the_link(tmp_path: Path) -> None:
    clone = _clone(tmp_path, "a")
    (clone / ".venv-proxy" / "bin").mkdir(parents=True)  # made before the cache kept one
    _setup_proxy(clone, tmp_path, str(tmp_path / "cache"))
    assert (clone / ".venv-proxy").is_symlink()


def test_without_a_cache_the_clone_keeps_its_own(tmp_path: Path) -> None:
    clone = _clone(tmp_path, "a")
    _setup_proxy(clone, tmp_path, str(tmp_path / "cache"))  # linked while there was one
    synced = _setup_proxy(clone, tmp_path, "")
    own = clone / ".venv-proxy"
    assert synced[-1] == str(own) and not own.is_symlink() and own.is_dir()
    assert (own / "bin" / "litellm").is_file()
