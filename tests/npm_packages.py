"""The npm packages some tests drive, each folder's installed with ``npm ci`` from its lock.

``tests/node`` holds log4brains and markdownlint (readers of moot's exports),
``tests/mcp_filesystem`` the reference filesystem MCP server and ``tests/mcp_inspector``
the MCP Inspector. ``./dev.sh test`` starts this file as a script while uv syncs the Python
environment and lets it run on beside the tests; each fixture then calls :func:`install`,
which waits on the folder's lock while the script holds it and does nothing while the
folder's stamp matches its lock. Standard library only: it runs before ``.venv`` exists.
Install scripts never run (``--ignore-scripts``).

A finished install is kept under ``$MOOT_DEV_CACHE/npm`` (./dev.sh sets it; unset, nothing is
kept), named by the lock's digest, Node's version and the platform, and a fresh clone links
those files into place instead of running ``npm ci`` again: ``npm ci`` cost about 30 s of CPU
for the three folders, the links a fraction of a second.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
FOLDERS = (HERE / "node", HERE / "mcp_filesystem", HERE / "mcp_inspector")
STAMP = ".moot-lock-sha256"  # in node_modules: the digest of the lock it was installed from
LOCK = ".npm-install.lock"  # beside node_modules, which npm ci removes: one install at a time
CACHE_ENV = "MOOT_DEV_CACHE"


def missing_tools() -> list[str]:
    """``node`` and ``npm``, those not on PATH: the tests that need them skip and say so."""
    return [tool for tool in ("node", "npm") if shutil.which(tool) is None]


def install(folder: Path, timeout: float = 600) -> None:
    """``npm ci`` in ``folder`` unless its packages were installed from this very lock.

    Held under the folder's lock, so a fixture waits for an install under way (the
    script's, or another worker's) and then finds it done."""
    with open(folder / LOCK, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # released when the file closes
        _install_locked(folder, timeout)


def _install_locked(folder: Path, timeout: float) -> None:
    digest = hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest()
    modules = folder / "node_modules"
    stamp = modules / STAMP
    if stamp.is_file() and stamp.read_text("utf-8") == digest:
        return
    kept = _kept_install(folder, digest)
    if kept is not None and _linked_from(kept, modules, digest):
        return
    done = subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"npm ci in {folder} failed:\n{done.stderr[-2000:]}")
    stamp.write_text(digest, "utf-8")
    if kept is not None:
        _keep(modules, kept, digest)


def _kept_install(folder: Path, digest: str) -> Path | None:
    """Where this folder's install from this lock is kept, or None with no cache set.

    Node's version and the platform are in the name: npm picks optional packages by them."""
    root = os.environ.get(CACHE_ENV)
    if not root:
        return None
    try:
        node = subprocess.run(
            ["node", "--version"], capture_output=True, text=True, timeout=60, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    name = f"{folder.name}-{digest[:32]}-node{node}-{sys.platform}-{platform.machine()}"
    return Path(root) / "npm" / name


def _linked_from(kept: Path, modules: Path, digest: str) -> bool:
    """Hard-link a kept install into place (new folders, the same files). False if none is
    kept from this lock or linking fails (another file system): ``npm ci`` runs then."""
    if not _holds(kept, digest):
        return False
    shutil.rmtree(modules, ignore_errors=True)
    try:
        shutil.copytree(kept, modules, symlinks=True, copy_function=os.link)
    except OSError:
        shutil.rmtree(modules, ignore_errors=True)
        return False
    return True


def _holds(kept: Path, digest: str) -> bool:
    stamp = kept / STAMP
    return stamp.is_file() and stamp.read_text("utf-8") == digest


def _keep(modules: Path, kept: Path, digest: str) -> None:
    """Link a finished install into the cache, whole or not at all (renamed into place last);
    an entry whose stamp no longer matches its name is replaced, not kept forever."""
    if _holds(kept, digest):
        return
    shutil.rmtree(kept, ignore_errors=True)
    part = kept.with_name(f"{kept.name}.part-{os.getpid()}")
    try:
        part.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(modules, part, symlinks=True, copy_function=os.link)
        part.rename(kept)
    except OSError:
        pass  # not kept (read-only cache, another file system, kept meanwhile): no harm
    finally:
        shutil.rmtree(part, ignore_errors=True)


def _install_quietly(folder: Path) -> None:
    try:
        install(folder)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as err:
        print(err, file=sys.stderr)  # the fixture tries again and fails with this


def main() -> int:
    if missing_tools():
        return 0  # the tests skip, naming what is missing
    with ThreadPoolExecutor(len(FOLDERS)) as pool:
        list(pool.map(_install_quietly, FOLDERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
