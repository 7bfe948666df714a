"""Budgets count lookups: ``max_lookups`` and ``max_lookup_bytes`` in ``[budget]`` and
``[debaters.budget]``, checked before each lookup, refusals on record, re-counted by verify."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_lookups import DESIGN, challenge_raw, reviewer_turn, run, turns_of
from tui.engine import validate_spec
from tui.engine.basics.errors import SpecError
from tui.engine.record.verify import verify_file

READ = {"tool": "files", "call": "read", "args": {"path": "design.md"}}
LIST = {"tool": "files", "call": "list", "args": {"path": "."}}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text(DESIGN)
    return tmp_path


def two_rounds(budget: dict[str, Any], where: str = "session") -> dict[str, Any]:
    """The grounded review over two rounds, the reviewer asking three lookups a turn."""
    turn = reviewer_turn("Payments deduplicates on the event id", [READ, LIST, READ])
    raw = challenge_raw(turn)
    raw["debate"]["max_rounds"] = 2
    raw["debaters"][1]["script"]["turns"] = [turn, turn]
    if where == "session":
        raw["budget"] = budget
    else:
        raw["debaters"][1]["budget"] = budget
    return raw


def lookups(path: Path) -> list[dict[str, Any]]:
    return [lk for t in turns_of(path) if t.speaker == "reviewer" for lk in t.lookups or []]


@pytest.mark.parametrize("where", ["session", "debater"])
def test_lookups_past_max_lookups_are_refused_on_record(folder: Path, where: str) -> None:
    path = run(two_rounds({"max_lookups": 4}, where), folder)
    done = lookups(path)
    assert [lk["ok"] for lk in done] == [True, True, True, True, False, False]
    key = "budget.max_lookups" if where == "session" else "debaters.reviewer.budget.max_lookups"
    assert done[4]["reason"] == f"over the budget of {key} = 4 (4 spent)"
    assert "ms" not in done[4]  # refused before it ran
    assert len(turns_of(path)) == 4  # the debate went on
    assert verify_file(path).ok


def test_lookup_bytes_are_capped_a_result_cut_to_what_is_left(folder: Path) -> None:
    design = DESIGN + "Notes.\n" * 100
    (folder / "docs" / "design.md").write_text(design)
    size = len(design.encode())
    listed = f"design.md ({size} bytes)"
    cap = size + len(listed) + 400  # the read and the listing fit; the second read is cut
    path = run(two_rounds({"max_lookup_bytes": cap}), folder)
    done = lookups(path)
    first, listing, cut = done[:3]
    assert first["ok"] and first["bytes"] == size and listing["result"] == listed
    assert cut["ok"] and cut.get("cut") is True and cut["bytes"] <= 400
    assert sum(lk["bytes"] for lk in done if lk["ok"]) <= cap
    later = done[3:]
    assert [lk["ok"] for lk in later] == [False, False, False]
    for refused in later:  # too little is left for any result: refused or not kept
        assert "budget of budget.max_lookup_bytes" in refused["reason"], refused
    assert verify_file(path).ok


def test_verify_recounts_the_lookups_against_the_budget(folder: Path) -> None:
    path = run(two_rounds({"max_lookups": 6}), folder)
    assert verify_file(path).ok
    text = path.read_text()
    lowered = text.replace("max_lookups = 6", "max_lookups = 5", 1)
    assert lowered != text
    path.write_text(lowered)  # the chain breaks too; the budget claim must fail on its own
    failed = {(c.where, c.field): c.detail for c in verify_file(path).failures}
    assert failed[("session", "lookup budget")] == "6 lookups ran, over budget.max_lookups = 5"


def test_lookup_caps_are_checked_in_the_spec() -> None:
    raw = challenge_raw(reviewer_turn("x"))
    raw["budget"] = {"max_lookups": 0, "max_lookup_bytes": -1}
    with pytest.raises(SpecError) as err:
        validate_spec(raw)
    assert "budget.max_lookups" in str(err.value) and "budget.max_lookup_bytes" in str(err.value)


def test_a_resumed_run_starts_from_the_lookups_its_file_spent(folder: Path) -> None:
    import asyncio

    from tests.commands.test_lookups_runs import keep_records
    from tests.helpers import SCRIPTED
    from tui.engine.record.live import LiveSession
    from tui.tools.toolbox import RunTools

    raw = two_rounds({"max_lookups": 4})
    path = run(raw, folder)
    keep_records(path, 3)  # the header and the first round: three lookups spent
    tools = RunTools(validate_spec(raw), folder)
    live = LiveSession.resume(path, lambda d: SCRIPTED, tools=tools)

    async def go() -> None:
        try:
            await live.engine.run()
        finally:
            await tools.aclose()

    try:
        asyncio.run(go())
    finally:
        live.close()
    assert [lk["ok"] for lk in lookups(path)] == [True, True, True, True, False, False]
    assert verify_file(path).ok
