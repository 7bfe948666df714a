"""Rewrites the test modules' asserts into pytest's cache before the workers start.

On a fresh clone every xdist worker rewrote every test module at collection, all of
them at once (about 6 s of CPU each). ./dev.sh runs this in two processes instead,
beside the compile of moot's own bytecode. The files are made by pytest's own rewriter
(tests/project/test_assert_cache.py finds in them the header and code pytest writes),
and pytest still checks each against its source's size and mtime: one that does not
match is rewritten as before.

Run: python tests/assert_cache.py PART PARTS   (from the checkout's root)
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from types import SimpleNamespace

from _pytest.assertion import rewrite

TESTS = Path(os.getcwd()) / "tests"  # as pytest names them: from the working folder


def rewritten_by_pytest(tests: Path = TESTS) -> list[Path]:
    """The modules pytest rewrites here: test files and conftests (no plugin registers more)."""
    found = (
        p for p in tests.rglob("*.py") if p.name.startswith("test_") or p.name == "conftest.py"
    )
    return sorted(p for p in found if "node_modules" not in p.parts)


def cache_file(source: Path) -> Path:
    return rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)


def write_rewritten(source: Path) -> None:
    """What pytest's import hook does for a module it has no current cache file for."""
    pyc = cache_file(source)
    if (
        sys.dont_write_bytecode
        or rewrite._read_pyc(source, pyc) is not None
        or not rewrite.try_makedirs(pyc.parent)
    ):
        return
    stat = os.stat(source)
    text = source.read_bytes()
    tree = ast.parse(text, filename=str(source))
    rewrite.rewrite_asserts(tree, text, str(source), None)  # no ini turns the pass hook on
    code = compile(tree, str(source), "exec", dont_inherit=True)
    rewrite._write_pyc(SimpleNamespace(trace=lambda _message: None), code, stat, pyc)  # type: ignore[arg-type]


def main(argv: list[str]) -> int:
    part, parts = int(argv[1]), int(argv[2])
    for source in rewritten_by_pytest()[part::parts]:
        write_rewritten(source)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
