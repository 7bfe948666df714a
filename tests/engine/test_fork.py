"""``moot fork``: the first N turns in a new file, which resume continues and verify accepts."""

from __future__ import annotations

import asyncio
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.helpers import SCRIPTED
from tui.cli import main
from tui.engine.basics.vocab import OperatorAction
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.run.events import Event, TurnCompleted
from tui.engine.specs.spec import read_spec_file
from tui.exitcodes import ExitCode


def run(spec: Path, out: Path) -> Path:
    main(["run", str(spec), "--headless", "--out", str(out)])
    return out


def stored_result(path: Path) -> dict[str, Any]:
    """The ``[result]`` as written, without its place in the file's own chain and its signature."""
    with path.open("rb") as f:
        result: dict[str, Any] = tomllib.load(f)["result"]
    result.pop("hash")
    result.pop("signature")
    return result


@pytest.mark.parametrize(
    "example",
    [
        "scripted-consensus.toml",
        "scripted-adversary.toml",
        "scripted-challenge.toml",
        "scripted-refine.toml",
        "scripted-exhausted.toml",
    ],
)
def test_a_fork_with_nothing_changed_reaches_the_same_result(tmp_path: Path, example: str) -> None:
    source = run(EXAMPLES / example, tmp_path / "source.toml")
    turns = len(load_session(source).turns)
    at = turns // 2
    fork = tmp_path / "fork.toml"
    assert main(["fork", str(source), "--at", str(at), "--out", str(fork)]) == ExitCode.DECIDED
    data = load_session(fork)
    assert data.meta["forked_from"] == {"id": "source", "path": str(source), "at": at}
    assert len(data.turns) == at and data.result is None
    assert main(["verify", str(fork)]) == ExitCode.DECIDED  # its chain starts fresh
    main(["resume", str(fork), "--headless"])
    assert stored_result(fork) == stored_result(source)
    assert main(["verify", str(fork)]) == ExitCode.DECIDED


def test_set_changes_the_rest_and_a_model_change_is_a_swap_after_n(tmp_path: Path) -> None:
    source = run(EXAMPLES / "scripted-exhausted.toml", tmp_path / "source.toml")
    source_result = load_session(source).result
    assert source_result is not None and source_result["decision_rule"] == "max_rounds_exhausted"
    fork = tmp_path / "fork.toml"
    code = main(
        [
            "fork",
            str(source),
            "--at",
            "3",
            "--out",
            str(fork),
            "--set",
            "debate.max_rounds=4",
            "--set",
            "debaters.keeper.model=scripted",  # the script goes with the old model
        ]
    )
    assert code == ExitCode.DECIDED
    data = load_session(fork)
    assert data.spec.debate.max_rounds == 4
    assert data.meta["forked_from"]["set"] == [
        "debate.max_rounds=4",
        "debaters.keeper.model=scripted",
    ]
    swap = data.actions[-1]
    assert swap["action"] == OperatorAction.REPLACE_MODEL and swap["after_turn"] == 3
    assert swap["speaker"] == "keeper" and swap["fork"] is True
    main(["resume", str(fork), "--headless"])
    result = load_session(fork).result
    assert result is not None
    assert result["decision_rule"] == "threshold_vote"  # keeper now votes the first vote
    assert main(["verify", str(fork)]) == ExitCode.DECIDED


def test_a_fork_carries_the_documents(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES / "architecture", tmp_path / "architecture")
    spec = tmp_path / "review.toml"
    shutil.copyfile(EXAMPLES / "scripted-architecture-review.toml", spec)
    source = run(spec, tmp_path / "source.toml")
    shutil.rmtree(tmp_path / "architecture")
    fork = tmp_path / "fork.toml"
    assert main(["fork", str(source), "--at", "1", "--out", str(fork)]) == ExitCode.DECIDED
    assert load_session(fork).spec.documents == load_session(source).spec.documents
    main(["resume", str(fork), "--headless"])
    assert stored_result(fork) == stored_result(source)
    assert main(["verify", str(fork)]) == ExitCode.DECIDED


def test_a_fork_takes_the_actions_before_turn_n(tmp_path: Path) -> None:
    spec, raw = read_spec_file(EXAMPLES / "scripted-exhausted.toml")
    source = tmp_path / "source.toml"
    session = LiveSession.start(spec, raw, lambda d: SCRIPTED, out=source)

    def notes(event: Event) -> None:
        if isinstance(event, TurnCompleted) and event.turn.index in (1, 4):
            session.engine.note(f"after turn {event.turn.index}")

    session.engine.subscribe(notes)
    try:
        asyncio.run(session.engine.run())
    finally:
        session.close()
    assert [a["after_turn"] for a in load_session(source).actions] == [1, 4]
    fork = tmp_path / "fork.toml"
    main(["fork", str(source), "--at", "3", "--out", str(fork)])
    kept = load_session(fork).actions
    assert [(a["after_turn"], a["text"]) for a in kept] == [(1, "after turn 1")]
    assert main(["verify", str(fork)]) == ExitCode.DECIDED


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--at", "99"], "--at"),
        (["--at", "-1"], "--at"),
        (["--at", "2", "--set", "debaters.nobody.model=local"], "--set"),
        (["--at", "2", "--set", "debate.max_rounds=0"], "--set"),
        (["--at", "2", "--set", "max_rounds"], "--set"),
        (["--at", "2", "--set", "debate.artifact=Other."], "--set"),
    ],
)
def test_bad_forks_exit_2_and_write_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    named: str,
) -> None:
    source = run(EXAMPLES / "scripted-exhausted.toml", tmp_path / "source.toml")
    fork = tmp_path / "fork.toml"
    capsys.readouterr()
    assert main(["fork", str(source), *args, "--out", str(fork)]) == ExitCode.BAD_INPUT
    assert f"moot: {named}:" in capsys.readouterr().err
    assert not fork.exists()


def test_verify_names_a_fork_point_past_the_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = run(EXAMPLES / "scripted-exhausted.toml", tmp_path / "source.toml")
    fork = tmp_path / "fork.toml"
    main(["fork", str(source), "--at", "2", "--out", str(fork)])
    fork.write_text(fork.read_text().replace("at = 2\n", "at = 9\n"))
    capsys.readouterr()
    assert main(["verify", str(fork)]) == ExitCode.VERIFY_FAILED
    assert "session: forked_from:" in capsys.readouterr().out


def test_a_fork_never_replaces_a_file(tmp_path: Path) -> None:
    source = run(EXAMPLES / "scripted-exhausted.toml", tmp_path / "source.toml")
    taken = tmp_path / "taken.toml"
    taken.write_text("mine")
    assert main(["fork", str(source), "--at", "1", "--out", str(taken)]) == ExitCode.BAD_INPUT
    assert taken.read_text() == "mine"
    assert main(["fork", str(source), "--at", "1"]) == ExitCode.DECIDED
    assert (tmp_path / "source-fork1.toml").exists()
