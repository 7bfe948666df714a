"""``moot bench --out``: a line of ``items.jsonl`` is believed only when it is this run's,
unedited, its ``correct`` what the checker says, and a debate line what its session says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tui.cli import main
from tui.engine.record.chain import link
from tui.exitcodes import ExitCode

ARGS = ("--model", "oracle:0.65", "--items", "12", "--seed", "3")


def bench(capsys: pytest.CaptureFixture[str], out: Path, *args: str) -> dict[str, Any]:
    code = main(["bench", *ARGS, *args, "--out", str(out), "--json"])
    printed = capsys.readouterr().out
    assert code == ExitCode.DECIDED, printed
    result: dict[str, Any] = json.loads(printed)
    return result


def refused(capsys: pytest.CaptureFixture[str], out: Path, *args: str) -> str:
    """Rerun over ``out``: exit 2, one message, and not a byte of the folder changed."""
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code = main(["bench", *ARGS, *args, "--out", str(out), "--json"])
    captured = capsys.readouterr()
    assert code == ExitCode.BAD_INPUT, captured.out
    assert captured.out == "" and "Traceback" not in captured.err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    return captured.err


def read(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "items.jsonl").read_text("utf-8").splitlines()]


def write(out: Path, lines: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    (out / "items.jsonl").write_text(text, "utf-8")


def forge(out: Path, lines: list[dict[str, Any]]) -> None:
    """Write ``lines`` with the chain recomputed, as one who knows the format would."""
    previous = link("", json.loads((out / "bench.json").read_text("utf-8")))
    for line in lines:
        line["prev"] = previous
        line["hash"] = previous = link(previous, line)
    write(out, lines)


def first(lines: list[dict[str, Any]], arm: str, correct: bool) -> int:
    return next(
        n for n, line in enumerate(lines) if line["arm"] == arm and line["correct"] is correct
    )


def test_debate_lines_edited_to_correct_are_refused_by_line_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    honest = bench(capsys, out, "--arms", "debate")["arms"]["debate"]["accuracy"]
    assert honest < 1.0
    lines = read(out)
    wrong = first(lines, "debate", False)
    for line in lines:
        line["correct"] = True
    write(out, lines)
    err = refused(capsys, out, "--arms", "debate")
    assert f"items.jsonl: 1 problem\n  - line {wrong + 1}: edited after it was written" in err


def test_a_stored_correct_the_checker_disagrees_with_is_refused_even_with_the_chain_redone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    bench(capsys, out, "--arms", "single")
    lines = read(out)
    wrong = first(lines, "single", False)
    lines[wrong]["correct"] = True
    forge(out, lines)
    err = refused(capsys, out, "--arms", "single")
    assert f"line {wrong + 1}: item {lines[wrong]['item']} single" in err
    assert "correct is true but the checker says false" in err


def test_an_edited_answer_with_its_correct_recomputed_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    bench(capsys, out, "--arms", "single,vote")
    lines = read(out)
    wrong = first(lines, "vote", False)
    line = lines[wrong]
    line["answer"] = line["said"] = line["expected"]
    line["correct"] = True
    write(out, lines)
    err = refused(capsys, out, "--arms", "single,vote")
    assert f"items.jsonl: 1 problem\n  - line {wrong + 1}: edited after it was written" in err


def test_a_line_copied_from_another_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    bench(capsys, mine, "--arms", "single")
    bench(capsys, theirs, "--arms", "single", "--items", "13")
    stranger = next(line for line in read(theirs) if line["item"] == 12)
    with (mine / "items.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(stranger) + "\n")
    err = refused(capsys, mine, "--arms", "single", "--items", "13")
    assert f"line 13: from another bench run ({stranger['run']})" in err


def test_a_debate_line_must_say_what_its_session_file_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    bench(capsys, out, "--arms", "debate")
    lines = read(out)
    wrong = first(lines, "debate", False)
    line = lines[wrong]
    line["answer"] = line["said"] = line["expected"]
    line["correct"] = True
    forge(out, lines)  # the lines' chain holds: only the session can tell
    err = refused(capsys, out, "--arms", "debate")
    assert f"line {wrong + 1}: item {line['item']} debate: not what its session" in err
    assert f"item-{line['item']:05d}.toml" in err and "answer" in err


def test_session_files_swapped_between_items_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    bench(capsys, out, "--arms", "debate")
    a, b = out / "sessions" / "item-00000.toml", out / "sessions" / "item-00001.toml"
    first_text, second_text = a.read_bytes(), b.read_bytes()
    a.write_bytes(second_text)
    b.write_bytes(first_text)
    line = next(n for n, line in enumerate(read(out)) if line["item"] in (0, 1))
    err = refused(capsys, out, "--arms", "debate")
    assert f"line {line + 1}:" in err and "not the session this item's debate ran" in err


def test_a_deleted_middle_line_is_refused_at_the_line_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    bench(capsys, out, "--arms", "single,vote")
    lines = read(out)
    del lines[5]
    write(out, lines)
    err = refused(capsys, out, "--arms", "single,vote")
    assert "items.jsonl: 1 problem\n  - line 6: does not follow line 5 (a line was removed" in err


def test_a_line_cut_by_a_crash_is_run_again_and_the_file_stays_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = bench(capsys, tmp_path / "whole")
    out = tmp_path / "run"
    bench(capsys, out)
    path = out / "items.jsonl"
    text = path.read_text("utf-8")
    last = text[:-1].rsplit("\n", 1)[1]
    path.write_text(text[: len(text) - len(last) // 2 - 1], "utf-8")  # killed mid-write
    torn = json.loads(text.splitlines()[-1])
    again = bench(capsys, out)
    assert again["arms"] == whole["arms"]
    calls = {"single": 1, "vote": 3, "debate": 0}[torn["arm"]]  # a debate resumes its session
    assert again["new_calls"] == calls
    assert len(read(out)) == 3 * 12  # the cut bytes went, the line was written again, whole
    assert bench(capsys, out)["new_calls"] == 0


def test_a_finished_folder_resumes_with_no_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    first_run = bench(capsys, out)
    again = bench(capsys, out)
    assert again["new_calls"] == 0 and again["arms"] == first_run["arms"]


def test_a_folder_from_before_lines_were_bound_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    bench(capsys, out, "--arms", "single")
    config = json.loads((out / "bench.json").read_text("utf-8"))
    del config["run"]
    (out / "bench.json").write_text(json.dumps(config), "utf-8")
    write(
        out,
        [{k: v for k, v in line.items() if k not in ("run", "prev", "hash")} for line in read(out)],
    )
    err = refused(capsys, out, "--arms", "single")
    assert "bench.json" in err and "start a new --out folder" in err


def test_debate_sessions_signed_by_a_key_you_do_not_trust_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    bench(capsys, out, "--arms", "debate")
    monkeypatch.setenv("MOOT_CONFIG_DIR", str(tmp_path / "someone else"))
    err = refused(capsys, out, "--arms", "debate")
    assert "line 1:" in err and "is not known to be yours" in err and "not a key you trust" in err
