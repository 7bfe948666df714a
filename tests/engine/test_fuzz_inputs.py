"""Property tests: mutated, random and deep specs, sessions and replies never crash moot.

Every input goes through the CLI entry function in-process; the exit code must be
0, 2 or 3 (never 1, an internal error), each call must end within a bound, and
memory must stay bounded. Counts are printed at the end (``pytest -s``) for the
record. Examples run only on scripted debaters with small delays and few rounds,
so nothing reaches a network or a local model and the time stays bounded.
"""

from __future__ import annotations

import contextlib
import io
import re
import resource
import shutil
import tempfile
import tomllib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES
from tui.cli import main
from tui.engine.basics.errors import MootInputError
from tui.engine.core.parsing import TurnParseError, parse_turn
from tui.engine.core.records import Position
from tui.engine.record.session import load_session
from tui.engine.specs.spec import Spec, read_spec_file

_DELAY = re.compile(r"(?m)^(token|turn)_delay_ms = .*\n")
SPECS = {p.name: _DELAY.sub("", p.read_text()) for p in sorted(EXAMPLES.glob("scripted-*.toml"))}
COUNTS: Counter[str] = Counter()
FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)

HOSTILE_VALUES = [
    "[]",
    "{}",
    "{ a = 1 }",
    "{ votes = 1 }",
    "[[1], { a = 2 }]",
    '["a", 1, 2.5]',
    "-1",
    "0",
    "99999999999999999999",
    "1" * 120,
    "1e999",
    "nan",
    "inf",
    "true",
    "1979-05-27T07:32:00Z",
    '""',
    '"' + "x" * 5000 + '"',
    '"\\u0000\\u001b[31m\\u202e"',
    '"sk-' + "A" * 40 + '"',
    "[" * 40 + "]" * 40,
    "{a = " * 40 + "1" + "}" * 40,
]
TOKENS = [
    "[",
    "]",
    "{",
    "}",
    "=",
    '"',
    "'",
    ",",
    ".",
    "\n",
    "#",
    "[[",
    "]]",
    '"""',
    "'''",
    "\\",
    "é",
    "\x00",
    "\r\n",
    "\ufeff",
    "x.y.z",
    " = []",
]
_ASSIGNMENT = re.compile(r"(?m)^([ \t]*[\w.\"-]+[ \t]*=[ \t]*)(.*)$")


def mutate(text: str, ops: list[tuple[float, str, str]]) -> str:
    """Apply edits at relative positions: insert, delete, swap a value, duplicate a line."""
    for where, op, payload in ops:
        at = int(where * len(text))
        if op == "insert":
            text = text[:at] + payload + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + len(payload) + 1 :]
        elif op == "value":
            values = list(_ASSIGNMENT.finditer(text))
            if values:
                m = values[int(where * (len(values) - 1))]
                text = text[: m.start(2)] + payload + text[m.end(2) :]
        elif op == "line":
            lines = text.split("\n")
            i = int(where * (len(lines) - 1))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        else:  # truncate
            text = text[:at]
    return text


