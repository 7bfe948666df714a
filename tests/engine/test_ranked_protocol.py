"""The sixth protocol, ``ranked``, shipped from outside moot as its own package.

examples/protocols/ranked is installed into the test environment from uv.lock (a
path dependency of the dev extra) and found only through its ``moot.protocols``
entry point: these tests run it end to end as a user would (headless, in a batch,
in the console), export it, and have ``moot verify`` recount its ranks.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from tests.app.app_support import make_app, plain, wait_until
from tests.engine.test_verify_session import failed, rewrite, verify
from tests.export_schema import validate_export
from tests.helpers import run_engine
from tui.app.components.cards import TurnCard
from tui.cli import main
from tui.engine.protocols import ENTRY_POINT_GROUP, PROTOCOLS, REFUSED
from tui.engine.record.session import load_session
from tui.exitcodes import ExitCode

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "examples" / "protocols" / "ranked"
EXAMPLE = PACKAGE / "moot_ranked" / "example.toml"
OPTIONS = ["postgres", "s3", "kafka"]


def run_example(tmp_path: Path) -> Path:
    session = tmp_path / "ranked.toml"
    assert main(["run", str(EXAMPLE), "--headless", "--out", str(session)]) == ExitCode.DECIDED
    return session


def ranked_spec(*orders: list[str], **debate: Any) -> dict[str, Any]:
    """A scripted ranked debate: one debater per order, each giving it with reasons."""
    return {
        "debate": {
            "title": "T",
            "motion": "Which one?",
            "protocol": "ranked",
            "votes": ["a", "b", "c"],
            **debate,
        },
        "debaters": [
            {
                "id": f"d{i}",
                "model": "scripted",
                "script": {
                    "turns": [
                        {
                            "ranking": [
                                {"option": o, "reason": f"d{i} weighs option {o} as rank {p}."}
                                for p, o in enumerate(order, 1)
                            ]
                        }
                    ]
                },
            }
            for i, order in enumerate(orders, 1)
        ],
    }


def test_the_installed_entry_point_registers_ranked() -> None:
    points = {p.name: p.value for p in entry_points(group=ENTRY_POINT_GROUP)}
    assert points["ranked"] == "moot_ranked.ranked:RankedProtocol"
    assert "ranked" not in REFUSED
    protocol = PROTOCOLS["ranked"]
    assert protocol.__module__ == "moot_ranked.ranked"
    assert set(protocol.turn_kinds) == {"ranking"}


def test_a_fresh_moot_lists_it_and_runs_its_example_headless(tmp_path: Path) -> None:
    def moot(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tui", *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )

    assert "ranked" in moot("run", "--help").stdout + moot("--help").stdout
    session = tmp_path / "out.toml"
    run = moot("run", str(EXAMPLE), "--headless", "--out", str(session))
    assert run.returncode == ExitCode.DECIDED, run.stderr
    assert "postgres > s3 > kafka" in run.stdout  # the ranking as its protocol presents it
    assert "decision: postgres  (borda_count, by rule)" in run.stdout
    assert "Traceback" not in run.stderr


def test_borda_decides_with_the_condorcet_winner_beside_it(tmp_path: Path) -> None:
    result = load_session(run_example(tmp_path)).result
    assert result is not None
    assert (result["decision"], result["decision_rule"]) == ("postgres", "borda_count")
    # First choices tie 1-1-1; the points (2 for a first place, 1, 0) do not.
    assert result["borda"] == {"postgres": 4, "s3": 3, "kafka": 2}
    assert result["condorcet_winner"] == "postgres"
    assert result["rankings_counted"] == 3
    assert "Condorcet winner" in result["tie_rule"] and "listed first" in result["tie_rule"]


def test_a_tie_without_a_condorcet_winner_goes_to_the_option_listed_first() -> None:
    # A cycle: a beats b, b beats c, c beats a; every option has 3 points.
    engine, _ = run_engine(ranked_spec(["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]))
    result = dict(engine.result())  # the protocol's own keys are not ResultRecord's
    assert result["borda"] == {"a": 3, "b": 3, "c": 3}
    assert result["condorcet_winner"] == ""
    assert result["decision"] == "a"


def test_a_tie_on_points_goes_to_the_condorcet_winner() -> None:
    # a and c tie on 4 points; c is ranked above a (and b) by two debaters of three.
    engine, _ = run_engine(ranked_spec(["c", "a", "b"], ["c", "a", "b"], ["a", "b", "c"]))
    result = dict(engine.result())  # the protocol's own keys are not ResultRecord's
    assert result["borda"] == {"a": 4, "b": 1, "c": 4}
    assert result["condorcet_winner"] == "c" and result["decision"] == "c"
    # b and c tie on 5 points and head to head (2 against 2): the spec's order decides.
    engine, _ = run_engine(
        ranked_spec(["b", "c", "a"], ["c", "b", "a"], ["b", "a", "c"], ["c", "a", "b"])
    )
    result = dict(engine.result())  # the protocol's own keys are not ResultRecord's
    assert result["borda"] == {"a": 2, "b": 5, "c": 5}
    assert result["condorcet_winner"] == "" and result["decision"] == "b"


def test_a_ranking_that_repeats_an_option_is_refused_on_record() -> None:
    raw = ranked_spec(["a", "a", "b"], ["a", "b", "c"])
    engine, _ = run_engine(raw)
    bad = engine.state.turns[0]
    assert bad.invalid and "a is ranked more than once" in (bad.error or "")
    assert "c is missing" in (bad.error or "")
    assert dict(engine.result())["rankings_counted"] == 1


def test_batch_runs_it(tmp_path: Path) -> None:
    out, summary = tmp_path / "out", tmp_path / "summary.json"
    code = main(["--sessions-dir", str(out), "batch", str(EXAMPLE), "--summary", str(summary)])
    assert code == ExitCode.DECIDED
    rows = json.loads(summary.read_text("utf-8"))
    assert "postgres" in json.dumps(rows)
    (session,) = out.glob("*.toml")
    result = load_session(session).result
    assert result is not None and result["borda"] == {"postgres": 4, "s3": 3, "kafka": 2}


def test_the_exports_carry_the_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = run_example(tmp_path)
    capsys.readouterr()

    def export(fmt: str) -> str:
        assert main(["export", str(session), "--format", fmt]) == ExitCode.DECIDED
        return capsys.readouterr().out

    markdown = export("markdown")
    assert "- Borda count (3 rankings): postgres 4, s3 3, kafka 2" in markdown
    assert "- Condorcet winner: postgres" in markdown
    assert "> **Ranking:** postgres > s3 > kafka" in markdown
    assert "**kafka** #3 — Retention is a setting someone can change" in markdown
    doc = validate_export(export("json"))  # the published schema takes a kind a plugin adds
    assert {t["kind"] for t in doc["turns"]} == {"ranking"}
    assert doc["result"]["borda"] == {"postgres": 4, "s3": 3, "kafka": 2}
    adr = export("adr")
    assert 'Chosen option: "postgres", because it has the highest Borda count' in adr
    assert "- Condorcet winner: postgres" in adr


def test_verify_recounts_the_ranks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = run_example(tmp_path)
    capsys.readouterr()
    code, report = verify(session, capsys)
    assert code == ExitCode.DECIDED and report["ok"] is True
    recounted = {c["field"] for c in report["claims"] if c["where"] == "result"}
    assert {"borda", "condorcet_winner", "borda_winner"} <= recounted


def test_verify_refuses_a_forged_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = run_example(tmp_path)

    def more_for_s3(doc: dict[str, Any]) -> None:
        doc["result"]["borda"]["s3"] = 5
        doc["result"]["borda_winner"] = doc["result"]["decision"] = "s3"

    rewrite(session, more_for_s3)  # re-chained and re-signed, as a forger would
    capsys.readouterr()
    code, report = verify(session, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert {("result", "borda"), ("result", "borda_winner"), ("result", "decision")} <= failed(
        report
    )


def test_verify_refuses_a_tampered_rank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = run_example(tmp_path)

    def swapped(doc: dict[str, Any]) -> None:  # security now ranks postgres last
        rows = doc["turns"][2]["content"]["ranking"]
        rows[1], rows[2] = rows[2], rows[1]

    rewrite(session, swapped)
    capsys.readouterr()
    code, report = verify(session, capsys)
    assert code == ExitCode.VERIFY_FAILED
    # The recorded count no longer follows from the rankings: postgres 3, s3 4.
    assert ("result", "borda") in failed(report)


async def test_the_console_runs_it_live(tmp_path: Path) -> None:
    spec = tmp_path / "ranked.toml"
    spec.write_text(EXAMPLE.read_text("utf-8"), "utf-8")
    app = make_app(tmp_path, spec_path=str(spec))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        decision = screen.decision
        assert (decision.decision, decision.rule) == ("postgres", "borda_count")
        cards = [plain(card) for card in screen.query(TurnCard)]
        assert len(cards) == 3
        assert "postgres > s3 > kafka" in cards[0] and "kafka > postgres > s3" in cards[2]
        await pilot.press("q")
    (session,) = (tmp_path / "sessions").glob("*.toml")
    result = load_session(session).result
    assert result is not None and result["decision"] == "postgres"


def test_nothing_in_moot_names_the_package() -> None:
    words = re.compile(r"moot_ranked|moot-ranked|RankedProtocol|borda|condorcet", re.IGNORECASE)
    hits = [
        f"{path.relative_to(REPO)}:{n}"
        for path in (REPO / "tui").rglob("*.py")
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if words.search(line) or re.search(r"[\"']ranked[\"']", line)
    ]
    assert hits == []
    assert tomllib.loads((PACKAGE / "pyproject.toml").read_text("utf-8"))["project"][
        "entry-points"
    ][ENTRY_POINT_GROUP] == {"ranked": "moot_ranked.ranked:RankedProtocol"}
