"""``moot export --format adr``: the MADR sections for every protocol, from the file alone."""

from __future__ import annotations

import asyncio
import re
import shutil
import tomllib
from datetime import date
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.helpers import SCRIPTED, debate_raw
from tui.cli import main
from tui.engine import validate_spec
from tui.engine.record.live import LiveSession
from tui.exitcodes import ExitCode

SECTIONS = (
    "---\nstatus: ",
    "\ndecision-makers:\n",
    "\n---\n\n# ",
    "- Status: ",
    "- Deciders: ",
    "## Context and Problem Statement",
    "## Considered Options",
    '## Decision Outcome\n\nChosen option: "',
    "### Consequences",
    "### Confirmation",
    "## More Information",
    "### Dissent",
    "### Evidence",
)


def adr(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["export", str(path), "--format", "adr"]) == ExitCode.DECIDED
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("example", "status", "makers"),
    [
        ("scripted-consensus.toml", "rejected", ["planner", "critic", "sre"]),
        ("scripted-exhausted.toml", "proposed", ["builder", "keeper", "skeptic"]),
        ("scripted-adversary.toml", "accepted", ["author", "red-team"]),
        ("scripted-challenge.toml", "accepted", ["red-team"]),
        ("scripted-refine.toml", "accepted", ["judge-1", "judge-2", "judge-3"]),
        ("scripted-rubric.toml", "accepted", ["author", "verifier"]),
    ],
)
def test_every_protocol_gets_every_madr_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], example: str, status: str, makers: list[str]
) -> None:
    out = tmp_path / "s.toml"
    main(["run", str(EXAMPLES / example), "--headless", "--out", str(out)])
    text = adr(out, capsys)
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions)  # in MADR order
    front, body = text.split("\n---\n", 1)
    day = date.today().isoformat()
    listed = "".join(f'\n    - "{m}"' for m in makers)
    assert front == f"---\nstatus: {status}\ndate: {day}\ndecision-makers:{listed}\n"
    assert f"- Status: {status}\n- Deciders: {', '.join(makers)}\n- Date: {day}\n" in body
    assert "`moot verify s.toml` re-checks this record from the session file: all" in text
    assert "- Session file: `s.toml`" in text and str(tmp_path) not in text  # no absolute path
    options = text.split("## Considered Options")[1].split("## Decision Outcome")[0]
    assert '\n- "' in options and "held by `" in options
    consequences = text.split("### Consequences")[1].split("### Confirmation")[0]
    items = [line for line in consequences.splitlines() if line.startswith("- ")]
    assert items and all(re.match(r"- (Good|Bad|Neutral), because ", i) for i in items)


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
    consequences = text.split("### Consequences")[1].split("### Confirmation")[0]
    assert "- Good, because C1.1 (critical) was addressed: " in consequences
    evidence = text.split("### Evidence")[1]
    assert "`context_quote` from `slo` line 5:" in evidence
    assert "within 30 seconds" not in evidence  # refused evidence is not listed
    assert "because the adversary left no objection open (decision `release`, rule " in text
    # The revised design is chosen; its title says which of the two "Design: ..." it is.
    title = "Design: payment capture through a transactional outbox"
    assert f'\n\nChosen option: "{title} (turn 2)", because ' in text
    assert f'- "{title} (the spec)", held by `owner` (the spec)' in text


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
    assert "- Status: rejected\n- Deciders: operator\n" in text
    assert 'decision-makers:\n    - "operator"\n' in text
    assert "because the operator decided so (decision `revise`, rule `operator_decision`" in text
    assert "Operator's rationale:\n\n> The rollback is untested." in text
    assert "- `a` voted `release`" in text.split("### Dissent")[1]
    consequences = text.split("### Consequences")[1].split("### Confirmation")[0]
    assert "- Good, because The rollback is untested. (the operator's rationale)" in consequences
    assert "raised by `b` against `a` in turn" in consequences
    assert "answered by `a` in turn" in consequences
    # Model text cannot open a heading, HTML or a list inside the record.
    assert "\n# Ship" not in text and re.search(r"(?<!\\)<b>", text) is None
    assert "> \\# Ship \\<b>now\\</b>" in text and "> \\- and \\| fast" in text


