"""``moot bench``: the harness checked against theory with ``oracle:P``, exact call
counts, reruns that ask for nothing, Ctrl+C that keeps what finished, and debate
sessions that verify."""

from __future__ import annotations

import json
import math
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tui.bench.oracle import Oracle, OracleOdds
from tui.bench.report import wilson
from tui.bench.tasks import Arithmetic, task_named
from tui.cli import main
from tui.engine.basics.errors import MootInputError
from tui.engine.core.ports import ProviderError
from tui.engine.record.verify import verify_file
from tui.exitcodes import ExitCode

ROOT = Path(__file__).resolve().parents[2]


def bench(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """``moot bench ... --json``: stdout must be exactly one JSON object."""
    code = main(["bench", *args, "--json"])
    out = capsys.readouterr().out
    assert code == ExitCode.DECIDED, out
    result: dict[str, Any] = json.loads(out)
    return result


def within_three_se(accuracy: float, p: float, n: int) -> bool:
    return abs(accuracy - p) <= 3 * math.sqrt(p * (1 - p) / n)


def test_oracle_single_and_vote_of_three_land_on_theory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    n = 1000
    result = bench(capsys, "--model", "oracle:0.6", "--items", str(n), "--arms", "single,vote")
    single, vote = result["arms"]["single"], result["arms"]["vote"]
    assert result["items"] == n and single["items"] == vote["items"] == n
    assert within_three_se(single["accuracy"], 0.6, n), single
    assert within_three_se(vote["accuracy"], 3 * 0.6**2 - 2 * 0.6**3, n), vote  # 0.648
    assert (single["calls"], vote["calls"]) == (n, 3 * n)
    assert result["new_calls"] == 4 * n
    lo, hi = vote["ci95"]
    assert lo < vote["accuracy"] < hi


def test_calls_are_exact_a_rerun_asks_nothing_and_sessions_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n, out = 24, tmp_path / "run"
    args = ("--model", "oracle:0.6", "--items", str(n), "--out", str(out), "--seed", "7")
    first = bench(capsys, *args)
    calls = {arm: f["calls"] for arm, f in first["arms"].items()}
    assert calls == {"single": n, "vote": 3 * n, "debate": 6 * n}
    assert first["new_calls"] == 10 * n
    debate = first["arms"]["debate"]
    assert debate["wrong_to_right"] + debate["right_to_wrong"] > 0
    assert 1 / 3 <= debate["agreement"] <= 1

    again = bench(capsys, *args)
    assert again["new_calls"] == 0
    assert again["arms"] == first["arms"]

    lines = (out / "items.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 3 * n
    sessions = sorted((out / "sessions").glob("*.toml"))
    assert len(sessions) == n
    for path in random.Random(1).sample(sessions, 6):
        report = verify_file(path)
        assert report.ok, [c.detail for c in report.failures]
        assert any(c.field == "vote" and "number normaliser" in c.detail for c in report.claims)
    assert (out / "plot.svg").read_text("utf-8").startswith("<svg")


def test_more_items_and_another_arm_run_only_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "run")
    bench(capsys, "--model", "oracle:0.5", "--items", "10", "--arms", "single", "--out", out)
    grown = bench(
        capsys, "--model", "oracle:0.5", "--items", "15", "--arms", "single,vote", "--out", out
    )
    assert grown["new_calls"] == 5 + 3 * 15


def test_ctrl_c_keeps_finished_items_and_the_rerun_finishes_the_same_bench(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["--model", "oracle:0.7", "--items", "12", "--concurrency", "2"]
    whole = bench(capsys, *args, "--out", str(tmp_path / "whole"))

    real = Oracle.complete
    asked = {"n": 0}

    async def interrupted(self: Oracle, request: Any, on_token: Any) -> Any:
        asked["n"] += 1
        if asked["n"] == 40:  # mid-run: some items done, a debate half-played
            raise KeyboardInterrupt
        return await real(self, request, on_token)

    out = tmp_path / "cut"
    monkeypatch.setattr(Oracle, "complete", interrupted)
    assert main(["bench", *args, "--out", str(out), "--json"]) == ExitCode.INTERRUPTED
    err = capsys.readouterr().err
    assert "finished items are kept in" in err
    kept = (out / "items.jsonl").read_text("utf-8").splitlines()
    assert 0 < len(kept) < 36
    monkeypatch.setattr(Oracle, "complete", real)

    rest = bench(capsys, *args, "--out", str(out))
    assert 0 < rest["new_calls"] < whole["new_calls"]
    assert rest["arms"] == whole["arms"]  # the same draws: nothing lost, nothing counted twice
    for path in (out / "sessions").glob("*.toml"):
        assert verify_file(path).ok, path


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_json_bench_prints_its_one_object_saying_so(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    sig: signal.Signals,
) -> None:
    """``--json`` stopped mid-run: stdout is still exactly one JSON object, status
    ``interrupted``, with the figures of what finished; no "session is saved" line."""
    real = Oracle.complete
    asked = {"n": 0}

    async def interrupted(self: Oracle, request: Any, on_token: Any) -> Any:
        asked["n"] += 1
        if asked["n"] == 40:  # mid-run: some items done, a debate half-played
            signal.raise_signal(sig)
        return await real(self, request, on_token)

    monkeypatch.setattr(Oracle, "complete", interrupted)
    unhandled: list[int] = []  # the test process outlives a bench that leaves SIGTERM be
    previous = signal.signal(signal.SIGTERM, lambda *_: unhandled.append(1))
    # As a run in the foreground starts (a test run in the background starts with it ignored).
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        out = tmp_path / "cut"
        args = ["--model", "oracle:0.7", "--items", "12", "--concurrency", "2"]
        code = main(["bench", *args, "--out", str(out), "--json"])
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
    printed = capsys.readouterr()
    assert not unhandled, "SIGTERM did not stop the bench"
    assert code == ExitCode.INTERRUPTED
    result = json.loads(printed.out)  # stdout: the one object and nothing else
    assert result["status"] == "interrupted"
    kept = (out / "items.jsonl").read_text("utf-8").splitlines()
    assert sum(arm["items"] for arm in result["arms"].values()) == len(kept) > 0
    assert "session is saved" not in printed.err
    assert "finished items are kept in" in printed.err


def test_the_oracle_is_right_with_p_and_its_wrong_answers_never_coincide() -> None:
    task = Arithmetic(0)
    item = task.item(3)
    wrong = Oracle(task, item, OracleOdds(0.0), 0)
    answers = [wrong.answer(agent, rnd) for agent in range(1, 8) for rnd in range(1, 5)]
    assert len(set(answers)) == len(answers)
    assert not any(task.correct(item, a) for a in answers)
    right = Oracle(task, item, OracleOdds(1.0), 0)
    assert all(task.correct(item, right.answer(a, 1)) for a in range(1, 5))
    assert Oracle(task, item, OracleOdds(0.5), 0).answer(2, 2) == Oracle(
        task, item, OracleOdds(0.5), 0
    ).answer(2, 2)


def test_arithmetic_items_are_du_et_al_with_exact_answers() -> None:
    task = Arithmetic(5)
    for index in range(50):
        item = task.item(index)
        expression = item.question.split("result of ")[1].split("?")[0]
        assert len([c for c in expression if c in "+-*"]) == 5
        assert int(item.answer) == eval(expression)  # noqa: S307 - digits and + - * only
    assert task.item(4) == Arithmetic(5).item(4) != Arithmetic(6).item(4)
    item = task.item(0)
    assert task.correct(item, f"Adding it up, the result is {item.answer}.")
    assert not task.correct(item, "I cannot tell.")


def test_wilson_interval_matches_known_values() -> None:
    lo, hi = wilson(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775
    assert wilson(0, 0) == (0.0, 1.0)


# reasoning-gym takes 6 s of CPU to import: one worker runs the tests that load it.
GYM = pytest.mark.xdist_group("reasoning-gym")


@GYM
def test_a_reasoning_gym_task_is_generated_and_scored_by_its_own_checker(
    capsys: pytest.CaptureFixture[str],
) -> None:
    task = task_named("basic_arithmetic", 3)
    item = task.item(2)
    assert task.correct(item, item.answer) and not task.correct(item, task.wrong(item, 1))
    assert task.item(70).question  # past the first block the dataset is grown, same seed
    perfect = bench(capsys, "--task", "basic_arithmetic", "--model", "oracle:1", "--items", "5")
    assert all(f["accuracy"] == 1.0 for f in perfect["arms"].values())
    hopeless = bench(capsys, "--task", "basic_arithmetic", "--model", "oracle:0", "--items", "5")
    assert all(f["accuracy"] == 0.0 for f in hopeless["arms"].values())


def test_reasoning_gym_is_never_imported_for_the_built_in_task(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from tui.cli import main\n"
        "code = main(['bench', '--model', 'oracle:1', '--items', '2', '--json'])\n"
        "assert code == 0 and 'reasoning_gym' not in sys.modules, sorted(sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_without_the_bench_extra_a_gym_task_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "reasoning_gym", None)  # as if not installed
    with pytest.raises(MootInputError) as info:
        task_named("basic_arithmetic", 0)
    assert "moot[bench]" in info.value.problems[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "oracle:1.5"], "oracle:P needs P between 0 and 1"),
        (["--arms", "single,chorus"], "expected some of single, vote, debate"),
        pytest.param(["--task", "no_such_dataset"], "not a reasoning-gym dataset", marks=GYM),
        (["--agents", "65"], "at most 64 agents"),
        (["--items", "100001"], "at most 100,000 items"),
    ],
)
def test_bad_flags_get_a_clear_message_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "--model", "oracle:1", "--items", "2", *args]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_model_that_cannot_start_is_named_before_any_item_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "run"
    code = main(["bench", "--model", "openai/gpt-4o-mini", "--items", "2", "--out", str(out)])
    assert code == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "--model openai/gpt-4o-mini" in err and "OPENAI_API_KEY" in err
    assert not out.exists()  # nothing written for a bench that could not start


