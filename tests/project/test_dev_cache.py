"""dev.sh keeps uv's venv and LiteLLM's proxy's environment in the dev cache, one per pinning
file (setup/uv.txt, the proxy's lock) and Python, and links each clone's .venv-uv and
.venv-proxy to them. The functions run from dev.sh itself, with a fake Python (its ``-m venv``
and ``-m pip`` counted) and a fake ``uv`` ($UV, which dev.sh honours) that records where it
was asked to sync."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO

PINNED = re.search(r"^uv==(\S+)", (REPO / "setup" / "uv.txt").read_text(), re.M)
assert PINNED
WANT = PINNED.group(1)
FAKE_PYTHON = f"""#!/bin/sh
if [ "$1" = -m ] && [ "$2" = venv ]; then
    for arg; do dir=$arg; done
    mkdir -p "$dir/bin" && exit 0
fi
if [ "$1" = -m ] && [ "$2" = pip ]; then
    echo install >> "$PIP_RUNS"
    bin=$(dirname "$4")
    printf '#!/bin/sh\\necho "uv {WANT} (fake)"\\n' > "$bin/uv"
    chmod +x "$bin/uv"
    exit 0
fi
exec {sys.executable} "$@"
"""
FAKE_UV = """#!/bin/sh
echo "$UV_PROJECT_ENVIRONMENT" >> "$UV_SYNCS"
mkdir -p "$UV_PROJECT_ENVIRONMENT/bin"
touch "$UV_PROJECT_ENVIRONMENT/bin/litellm"
"""
FUNCTIONS = (
    "source <(sed -n '/^TEST_SYNC=/p;/^kept_place()/,/^}/p;/^cache_key()/,/^}/p;"
    "/^prune_kept()/,/^}/p;"
    "/^link_place()/,/^}/p;/^uv_bin()/,/^}/p;/^setup_proxy()/,/^}/p;"
    "/^bytecode_places()/,/^}/p;/^restore_bytecode()/,/^}/p;"
    "/^keep_bytecode()/,/^}/p' dev.sh)"
)
# What .venv/bin/python says its site-packages are, when dev.sh asks.
SITE = f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
FAKE_VENV_PYTHON = f'#!/bin/sh\necho "$(pwd)/.venv/{SITE}"\n'


def _clone(root: Path, name: str, lock: str = "lock one\n") -> Path:
    clone = root / name
    (clone / "setup" / "litellm-proxy").mkdir(parents=True)
    shutil.copy(REPO / "dev.sh", clone / "dev.sh")
    shutil.copy(REPO / "setup" / "uv.txt", clone / "setup" / "uv.txt")
    (clone / "setup" / "litellm-proxy" / "uv.lock").write_text(lock)
    (clone / "uv.lock").write_text(lock)
    (clone / ".venv" / "bin").mkdir(parents=True)
    _tool(clone / ".venv" / "bin" / "python", FAKE_VENV_PYTHON)
    return clone


def _tool(path: Path, text: str) -> Path:
    if not path.exists():
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _run(clone: Path, tmp_path: Path, cache: str, call: str, **env: str) -> None:
    env.setdefault("VENV", ".venv")
    env.setdefault("PYTHONPYCACHEPREFIX", f"{clone}/.venv/pycache")
    python = _tool(tmp_path / "python", FAKE_PYTHON)
    done = subprocess.run(
        ["bash", "-c", f"set -euo pipefail\n{FUNCTIONS}\n{call}"],
        cwd=clone,
        env={
            **os.environ,
            "PY": str(python),
            "MOOT_DEV_CACHE": cache,
            "PIP_RUNS": str(tmp_path / "pip-runs"),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def _setup_proxy(clone: Path, tmp_path: Path, cache: str) -> list[str]:
    uv = _tool(tmp_path / "uv", FAKE_UV)
    syncs = tmp_path / "syncs"
    _run(clone, tmp_path, cache, "setup_proxy", UV=str(uv), UV_SYNCS=str(syncs))
    return syncs.read_text().split()


def _pip_runs(tmp_path: Path) -> int:
    runs = tmp_path / "pip-runs"
    return len(runs.read_text().split()) if runs.exists() else 0


def test_clones_share_one_uv_and_it_is_installed_once(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    clones = [_clone(tmp_path, "a"), _clone(tmp_path, "b")]
    for clone in clones:
        _run(clone, tmp_path, str(cache), "uv_bin")
    assert _pip_runs(tmp_path) == 1
    (kept,) = cache.glob("uv-*")
    for clone in clones:
        link = clone / ".venv-uv"
        assert link.is_symlink() and link.resolve() == kept.resolve()
        version = subprocess.run([link / "bin" / "uv", "--version"], capture_output=True, text=True)
        assert version.stdout.split()[1] == WANT
    assert not list(cache.glob("*.part-*"))


def test_without_a_cache_a_clone_installs_uv_of_its_own(tmp_path: Path) -> None:
    clone = _clone(tmp_path, "a")
    _run(clone, tmp_path, str(tmp_path / "cache"), "uv_bin")  # linked while there was one
    _run(clone, tmp_path, "", "uv_bin")
    own = clone / ".venv-uv"
    assert not own.is_symlink() and (own / "bin" / "uv").is_file()
    assert _pip_runs(tmp_path) == 2


def test_the_demo_uses_the_linked_uv_and_installs_none(tmp_path: Path) -> None:
    """./dev.sh demo sets no cache: the uv a test run linked serves it as it is."""
    clone = _clone(tmp_path, "a")
    _run(clone, tmp_path, str(tmp_path / "cache"), "uv_bin")
    _run(clone, tmp_path, "", "unset MOOT_DEV_CACHE; uv_bin")
    assert (clone / ".venv-uv").is_symlink() and _pip_runs(tmp_path) == 1


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


DAY = 24 * 3600


def _aged(path: Path, days: float) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    then = path.stat().st_mtime - days * DAY
    os.utime(path, (then, then))
    return path


def test_entries_no_run_used_for_30_days_are_pruned_and_the_one_in_use_is_touched(
    tmp_path: Path,
) -> None:
    """Each lock change left a whole environment behind; a run keeps what it uses, what
    another run used lately, and any other kind of entry."""
    cache = tmp_path / "cache"
    clone = _clone(tmp_path, "a")
    in_use = Path(_setup_proxy(clone, tmp_path, str(cache))[0])
    _aged(in_use, 40)  # this lock's, unused for 40 days: the next run uses it again
    stale = _aged(cache / "litellm-proxy-0ld", 31)
    recent = _aged(cache / "litellm-proxy-rec3nt", 29)
    left = _aged(cache / f"{in_use.name}.part-99", 2)  # a stopped run's piece
    making = _aged(cache / f"{in_use.name}.part-98", 0.5)  # one a run is making now
    other = _aged(cache / "uv-0ld", 90)  # another kind: its own run prunes it
    mypy = _aged(cache / "mypy", 90)
    _setup_proxy(clone, tmp_path, str(cache))
    assert in_use.is_dir() and in_use.stat().st_mtime > time.time() - DAY  # touched
    assert not stale.exists() and not left.exists()
    assert recent.is_dir() and making.is_dir() and other.is_dir() and mypy.is_dir()
    _run(clone, tmp_path, str(cache), "uv_bin")
    assert not other.exists() and mypy.is_dir()
    _setup_proxy(_clone(tmp_path, "b", lock="lock two\n"), tmp_path, str(cache))
    assert in_use.is_dir()  # another lock's run keeps what clone a used (and touched)


def test_old_bytecode_is_pruned_when_a_run_finds_its_own(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    clone = _clone(tmp_path, "a")
    stale = _aged(cache / "bytecode-0ld", 45)
    recent = _aged(cache / "bytecode-rec3nt", 3)
    _run(clone, tmp_path, str(cache), "bytecode_places")
    assert not stale.exists() and recent.is_dir()


def _site(clone: Path) -> Path:
    return clone / ".venv" / SITE


def _venv(clone: Path) -> Path:
    """A real venv in the clone, whose start-up imports a module from a .pth file, as an
    editable install's finder is: a Python started without -B compiles it at once."""
    shutil.rmtree(clone / ".venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", clone / ".venv"], check=True)
    (_site(clone) / "finder_here.pth").write_text("import finder_here\n")
    (_site(clone) / "finder_here.py").write_text("")
    return clone


