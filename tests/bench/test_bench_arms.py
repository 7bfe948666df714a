"""``moot bench``'s adaptive arm, conformity and the oracle gap, each held to its theory
under ``oracle:P`` and ``oracle:P:C`` over 1,000 items, and resumed through ``--out``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tui.bench.oracle import Oracle
from tui.cli import main
from tui.engine.record.chain import link
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.exitcodes import ExitCode

N = 1000


def bench(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = main(["bench", *args, "--json"])
    out = capsys.readouterr().out
    assert code == ExitCode.DECIDED, out
    result: dict[str, Any] = json.loads(out)
    return result


def near(measured: float, theory: float, n: int) -> bool:
    """Within three standard errors of a share ``theory`` measured over ``n`` trials."""
    return abs(measured - theory) <= 3 * math.sqrt(theory * (1 - theory) / n)


# The theory, written out as in docs/bench.md (A >= 2 agents; wrong answers never coincide).


def at_least(n: int, q: float, k: int) -> float:
    """P(at least k of n independent answers are right), each right with probability q."""
    return sum(math.comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(k, n + 1))


def exactly(n: int, q: float, k: int) -> float:
    return math.comb(n, k) * q**k * (1 - q) ** (n - k)


def later(p: float, c: float) -> float:
    """An agent's chance of being right after a round whose plurality was right."""
    return c + (1 - c) * p


def debate_theory(a: int, r: int, p: float, c: float) -> float:
    """s_1 = m(P); s_r = s_(r-1) m(P+) + (1 - s_(r-1)) m(P): the last round's plurality is right."""
    s = at_least(a, p, 2)
    for _ in range(r - 1):
        s = s * at_least(a, later(p, c), 2) + (1 - s) * at_least(a, p, 2)
    return s


def adaptive_theory(a: int, r: int, p: float, c: float) -> tuple[float, float]:
    """(accuracy, calls per item): rounds go on while no strict majority agrees."""
    h = a // 2 + 1

    def value(rounds_left: int, q: float) -> tuple[float, float]:
        right, calls = at_least(a, q, h), float(a)
        if rounds_left > 1:
            for k in range(h):
                go_on, more = value(rounds_left - 1, later(p, c) if k >= 2 else p)
                right += exactly(a, q, k) * go_on
                calls += exactly(a, q, k) * more
        return right, calls

    return value(r, p)


def test_the_issues_example_is_the_adaptive_theory() -> None:
    vote = 3 * 0.6**2 - 2 * 0.6**3
    accuracy, calls = adaptive_theory(3, 2, 0.6, 0.0)
    assert math.isclose(accuracy, vote + (1 - vote) * vote)  # 0.648 + 0.352 x 0.648
    assert round(accuracy, 3) == 0.876
    assert math.isclose(calls, 3 + 3 * (1 - vote))  # the vote is the debate's first round
    assert adaptive_theory(3, 2, 0.6, 0.9) == adaptive_theory(3, 2, 0.6, 0.0)
    assert math.isclose(debate_theory(3, 2, 0.6, 0.0), vote)


def test_oracle_debate_and_adaptive_land_on_theory(capsys: pytest.CaptureFixture[str]) -> None:
    p = 0.6
    result = bench(capsys, "--model", f"oracle:{p}", "--items", str(N), "--arms", "debate,adaptive")
    debate, adaptive = result["arms"]["debate"], result["arms"]["adaptive"]
    vote = at_least(3, p, 2)  # 0.648: without conformity the debate is a vote of three
    assert near(debate["accuracy"], debate_theory(3, 2, p, 0.0), N), debate
    assert math.isclose(debate_theory(3, 2, p, 0.0), vote)
    accuracy, calls = adaptive_theory(3, 2, p, 0.0)
    assert near(adaptive["accuracy"], accuracy, N), adaptive
    go_on = 1 - vote  # calls are 3 or 6: 3 + 3 x Bernoulli(0.352)
    assert abs(adaptive["calls_per_item"] - calls) <= 3 * 3 * math.sqrt(go_on * (1 - go_on) / N)
    assert debate["calls_per_item"] == 6 and 3 <= adaptive["calls_per_item"] < 6

    assert near(debate["oracle_gap"], (1 - vote) - (1 - p) ** 6, N), debate
    assert near(adaptive["oracle_gap"], (1 - accuracy) - (1 - p) ** 6, N), adaptive
    # Under oracle:P an agent lands on the plurality by chance alone: conformity is P.
    assert debate["conform_chances"] > 300
    assert near(debate["conformity"], p, debate["conform_chances"]), debate
    assert adaptive["conform_chances"] == 0 and adaptive["conformity"] is None  # 3 agents


def test_one_round_arms_draw_alike_whatever_c_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """C acts only from round 2, so single and vote keep their oracle:P theory (P, m_K)."""
    kept = {}
    for model in ("oracle:0.6", "oracle:0.6:0.9"):
        out = tmp_path / model.replace(":", "_")
        bench(capsys, "--model", model, "--items", "40", "--arms", "single,vote", "--out", str(out))
        lines = [json.loads(x) for x in (out / "items.jsonl").read_text("utf-8").splitlines()]
        kept[model] = {(x["item"], x["arm"]): (x["votes"], x["gap"]) for x in lines}
    assert kept["oracle:0.6"] == kept["oracle:0.6:0.9"]
    assert any(gap for _, gap in kept["oracle:0.6"].values())  # a vote of three missed a right one


