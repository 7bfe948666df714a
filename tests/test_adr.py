"""``moot export --format adr``: the MADR sections for every protocol, from the file alone."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.helpers import SCRIPTED, debate_raw
from tui.cli import main
from tui.engine import validate_spec
from tui.engine.live import LiveSession
from tui.exitcodes import ExitCode

SECTIONS = (
    "* Status: ",
    "* Deciders: ",
    "## Context and Problem Statement",
    "## Considered Options",
    "## Decision Outcome",
    "### Consequences",
    "### Dissent",
    "### Evidence",
    "## More Information",
)


def adr(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["export", str(path), "--format", "adr"]) == ExitCode.DECIDED
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("example", "status"),
    [
        ("scripted-consensus.toml", "rejected (revise)"),
        ("scripted-exhausted.toml", "escalated"),
        ("scripted-adversary.toml", "accepted"),
        ("scripted-challenge.toml", "accepted"),
        ("scripted-refine.toml", "accepted"),
        ("scripted-rubric.toml", "accepted"),
    ],
)
def test_every_protocol_gets_every_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], example: str, status: str
) -> None:
    out = tmp_path / "s.toml"
    main(["run", str(EXAMPLES / example), "--headless", "--out", str(out)])
    text = adr(out, capsys)
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions)  # in MADR order
    assert f"* Status: {status}\n" in text
    assert text.startswith("# ")
    assert "`moot verify` passes: all" in text
    assert f"- Session file: `{out}`" in text
    options = text.split("## Considered Options")[1].split("## Decision Outcome")[0]
    assert "1. Held by `" in options


def test_the_architecture_review_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(EXAMPLES / "architecture", tmp_path / "architecture")
    spec = tmp_path / "review.toml"
    shutil.copyfile(EXAMPLES / "scripted-architecture-review.toml", spec)
    out = tmp_path / "s.toml"
    main(["run", str(spec), "--headless", "--out", str(out)])
    shutil.rmtree(tmp_path / "architecture")  # the record needs only the session
    text = adr(out, capsys)
    context = text.split("## Context and Problem Statement")[1].split("## Considered")[0]
    assert "> Adopt the transactional-outbox design" in context
    assert "| slo | architecture/orders-slo.md | 347 | `" in context
    assert "| adversary |" in context  # who saw it
    consequences = text.split("### Consequences")[1].split("### Dissent")[0]
    assert "C1.1 (critical, correctness)" in consequences and "— addressed: " in consequences
    evidence = text.split("### Evidence")[1].split("## More Information")[0]
    assert "`context_quote` from `slo` line 5:" in evidence
    assert "within 30 seconds" not in evidence  # refused evidence is not listed
    assert "Decision: **release**, by rule `no_objections`, decided by rule." in text


def test_an_operator_decision_with_dissent_and_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=1)
    raw["debaters"][0]["script"]["stances"] = ["# Ship <b>now</b>\n- and | fast"]
    path = tmp_path / "op.toml"
    session = LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=path)
    try:
        assert asyncio.run(session.engine.run()).decision == "escalate"
        session.engine.decide("revise", "The rollback is untested.")
    finally:
        session.close()
    text = adr(path, capsys)
    assert "* Status: decided by the operator: revise\n" in text
    assert "* Deciders: the operator\n" in text
    assert "Operator's rationale:\n\n> The rollback is untested." in text
    assert "- `a` voted `release`" in text.split("### Dissent")[1]
    consequences = text.split("### Consequences")[1].split("### Dissent")[0]
    assert "raised by `b` in turn" in consequences and "answered by `a` in turn" in consequences
    # Model text cannot open a heading, HTML or a list inside the record.
    assert "\n# Ship" not in text and re.search(r"(?<!\\)<b>", text) is None
    assert "> \\# Ship \\<b>now\\</b>" in text and "> \\- and \\| fast" in text