OPS = st.lists(
    st.one_of(
        st.tuples(st.floats(0, 1), st.just("value"), st.sampled_from(HOSTILE_VALUES)),
        st.tuples(
            st.floats(0, 1),
            st.sampled_from(["insert", "delete", "line", "truncate"]),
            st.sampled_from(TOKENS) | st.text(max_size=6),
        ),
    ),
    min_size=1,
    max_size=5,
)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="moot-fuzz-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def cli(*argv: str) -> int:
    """Run the CLI in-process, output discarded; the exit code must be 0, 2 or 3."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert code in (0, 2, 3), (argv, code, err.getvalue()[-2000:])
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue()
    COUNTS[f"{argv[0]} exit {code}"] += 1
    return code


def runnable(spec: Spec) -> bool:
    """Scripted only, small delays, few rounds: safe and quick to run."""
    return (
        spec.max_rounds <= 4
        and len(spec.debaters) <= 6
        and all(
            d.model == "scripted"
            and (d.script is None or (d.script.turn_delay_ms + d.script.token_delay_ms) <= 5)
            for d in spec.debaters
        )
    )


def write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    path.unlink(missing_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))
    return path


@settings(FUZZ, max_examples=600)
@given(name=st.sampled_from(sorted(SPECS)), ops=OPS)
def test_mutated_specs_validate(
    scratch: Path, name: str, ops: list[tuple[float, str, str]]
) -> None:
    COUNTS["mutated specs"] += 1
    cli("validate", str(write(scratch, "spec.toml", mutate(SPECS[name], ops))))


@settings(FUZZ, max_examples=80)
@given(name=st.sampled_from(sorted(SPECS)), ops=OPS)
def test_mutated_specs_run(scratch: Path, name: str, ops: list[tuple[float, str, str]]) -> None:
    COUNTS["mutated specs offered to run"] += 1
    path = write(scratch, "run.toml", mutate(SPECS[name], ops))
    try:
        spec, _ = read_spec_file(path)
    except MootInputError:
        cli("run", str(path), "--headless", "--sessions-dir", str(scratch / "runs"))
        return
    if runnable(spec):
        COUNTS["mutated specs run headless"] += 1
        out = scratch / "runs" / "run-session.toml"
        out.unlink(missing_ok=True)
        cli("run", str(path), "--headless", "--out", str(out))


@settings(FUZZ, max_examples=200)
@given(data=st.binary(max_size=2000) | st.text(max_size=500).map(str.encode))
def test_random_bytes(scratch: Path, data: bytes) -> None:
    COUNTS["random byte files"] += 1
    path = write(scratch, "random.toml", data)
    cli("validate", str(path))
    cli("export", str(path))


WORDS = ["release", "revise", "escalate", "scripted", "a", "b", "author", "critic", "refine"]
TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
LEAF = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
    st.sampled_from(WORDS),
)
VALUE = st.recursive(
    LEAF,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(TEXT | st.sampled_from(WORDS), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(node: Any, here: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if here:
        yield here
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in items:
        yield from _paths(child, (*here, key))


def _replace(doc: dict[str, Any], path: tuple[Any, ...], value: Any, drop: bool) -> None:
    parent: Any = doc
    for key in path[:-1]:
        parent = parent[key]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value


@settings(FUZZ, max_examples=300)
@given(name=st.sampled_from(sorted(SPECS)), data=st.data())
def test_structured_specs(scratch: Path, name: str, data: st.DataObject) -> None:
    """Valid TOML, wrong shapes: any value (or key) replaced by any TOML value."""
    COUNTS["structured specs"] += 1
    doc = tomllib.loads(SPECS[name])
    for _ in range(data.draw(st.integers(1, 3))):
        paths = list(_paths(doc))
        if not paths:  # every key dropped: the empty spec is a case of its own
            break
        path = data.draw(st.sampled_from(paths))
        _replace(doc, path, data.draw(VALUE), data.draw(st.booleans()))
    path = write(scratch, "structured.toml", tomli_w.dumps(doc))
    if cli("validate", str(path)) == 0 and runnable(read_spec_file(path)[0]):
        COUNTS["structured specs run headless"] += 1
        out = scratch / "runs" / "structured-session.toml"
        out.unlink(missing_ok=True)
        cli("run", str(path), "--headless", "--out", str(out))


NEST = st.sampled_from(["array", "table", "dotted", "header", "digits", "mixed"])


def deep(kind: str, n: int) -> str:
    if kind == "array":
        return "x = " + "[" * n + "]" * n
    if kind == "table":
        return "x = " + "{a = " * n + "1" + "}" * n
    if kind == "dotted":
        return "x" + ".x" * n + " = 1"
    if kind == "header":
        return "[x" + '."y"' * n + "]\nz = 1"
    if kind == "digits":
        return "x = " + "9" * n
    return "x = " + "[{a = " * (n // 2) + "1" + "}]" * (n // 2)


@settings(FUZZ, max_examples=150)
@given(kind=NEST, n=st.integers(0, 120) | st.integers(0, 200_000), where=st.floats(0, 1))
def test_deep_structures(scratch: Path, kind: str, n: int, where: float) -> None:
    COUNTS["deep structures"] += 1
    text = SPECS["scripted-consensus.toml"]
    lines = text.split("\n")
    lines.insert(int(where * len(lines)), deep(kind, n))
    cli("validate", str(write(scratch, "deep.toml", "\n".join(lines))))


@pytest.fixture(scope="module")
def session_text(scratch: Path) -> str:
    out = scratch / "base-session.toml"
    spec = write(scratch, "base-spec.toml", SPECS["scripted-adversary.toml"])
    cli("run", str(spec), "--headless", "--out", str(out))
    return out.read_text()


@settings(FUZZ, max_examples=300)
@given(ops=OPS, fmt=st.sampled_from(["json", "markdown"]))
def test_mutated_sessions_export(
    scratch: Path, session_text: str, ops: list[tuple[float, str, str]], fmt: str
) -> None:
    COUNTS["mutated sessions exported"] += 1
    path = write(scratch, "session.toml", mutate(session_text, ops))
    cli("export", str(path), "--format", fmt)


@settings(FUZZ, max_examples=60)
@given(ops=OPS)
def test_mutated_sessions_resume(
    scratch: Path, session_text: str, ops: list[tuple[float, str, str]]
) -> None:
    COUNTS["mutated sessions offered to resume"] += 1
    path = write(scratch, "resume.toml", mutate(session_text, ops))
    for old in scratch.glob("resume.toml.torn-*.bak"):
        old.unlink()
    try:
        data = load_session(path)
    except MootInputError:
        cli("resume", str(path), "--headless")
        return
    if runnable(data.spec):
        COUNTS["mutated sessions resumed headless"] += 1
        cli("resume", str(path), "--headless")


@settings(FUZZ, max_examples=200)
@given(data=st.data())
def test_structured_sessions(scratch: Path, session_text: str, data: st.DataObject) -> None:
    """A valid session file with any value (or key) replaced: export, then resume."""
    COUNTS["structured sessions"] += 1
    doc = tomllib.loads(session_text)
    if data.draw(st.booleans()):
        del doc["result"]  # undecided: resume replays the recorded turns, then goes on
    paths = [p for p in _paths(doc) if p[0] != "spec"]  # the spec copy is fuzzed above
    for _ in range(data.draw(st.integers(1, 2))):
        path = data.draw(st.sampled_from(paths))
        with contextlib.suppress(KeyError, IndexError, TypeError):  # an earlier edit moved it
            _replace(doc, path, data.draw(VALUE), data.draw(st.booleans()))
    path = write(scratch, "structured-session.toml", tomli_w.dumps(doc) + "# moot:commit\n")
    for old in scratch.glob("structured-session.toml.torn-*.bak"):
        old.unlink()
    if cli("export", str(path), "--format", data.draw(st.sampled_from(["json", "markdown"]))) == 0:
        COUNTS["structured sessions resumed headless"] += 1
        cli("resume", str(path), "--headless")


REPLY_PARTS = st.sampled_from(
    [
        '{"stance": "s", "rationale": "r", "vote": "release"}',
        "[" * 50_000,
        "{" * 300,
        '"',
        "\\ud800",
        "\ud800",
        "9" * 5000,
        "```json\n",
        "}",
        ']"',
        "\x00\x1b[2J",
    ]
)


@settings(FUZZ, max_examples=300)
@given(parts=st.lists(REPLY_PARTS | st.text(max_size=30), max_size=8))
def test_model_replies_parse_or_are_refused(parts: list[str]) -> None:
    COUNTS["model replies"] += 1
    with contextlib.suppress(TurnParseError):
        parse_turn("".join(parts), Position, ["release", "revise", "escalate"])


def test_memory_bounded_and_counts_reported() -> None:
    """Runs last in this file: peak memory of the whole fuzz run, and the counts."""
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("\nfuzz counts:", dict(sorted(COUNTS.items())), f"peak RSS {peak_mb:.0f} MB")
    assert peak_mb < 1500