def test_oracle_with_conformity_lands_on_theory(capsys: pytest.CaptureFixture[str]) -> None:
    p, c, a = 0.6, 0.5, 4  # four agents: a 2-1-1 round has a plurality but no majority
    result = bench(
        capsys,
        *("--model", f"oracle:{p}:{c}", "--items", str(N), "--agents", str(a)),
        *("--arms", "debate,adaptive"),
    )
    arms = result["arms"]
    debate = debate_theory(a, 2, p, c)
    assert abs(debate - debate_theory(a, 2, p, 0.0)) > 0.1  # the figure C moves
    assert near(arms["debate"]["accuracy"], debate, N), arms["debate"]
    assert near(arms["debate"]["oracle_gap"], (1 - debate) - (1 - p) ** (2 * a), N)

    accuracy, calls = adaptive_theory(a, 2, p, c)
    assert abs(accuracy - adaptive_theory(a, 2, p, 0.0)[0]) > 0.1
    assert near(arms["adaptive"]["accuracy"], accuracy, N), arms["adaptive"]
    go_on = 1 - at_least(a, p, 3)
    spread = a * math.sqrt(go_on * (1 - go_on) / N)
    assert abs(arms["adaptive"]["calls_per_item"] - calls) <= 3 * spread
    assert near(arms["adaptive"]["oracle_gap"], (1 - accuracy) - (1 - p) ** (2 * a), N)

    for arm in ("debate", "adaptive"):  # a wrong agent takes the (right) plurality: C + (1-C)P
        figures = arms[arm]
        assert figures["conform_chances"] > 100, figures
        assert near(figures["conformity"], later(p, c), figures["conform_chances"]), figures


def test_a_killed_adaptive_run_resumes_with_no_new_calls_for_done_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["--model", "oracle:0.6:0.5", "--items", "12", "--agents", "4", "--concurrency", "2"]
    args += ["--arms", "vote,adaptive"]
    whole = bench(capsys, *args, "--out", str(tmp_path / "whole"))

    real = Oracle.complete
    asked = {"n": 0}

    async def interrupted(self: Oracle, request: Any, on_token: Any) -> Any:
        asked["n"] += 1
        if asked["n"] == 30:
            raise KeyboardInterrupt
        return await real(self, request, on_token)

    out = tmp_path / "cut"
    monkeypatch.setattr(Oracle, "complete", interrupted)
    assert main(["bench", *args, "--out", str(out), "--json"]) == ExitCode.INTERRUPTED
    capsys.readouterr()
    kept = [json.loads(x) for x in (out / "items.jsonl").read_text("utf-8").splitlines()]
    assert any(line["arm"] == "adaptive" for line in kept)
    monkeypatch.setattr(Oracle, "complete", real)
    done = {line["item"] for line in kept if line["arm"] == "adaptive"}
    half_played = [
        load_session(path).turns
        for path in (out / "sessions").glob("*-adaptive.toml")
        if int(path.name[5:10]) not in done
    ]

    rest = bench(capsys, *args, "--out", str(out))
    asked_before = sum(line["calls"] for line in kept) + sum(len(t) for t in half_played)
    assert rest["new_calls"] == whole["new_calls"] - asked_before  # nothing asked twice
    assert rest["arms"] == whole["arms"]
    again = bench(capsys, *args, "--out", str(out))
    assert again["new_calls"] == 0 and again["arms"] == whole["arms"]

    sessions = sorted((out / "sessions").glob("*-adaptive.toml"))
    assert len(sessions) == 12
    for path in sessions:
        report = verify_file(path)
        assert report.ok, [x.detail for x in report.failures]


def test_an_adaptive_line_edited_to_correct_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ("--model", "oracle:0.5", "--items", "12", "--arms", "adaptive", "--out", str(out))
    assert bench(capsys, *args)["arms"]["adaptive"]["accuracy"] < 1
    path = out / "items.jsonl"
    lines = [json.loads(x) for x in path.read_text("utf-8").splitlines()]
    wrong = next(n for n, line in enumerate(lines) if not line["correct"])
    lines[wrong]["correct"] = True
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    assert main(["bench", *args, "--json"]) == ExitCode.BAD_INPUT
    assert f"line {wrong + 1}: edited after it was written" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("oracle:0.6:1.5", "oracle:P:C needs C between 0 and 1"),
        ("oracle:0.6:x", "oracle:P:C needs C between 0 and 1"),
        ("oracle:0.6:0.5:1", "oracle:P or oracle:P:C"),
    ],
)
def test_a_bad_conformity_gets_a_clear_message_and_exit_2(
    model: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "--model", model, "--items", "2"]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_table_shows_the_oracle_gap_and_conformity_per_arm(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["bench", "--model", "oracle:0.6:0.5", "--items", "20", "--arms", "vote,debate"]
    assert main(args) == ExitCode.DECIDED
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if "accuracy" in line and "arm" in line)
    assert "oracle gap" in header and "conformity" in header
    vote_row = next(line for line in text.splitlines() if line.strip().startswith("vote "))
    assert vote_row.rstrip().endswith("–")  # one round: nobody can conform


def test_a_line_from_before_the_oracle_gap_was_kept_says_to_start_a_new_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ("--model", "oracle:0.6", "--items", "3", "--arms", "single", "--out", str(out))
    bench(capsys, *args)
    path = out / "items.jsonl"
    lines = [json.loads(x) for x in path.read_text("utf-8").splitlines()]
    previous = link("", json.loads((out / "bench.json").read_text("utf-8")))
    for line in lines:  # as the bench wrote them before it kept the gap, chain and all
        del line["gap"], line["prev"], line["hash"]
        line["prev"] = previous
        line["hash"] = previous = link(previous, line)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    assert main(["bench", *args, "--json"]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "line 1: item " in err and "kept the oracle gap; start a new --out folder" in err
