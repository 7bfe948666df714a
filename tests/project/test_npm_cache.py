"""tests/npm_packages.py keeps a finished ``npm ci`` by its lock's digest and links it into a
fresh clone's folder instead of installing again. A fake ``npm`` on PATH counts its runs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.npm_packages import CACHE_ENV, STAMP, install

FAKE_NPM = """#!/bin/sh
echo run >> "$NPM_RUNS"
rm -rf node_modules
mkdir -p node_modules/pkg/bin node_modules/.bin
cat package-lock.json > node_modules/pkg/index.js
ln -s ../pkg/bin/tool node_modules/.bin/tool
"""
FAKE_NODE = "#!/bin/sh\necho v20.0.0\n"


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("npm", FAKE_NPM), ("node", FAKE_NODE)):
        tool = bin_dir / name
        tool.write_text(text)
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    runs = tmp_path / "runs"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("NPM_RUNS", str(runs))
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return runs


def _clone(root: Path, lock: str) -> Path:
    folder = root / "tests" / "mcp_filesystem"
    folder.mkdir(parents=True)
    (folder / "package-lock.json").write_text(lock)
    return folder


def test_a_second_clone_links_the_kept_install_and_runs_no_npm(
    fake_npm: Path, tmp_path: Path
) -> None:
    first = _clone(tmp_path / "one", '{"lockfileVersion": 3}')
    install(first)
    assert fake_npm.read_text().count("run") == 1
    second = _clone(tmp_path / "two", '{"lockfileVersion": 3}')
    install(second)
    assert fake_npm.read_text().count("run") == 1, "npm ran again for the same lock"
    one, two = (f / "node_modules" / "pkg" / "index.js" for f in (first, second))
    assert two.read_text() == '{"lockfileVersion": 3}'
    assert one.stat().st_ino == two.stat().st_ino  # linked, not copied
    assert (second / "node_modules" / ".bin" / "tool").is_symlink()
    assert (second / "node_modules" / STAMP).is_file()


def test_another_lock_is_installed_by_npm_not_taken_from_the_cache(
    fake_npm: Path, tmp_path: Path
) -> None:
    install(_clone(tmp_path / "one", '{"lockfileVersion": 3}'))
    changed = _clone(tmp_path / "two", '{"lockfileVersion": 3, "packages": {}}')
    install(changed)
    assert fake_npm.read_text().count("run") == 2
    index = changed / "node_modules" / "pkg" / "index.js"
    assert index.read_text() == '{"lockfileVersion": 3, "packages": {}}'


def test_with_the_cache_unset_nothing_is_kept(
    fake_npm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, "")
    install(_clone(tmp_path / "one", "{}"))
    install(_clone(tmp_path / "two", "{}"))
    assert fake_npm.read_text().count("run") == 2
    assert not (tmp_path / "cache").exists()


def test_a_kept_install_that_cannot_be_linked_is_installed_by_npm(
    fake_npm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another file system (no hard links across it): npm installs, and no half-linked
    folder is left behind."""
    install(_clone(tmp_path / "one", "{}"))

    def cross_device(src: str, dst: str) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    second = _clone(tmp_path / "two", "{}")
    install(second)
    assert fake_npm.read_text().count("run") == 2
    assert (second / "node_modules" / "pkg" / "index.js").read_text() == "{}"
    assert (second / "node_modules" / STAMP).is_file()


def test_a_kept_install_whose_stamp_does_not_match_is_replaced(
    fake_npm: Path, tmp_path: Path
) -> None:
    """A damaged entry costs one npm run, not one every run."""
    install(_clone(tmp_path / "one", "{}"))
    (entry,) = (tmp_path / "cache" / "npm").iterdir()
    (entry / STAMP).unlink()
    (entry / STAMP).write_text("not the digest")  # a new file: the clone's stamp stays
    install(_clone(tmp_path / "two", "{}"))
    install(_clone(tmp_path / "three", "{}"))
    assert fake_npm.read_text().count("run") == 2
