"""moot's records as other tools read them: log4brains parses a folder of moot ADRs,
and markdownlint passes the Markdown and ADR exports (long lines aside).

Both tools come from the npm registry at the versions tests/node/package-lock.json
holds, installed by ``npm ci`` in the fixture below when the lock changes. Where
``node`` or ``npm`` is missing these tests skip and say so.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, REPO
from tests.helpers import SCRIPTED, debate_raw
from tests.npm_packages import install, missing_tools
from tui.cli import main
from tui.commands.outcome import record_outcome
from tui.engine import validate_spec
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.render.adr import to_adr
from tui.render.export import to_markdown

# ./dev.sh test: one worker runs these, so two never run `npm ci` in tests/node at once.
pytestmark = pytest.mark.xdist_group("npm")

NODE_DIR = REPO / "tests" / "node"
RUN_TIMEOUT = 120


@pytest.fixture(scope="module")
def node_tools() -> Path:
    """tests/node with its packages installed from the lock (again only when it changed)."""
    if missing := missing_tools():
        pytest.skip(
            f"{' and '.join(missing)} not on PATH: log4brains and markdownlint need Node.js"
        )
    install(NODE_DIR)
    return NODE_DIR


def _node(tools: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=tools, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )


def _run(example: str, out: Path) -> Path:
    main(["run", str(EXAMPLES / example), "--headless", "--out", str(out)])
    return out


def _operator_decision(out: Path, stance: str) -> Path:
    """A debate the rules escalate and the operator decides, with multi-line model text."""
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=1)
    raw["debaters"][0]["script"]["stances"] = [stance]
    session = LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=out)
    try:
        assert asyncio.run(session.engine.run()).decision == "escalate"
        session.engine.decide("revise", "The rollback is untested.")
    finally:
        session.close()
    return out


def _tampered(out: Path) -> Path:
    _run("scripted-exhausted.toml", out)
    said = tomllib.loads(out.read_text("utf-8"))["turns"][3]["content"]["weaknesses"][0]
    out.write_text(out.read_text("utf-8").replace(said, said + " (edited)", 1), "utf-8")
    return out


def _judged(out: Path) -> Path:
    """A decided debate with two outcomes recorded since, the second's note hostile Markdown."""
    _run("scripted-consensus.toml", out)
    record_outcome(out, "failed", "Rolled back in week one.", None)
    record_outcome(out, "mixed", "# Not a heading\n\n| half | held |   \n<b>x</b> *", None)
    return out


def _ragged(out: Path) -> Path:
    """A challenge whose artifact, revision and answers carry model text's ragged edges:
    indented lines (a tab among them) and runs of trailing spaces."""
    raw = tomllib.loads((EXAMPLES / "scripted-challenge.toml").read_text("utf-8"))
    raw["debate"]["artifact"] = (
        "Deploy on Friday at 17:00.   \n    - indented step one\n\tthen a tab   \n"
        "        1. deeper still\n Rollback: restore last night's backup. "
    )
    owner = raw["debaters"][0]["script"]["turns"][0]
    owner["revised_artifact"] = "Deploy on Tuesday.   \n      step two indented  \n\n   Done.   "
    owner["responses"][1]["answer"] = "Moved to Tuesday morning.   \n    indented answer   "
    spec = out.with_suffix(".spec.toml")
    import tomli_w

    spec.write_text(tomli_w.dumps(raw), "utf-8")
    main(["run", str(spec), "--headless", "--out", str(out)])
    return out


def _sessions(tmp_path: Path) -> dict[str, Path]:
    made = {
        name: _run(f"scripted-{name}.toml", tmp_path / f"{name}.toml")
        for name in ("consensus", "exhausted", "adversary", "challenge", "refine", "rubric")
    }
    made["operator"] = _operator_decision(
        tmp_path / "operator.toml", "Ship now.\n\nKeep the flag   \n\n\n- and roll back fast"
    )
    made["tampered"] = _tampered(tmp_path / "tampered.toml")
    made["judged"] = _judged(tmp_path / "judged.toml")
    made["ragged"] = _ragged(tmp_path / "ragged.toml")
    return made


