"""tests/assert_cache.py, which ./dev.sh runs on a fresh clone before the workers start,
writes what pytest's import hook writes, where pytest looks for it, and pytest uses it."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path
from types import CodeType

from _pytest.assertion.rewrite import AssertionRewritingHook, get_cache_dir

from tests.assert_cache import cache_file, rewritten_by_pytest
from tests.conftest import REPO

# Asserts of several shapes, in a test file and a conftest, as pytest meets them.
SAMPLE = {
    "conftest.py": (
        "import pytest\n\n@pytest.fixture\ndef answer():\n"
        "    value = 6 * 7\n    assert value == 42, 'arithmetic'\n    return value\n"
    ),
    "test_sample.py": (
        "def test_shapes(answer):\n"
        "    items = [answer, answer + 1]\n"
        "    assert items[0] == 42 and len(items) == 2\n"
        "    assert not any(x < 0 for x in items), items\n"
        "    assert {'a': 1}.get('a') in (1, 2)\n"
    ),
}


def _writing_bytecode() -> dict[str, str]:
    """This environment, bytecode written as ./dev.sh test has it, wherever pytest was run
    from (a shell with PYTHONDONTWRITEBYTECODE set writes none, so there is none to compare)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _sample(folder: Path) -> list[Path]:
    folder.mkdir()
    for name, text in SAMPLE.items():
        (folder / name).write_text(text)
    return [folder / name for name in SAMPLE]


def _collect(folder: Path) -> None:
    """pytest, as a worker runs it, on the sample alone (this run's bytecode cache)."""
    subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + ["-p", "no:xdist", "--rootdir", str(folder), str(folder)],
        cwd=folder,
        env=_writing_bytecode(),
        check=True,
        capture_output=True,
    )


def _write_ahead(sources: list[Path]) -> None:
    code = (
        "import sys; from pathlib import Path; from tests.assert_cache import write_rewritten\n"
        "for name in sys.argv[1:]: write_rewritten(Path(name))"
    )
    subprocess.run(
        [sys.executable, "-c", code, *map(str, sources)],
        cwd=REPO,
        env=_writing_bytecode(),
        check=True,
    )


def _read(pyc: Path) -> tuple[bytes, CodeType]:
    data = pyc.read_bytes()
    return data[:16], marshal.loads(data[16:])  # header: magic, flags, source mtime and size


def test_what_is_written_ahead_is_what_pytest_writes_and_pytest_uses_it(tmp_path: Path) -> None:
    sources = _sample(tmp_path / "sample")
    pycs = [cache_file(source) for source in sources]
    assert all(
        pyc.parent == get_cache_dir(source) for pyc, source in zip(pycs, sources, strict=True)
    )

    _collect(tmp_path / "sample")
    by_pytest = [_read(pyc) for pyc in pycs]
    assert any(name.startswith("@py_assert") for name in _names(by_pytest[1][1]))  # rewritten
    for pyc in pycs:
        pyc.unlink()

    _write_ahead(sources)
    assert [_read(pyc) for pyc in pycs] == by_pytest
    written = [(pyc.stat().st_ino, pyc.stat().st_mtime_ns) for pyc in pycs]
    _collect(tmp_path / "sample")
    # pytest replaces a file it writes (a new inode): these it read and kept.
    assert [(pyc.stat().st_ino, pyc.stat().st_mtime_ns) for pyc in pycs] == written


def test_the_list_is_what_pytest_rewrote_in_this_run() -> None:
    """Of the modules under tests/ this process imported, pytest's hook loaded exactly the
    listed ones (the test files and conftests), and no helper module such as the lister."""
    listed = set(rewritten_by_pytest(REPO / "tests"))
    loaded = {}
    for module in list(sys.modules.values()):
        origin = getattr(getattr(module, "__spec__", None), "origin", None) or ""
        if origin.startswith(str(REPO / "tests")) and "node_modules" not in origin:
            loaded[Path(origin)] = isinstance(module.__loader__, AssertionRewritingHook)
    assert loaded[Path(__file__)] and not loaded[REPO / "tests" / "assert_cache.py"]
    assert {path for path, hooked in loaded.items() if hooked} == listed & set(loaded)


def _names(code: CodeType) -> set[str]:
    """Every name a module's code and its functions' code use."""
    names = set(code.co_names) | set(code.co_varnames)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _names(const)
    return names