def test_a_weakness_is_answered_only_by_a_turn_that_saw_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Speaking again is not answering: consensus positions never see the critiques."""
    out = tmp_path / "s.toml"
    main(["run", str(EXAMPLES / "scripted-exhausted.toml"), "--headless", "--out", str(out)])
    turns = tomllib.loads(out.read_text("utf-8"))["turns"]
    assert [t["phase"] for t in turns[12:]] == ["critique"] * 3 + ["consensus"] * 3
    consequences = adr(out, capsys).split("### Consequences")[1].split("### Confirmation")[0]
    raised = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(
            r"in turn (\d+); (not answered|answered by `\w+` in turn \d+)", consequences
        )
    }
    # Round 1's critiques are seen by round 2's proposals (turns 10 to 12);
    # round 2's are followed only by consensus turns, which do not show them.
    assert raised == {
        4: "answered by `keeper` in turn 11",
        5: "answered by `skeptic` in turn 12",
        6: "answered by `builder` in turn 10",
        13: "not answered",
        14: "not answered",
        15: "not answered",
    }
    assert "critique:r1:builder" in turns[10]["saw"]  # what the record relies on


def test_the_chosen_option_is_the_winning_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.toml"
    main(["run", str(EXAMPLES / "scripted-refine.toml"), "--headless", "--out", str(out)])
    text = adr(out, capsys)
    assert (
        '\n\nChosen option: "Event-source the order state machine, project a CRUD read model'
        in text
    )
    assert "because the judges preferred it in enough rounds in a row" in text
    consequences = text.split("### Consequences")[1].split("### Confirmation")[0]
    assert "- Good, because The incumbent (turn 4, synth) names where events stop" in consequences
    assert "X names" not in text and "judge-3: The challenger (turn 16, synth)" in text


def test_an_unfinished_session_is_proposed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=1)
    path = tmp_path / "open.toml"
    LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=path).close()
    text = adr(path, capsys)
    assert text.startswith("---\nstatus: proposed\n") and "\n- Status: proposed\n" in text
    assert '\n\nChosen option: "none yet", because the session has not ended' in text
    assert "- Neutral, because no argument, weakness or risk was recorded." in text


def test_a_deferred_decision_names_no_option_and_keeps_the_rationale_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.batch_specs import unresolved
    from tests.commands.test_inbox import run_specs

    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    capsys.readouterr()
    defer = ["decide", str(target), "--vote", "escalate", "--rationale", "Ask finance first."]
    assert main(defer) == ExitCode.UNRESOLVED
    text = adr(target, capsys)
    assert 'Chosen option: "escalate"' not in text
    assert 'Chosen option: "none yet", because' in text and "no option was chosen" in text
    assert "- Good, because Ask finance first. (the operator's rationale)" in text


def test_a_reply_identical_to_an_earlier_turn_answers_no_critique(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`a` says the very same thing every turn: its revisions saw `b`'s critiques but
    repeat its first position word for word, so neither critique counts as answered."""
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=2)
    script = raw["debaters"][0]["script"]
    script["stances"] = ["Ship it behind a flag, with a staged rollout."]
    script["rationales"] = ["The flag lets us turn it off in seconds if errors rise."]
    path = tmp_path / "repeat.toml"
    session = LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=path)
    try:
        asyncio.run(session.engine.run())
    finally:
        session.close()
    consequences = adr(path, capsys).split("### Consequences")[1].split("### Confirmation")[0]
    against_a = [
        m.group(2)
        for m in re.finditer(r"raised by `b` against `a` in turn (\d+); ([^)]*)\)", consequences)
    ]
    assert against_a == [
        "not answered: `a` repeated turn 1 word for word in turn 5",
        "not answered: `a` repeated turn 1 word for word in turn 13",
    ], consequences
    against_b = re.findall(r"raised by `a` against `b` in turn \d+; ([^)]*)\)", consequences)
    assert len(against_b) == 2 and all(s.startswith("answered by `b`") for s in against_b)