# What log4brains must read from each ADR: MADR's status word and the decision-makers.
EXPECTED: dict[str, tuple[str, list[str]]] = {
    "consensus": ("rejected", ["planner", "critic", "sre"]),  # decided `revise`
    "exhausted": ("proposed", ["builder", "keeper", "skeptic"]),  # escalated: a person decides
    "adversary": ("accepted", ["author", "red-team"]),
    "challenge": ("accepted", ["red-team"]),
    "refine": ("accepted", ["judge-1", "judge-2", "judge-3"]),
    "rubric": ("accepted", ["author", "verifier"]),
    "operator": ("rejected", ["operator"]),
    "tampered": ("proposed", ["builder", "keeper", "skeptic"]),
    "judged": ("rejected", ["planner", "critic", "sre"]),  # consensus, then its outcomes
    "ragged": ("accepted", ["red-team"]),  # the challenge again, its text indented
}


def test_log4brains_reads_each_records_status_and_deciders(
    node_tools: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    adrs = project / "docs" / "adr"
    adrs.mkdir(parents=True)
    (project / ".log4brains.yml").write_text(
        "project:\n  name: moot\n  tz: Etc/UTC\n  adrFolder: ./docs/adr\n", "utf-8"
    )
    titles = {}
    for name, path in _sessions(tmp_path).items():
        data = load_session(path)
        titles[name] = data.spec.debate.title
        (adrs / f"{name}.md").write_text(to_adr(data) + "\n", "utf-8")
    done = _node(node_tools, "node", "check-adrs.mjs", str(project))
    assert done.returncode == 0, done.stderr
    read: dict[str, dict[str, Any]] = {adr["slug"]: adr for adr in json.loads(done.stdout)}
    assert set(read) == set(EXPECTED)
    for name, (status, deciders) in EXPECTED.items():
        got = read[name]
        assert (got["status"], got["deciders"]) == (status, deciders), name
        assert got["title"] == titles[name]
        assert got["publicationDate"] is not None  # the date parsed


def test_markdownlint_passes_the_markdown_and_adr_exports(node_tools: Path, tmp_path: Path) -> None:
    out = tmp_path / "exports"
    out.mkdir()
    for name, path in _sessions(tmp_path).items():
        data = load_session(path)
        (out / f"{name}.md").write_text(to_markdown(data) + "\n", "utf-8")
        (out / f"{name}-adr.md").write_text(to_adr(data) + "\n", "utf-8")
    linted = _node(
        node_tools,
        str(node_tools / "node_modules" / ".bin" / "markdownlint-cli2"),
        "--config",
        str(node_tools / ".markdownlint-cli2.jsonc"),
        f"{out}/*.md",
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert "Linting: 20 file(s)" in linted.stdout + linted.stderr


# markdownlint's MD027 (more than one space after a blockquote's ``>``) and MD009 (a line
# ending in spaces), checked here without Node so they hold on any machine.
_MD027 = re.compile(r"^\s*(?:>\s?)*> {2,}\S|^\s*(?:> ?)*>\t")
_MD009 = re.compile(r"[ \t]+$")


def test_exports_quote_ragged_model_text_without_md027_or_md009(tmp_path: Path) -> None:
    data = load_session(_ragged(tmp_path / "ragged.toml"))
    for name, text in (("markdown", to_markdown(data)), ("adr", to_adr(data))):
        assert "indented step one" in text and "indented answer" in text  # the text is kept
        for n, line in enumerate(text.split("\n"), 1):
            assert not _MD027.search(line), f"{name} line {n}: MD027: {line!r}"
            assert not _MD009.search(line), f"{name} line {n}: MD009: {line!r}"