def test_an_out_folder_of_another_bench_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "run")
    bench(capsys, "--model", "oracle:0.5", "--items", "2", "--out", out)
    code = main(["bench", "--model", "oracle:0.5", "--items", "2", "--out", out, "--seed", "1"])
    assert code == ExitCode.BAD_INPUT
    assert "holds another bench: seed 0 (now 1)" in capsys.readouterr().err


def test_piped_output_has_plain_progress_lines_the_table_and_the_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code = main(["bench", "--model", "oracle:1", "--items", "3", "--out", str(out)])
    assert code == ExitCode.DECIDED
    text = capsys.readouterr().out
    assert "[1/9] item 0 single: right" in text and "\x1b[" not in text
    assert "debate" in text and "100.0%" in text and "calls per item" in text
    assert "new calls: 30" in text


@pytest.mark.local_model
@pytest.mark.xdist_group("llama")
def test_the_embedded_model_completes_a_one_item_bench(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``./dev.sh bench``'s arms on one item, on the embedded model: a single answer and a
    debate of two agents over two rounds (5 calls). The scripted and oracle tests above
    cover the bench's logic over many items and the default 3 x 2; this one that the real
    model's answers flow through both arms, which one item and two agents show as well as
    the default three agents (7 calls took this test 101 s in a full run; 5 take 12 s alone)."""
    out = tmp_path / "local"
    result = bench(
        capsys,
        *("--model", "local", "--items", "1", "--arms", "single,debate"),
        *("--agents", "2", "--rounds", "2", "--concurrency", "1", "--out", str(out)),
    )
    single, debate = result["arms"]["single"], result["arms"]["debate"]
    assert (single["items"], debate["items"]) == (1, 1)
    assert (single["calls"], debate["calls"]) == (1, 4) and result["new_calls"] == 5
    assert single["failed_calls"] == debate["failed_calls"] == 0
    assert single["tokens"] > 0 and debate["tokens"] > 0  # the model was asked, and answered
    sessions = sorted((out / "sessions").glob("*.toml"))
    assert len(sessions) == 1  # the debate's, which verify replays
    for path in sessions:
        report = verify_file(path)
        assert report.ok, [c.detail for c in report.failures]


def test_a_failed_call_counts_as_no_answer_and_is_reported(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Oracle.complete

    async def flaky(self: Oracle, request: Any, on_token: Any) -> Any:
        if request.debater.id == "a1":
            raise ProviderError("timeout", "no answer within 120s")
        return await real(self, request, on_token)

    monkeypatch.setattr(Oracle, "complete", flaky)
    result = bench(capsys, "--model", "oracle:1", "--items", "4", "--arms", "single,vote")
    single, vote = result["arms"]["single"], result["arms"]["vote"]
    assert (single["accuracy"], single["no_answer"], single["failed_calls"]) == (0.0, 4, 4)
    assert (vote["accuracy"], vote["failed_calls"], vote["calls"]) == (1.0, 4, 12)
    assert main(["bench", "--model", "oracle:1", "--items", "4", "--arms", "single"]) == 0
    assert "4 calls failed (provider errors)" in capsys.readouterr().out