def _bytecode(clone: Path) -> Path:
    """Where PYTHONPYCACHEPREFIX puts the bytecode of the clone's site-packages."""
    return Path(f"{clone}/.venv/pycache{_site(clone)}")


def _import_pkg(clone: Path) -> None:
    """Import the clone's package as a worker would, bytecode under PYTHONPYCACHEPREFIX."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": f"{clone}/.venv/pycache", "PYTHONPATH": ""}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    python = clone / ".venv" / "bin" / "python"
    subprocess.run([python, "-c", "import pkg.mod"], env=env, check=True, timeout=60)


def test_a_fresh_clone_starts_from_the_bytecode_a_run_kept(tmp_path: Path) -> None:
    """The packages' files are one inode in every clone (uv links them from its cache), so
    the bytecode compiled in one clone is valid in the next: it is linked, not compiled."""
    cache = tmp_path / "cache"
    first, second = _venv(_clone(tmp_path, "a")), _venv(_clone(tmp_path, "b"))
    (_site(first) / "pkg").mkdir(parents=True)
    (_site(first) / "pkg" / "__init__.py").write_text("")
    (_site(first) / "pkg" / "mod.py").write_text("VALUE = 1\n")
    shutil.copytree(_site(first) / "pkg", _site(second) / "pkg", copy_function=os.link)
    marker = tmp_path / "started"
    _run(first, tmp_path, str(cache), f"touch {marker}")
    _import_pkg(first)  # the run compiles it
    _run(first, tmp_path, str(cache), f"keep_bytecode {marker}")
    (kept,) = cache.glob("bytecode-*")
    kept_pyc = next(kept.rglob("mod.*.pyc"))
    _run(second, tmp_path, str(cache), "restore_bytecode")
    linked = next(_bytecode(second).rglob("mod.*.pyc"))
    assert linked.parent == _bytecode(second) / "pkg"  # in place, not in a folder beneath
    assert linked.stat().st_ino == kept_pyc.stat().st_ino
    _import_pkg(second)
    assert next(_bytecode(second).rglob("mod.*.pyc")).stat().st_ino == kept_pyc.stat().st_ino
    # Nothing compiled in that run but the clone's own finder: the kept copy stays as it is.
    finder = _bytecode(second) / "__editable___moot_0_finder.cpython-311.pyc"
    folder = kept.stat().st_ino
    _run(second, tmp_path, str(cache), f"touch {marker}; touch {finder}; keep_bytecode {marker}")
    assert kept.stat().st_ino == folder  # a new copy would be a new folder renamed in
    assert not list(cache.glob("*.part-*")) and not list(cache.glob("*.old-*"))


def test_bytecode_compiled_again_is_kept_in_a_new_copy(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    clone = _clone(tmp_path, "a")
    (_bytecode(clone) / "one").mkdir(parents=True)
    (_bytecode(clone) / "one" / "a.cpython-311.pyc").write_bytes(b"old")
    # uv writes an editable install's finder in each clone, naming that clone: never kept.
    (_bytecode(clone) / "__editable___moot_0_finder.cpython-311.pyc").write_bytes(b"here")
    _run(clone, tmp_path, str(cache), f"keep_bytecode {tmp_path / 'never'}")
    (kept,) = cache.glob("bytecode-*")
    marker = tmp_path / "started"
    _run(clone, tmp_path, str(cache), f"touch -d '1 minute ago' {marker}")
    (_bytecode(clone) / "one" / "b.cpython-311.pyc").write_bytes(b"new")
    _run(clone, tmp_path, str(cache), f"keep_bytecode {marker}")
    assert sorted(p.name for p in (kept / "one").iterdir()) == [
        "a.cpython-311.pyc",
        "b.cpython-311.pyc",
    ]
    assert not list(kept.glob("__editable__*"))
    assert not list(cache.glob("*.part-*")) and not list(cache.glob("*.old-*"))


def test_without_kept_bytecode_or_a_cache_nothing_is_linked_or_kept(tmp_path: Path) -> None:
    clone = _clone(tmp_path, "a")
    _run(clone, tmp_path, str(tmp_path / "cache"), "! restore_bytecode")
    assert not _bytecode(clone).exists()
    (_bytecode(clone) / "a.cpython-311.pyc").parent.mkdir(parents=True)
    (_bytecode(clone) / "a.cpython-311.pyc").write_bytes(b"x")
    _run(clone, tmp_path, "", f"keep_bytecode {tmp_path / 'never'}; ! restore_bytecode")
    assert not (tmp_path / "cache").exists()
