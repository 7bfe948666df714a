"""Grounded debaters: lookups through the built-in files tool, on record and verified."""

from __future__ import annotations

import asyncio
import copy
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.helpers import SCRIPTED, run_live
from tui.engine import validate_spec
from tui.engine.core.records import Turn
from tui.engine.grounding.lookups import FILES_CALLS, digest, lookup_schema
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.engine.run.events import Event, LookupsRan
from tui.tools import files as files_module
from tui.tools.files import MAX_FILE_BYTES
from tui.tools.toolbox import RunTools

DESIGN = "The relay publishes at least once.\nPayments deduplicates on the event id for 24 hours.\n"


def challenge_raw(
    reviewer_turn: dict[str, Any], owner_turn: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A one-round challenge whose reviewer may read ``docs`` through the files tool."""
    owner: dict[str, Any] = {"id": "owner", "model": "scripted"}
    if owner_turn is not None:
        owner["script"] = {"turns": [owner_turn]}
    return {
        "debate": {
            "title": "Grounded review",
            "motion": "Adopt the outbox design.",
            "protocol": "challenge",
            "defender": "owner",
            "adversary": "reviewer",
            "artifact": "Adopt the outbox; see the design in docs/design.md.",
            "max_rounds": 1,
            "on_invalid": "continue",
        },
        "rubric": {
            "applies_to": ["adversary"],
            "properties": [
                {
                    "id": "idempotent",
                    "question": "Is a repeated capture harmless?",
                    "admissible": ["tool_quote"],
                },
            ],
        },
        "tools": [{"name": "files", "builtin": "files", "root": "docs", "roles": ["adversary"]}],
        "debaters": [
            owner,
            {
                "id": "reviewer",
                "model": "scripted",
                "family": "other",
                "script": {"turns": [reviewer_turn]},
            },
        ],
    }


def reviewer_turn(quote: str, lookups: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "lookups": lookups
        if lookups is not None
        else [{"tool": "files", "call": "read", "args": {"path": "design.md"}}],
        "verdict": "objections",
        "challenges": [
            {
                "category": "correctness",
                "concern": "A replay after a day charges twice.",
                "evidence": "deduplicates on the event id for 24 hours",
                "severity": "critical",
                "recommendation": "Key captures on the order id.",
            },
        ],
        "rubric": [
            {
                "property": "idempotent",
                "evidence": [{"kind": "tool_quote", "source": "L1", "quote": quote}],
                "rationale": "A day is not the life of an order.",
                "verdict": "yes",
            },
        ],
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text(DESIGN)
    return tmp_path


def run(raw: dict[str, Any], folder: Path, events: list[Event] | None = None) -> Path:
    out = folder / "session.toml"
    tools = RunTools(validate_spec(raw), folder)

    async def go() -> None:
        try:
            await run_live(
                raw,
                lambda d: SCRIPTED,
                out,
                events.append if events is not None else None,
                tools=tools,
            )
        finally:
            await tools.aclose()

    asyncio.run(go())
    return out


def turns_of(path: Path) -> list[Turn]:
    return load_session(path).turns


def test_a_lookup_is_recorded_with_its_result_and_hash_and_its_quote_admitted(folder: Path) -> None:
    events: list[Event] = []
    path = run(
        challenge_raw(reviewer_turn("Payments deduplicates on the event id")), folder, events
    )
    review = next(t for t in turns_of(path) if t.speaker == "reviewer")
    [lookup] = review.lookups or []
    assert lookup["id"] == "L1" and lookup["ok"] is True
    assert (lookup["tool"], lookup["call"], lookup["args"]) == (
        "files",
        "read",
        {"path": "design.md"},
    )
    assert lookup["result"] == DESIGN
    assert lookup["sha256"] == digest(DESIGN) and lookup["bytes"] == len(DESIGN.encode())
    assert "lookups" not in review.content  # the request is the record's, not the answer's
    [prop] = review.derived["rubric"]["properties"]
    assert prop["evidence"][0]["admitted"] is True and prop["evidence"][0]["source"] == "L1"
    assert prop["verdict"] == "yes"
    assert [e.lookups[0]["id"] for e in events if isinstance(e, LookupsRan)] == ["L1"]
    assert "[[turns.lookups]]" in path.read_text()
    assert verify_file(path).ok


def test_a_forged_tool_quote_is_not_admitted(folder: Path) -> None:
    path = run(challenge_raw(reviewer_turn("Payments keys every capture on the order id")), folder)
    review = next(t for t in turns_of(path) if t.speaker == "reviewer")
    [prop] = review.derived["rubric"]["properties"]
    assert prop["evidence"][0]["admitted"] is False
    assert prop["evidence"][0]["why"] == "not found verbatim in the result of L1"
    assert prop["verdict"] == "no"
    assert verify_file(path).ok


def test_the_defender_not_given_the_tool_is_refused_on_record(folder: Path) -> None:
    owner = {
        "lookups": [{"tool": "files", "call": "read", "args": {"path": "design.md"}}],
        "revised_artifact": "Key captures on the order id.",
    }
    path = run(challenge_raw(reviewer_turn("Payments deduplicates"), owner), folder)
    defense = next(t for t in turns_of(path) if t.speaker == "owner")
    [lookup] = defense.lookups or []
    assert lookup["ok"] is False and lookup["result"] == ""
    assert lookup["reason"] == "tool 'files' is not given to owner"
    assert verify_file(path).ok


def test_an_edited_result_is_caught_by_verify(folder: Path) -> None:
    path = run(challenge_raw(reviewer_turn("Payments deduplicates on the event id")), folder)
    text = path.read_text()
    edited = text.replace("for 24 hours.", "for 25 hours.", 1)
    assert edited != text
    path.write_text(edited)
    report = verify_file(path)
    failed = {(c.where, c.field): c.detail for c in report.failures}
    assert "does not hash to its sha256" in failed[("turn 1", "lookups")], failed


def test_a_lookup_granted_in_the_file_to_a_role_the_spec_refuses_fails_verify(folder: Path) -> None:
    raw = challenge_raw(reviewer_turn("Payments deduplicates on the event id"))
    path = run(raw, folder)
    data = load_session(path)
    from tui.engine.grounding.lookups import lookup_problems

    review = next(t for t in data.turns if t.speaker == "reviewer")
    assert lookup_problems(data.spec, "owner", review.lookups or []) == [
        "lookup L1: tool 'files' was not given to owner"
    ]


def test_calls_over_the_budget_are_refused_and_the_debate_goes_on(folder: Path) -> None:
    raw = challenge_raw(
        reviewer_turn(
            "Payments deduplicates on the event id",
            [{"tool": "files", "call": "list", "args": {"path": "."}}] * 3
            + [
                {"tool": "files", "call": "delete", "args": {}},
                {"tool": "web", "call": "get", "args": {}},
            ],
        )
    )
    raw["tools"][0]["max_calls_per_turn"] = 2
    path = run(raw, folder)
    review = next(t for t in turns_of(path) if t.speaker == "reviewer")
    lookups = review.lookups or []
    assert [lk["ok"] for lk in lookups] == [True, True, False, False, False]
    assert lookups[0]["result"] == f"design.md ({len(DESIGN)} bytes)"
    assert [lk.get("reason") for lk in lookups[2:]] == [
        "over the budget of 2 calls of 'files' per turn",
        "tool 'files' has no call 'delete'",
        "no tool 'web' in this spec",
    ]
    assert [t.speaker for t in turns_of(path)] == ["reviewer", "owner"]
    assert verify_file(path).ok


def test_a_result_over_the_bound_is_cut_and_marked(folder: Path) -> None:
    (folder / "docs" / "big.md").write_text("x" * 5000)
    raw = challenge_raw(
        reviewer_turn("xxxxxxxxxx", [{"tool": "files", "call": "read", "args": {"path": "big.md"}}])
    )
    raw["tools"][0]["max_result_bytes"] = 1000
    path = run(raw, folder)
    [lookup] = next(t for t in turns_of(path) if t.speaker == "reviewer").lookups or []
    assert lookup["ok"] and lookup["cut"] is True and lookup["bytes"] <= 1000
    assert lookup["result"].endswith("of 5000 bytes]")
    assert verify_file(path).ok


def test_resume_replays_lookups_from_the_file_and_never_runs_them_again(folder: Path) -> None:
    from tui.engine.record.live import LiveSession

    path = run(challenge_raw(reviewer_turn("Payments deduplicates on the event id")), folder)
    before = turns_of(path)
    (folder / "docs" / "design.md").write_text("changed since")

    class Refuses:
        allow_writes = False

        async def start(self) -> None:
            raise AssertionError("a replayed lookup must not start the tools")

        def calls(self, tool: str) -> tuple[str, ...]:
            raise AssertionError("a replayed lookup must not reach the tools")

        def read_only(self, tool: str) -> frozenset[str]:
            raise AssertionError("a replayed lookup must not reach the tools")

        def hints(self, tool: str) -> Mapping[str, str]:
            raise AssertionError("a replayed lookup must not reach the tools")

        async def run(self, tool: str, call: str, args: dict[str, Any]) -> str:
            raise AssertionError("a replayed lookup must not run")

        async def aclose(self) -> None:
            return None

    live = LiveSession.resume(path, lambda d: SCRIPTED, tools=Refuses())
    try:
        asyncio.run(live.engine.run())
    finally:
        live.close()
    assert [t.lookups for t in turns_of(path)] == [t.lookups for t in before]
    assert verify_file(path).ok


# ----------------------------------------------------------- the files tool's escapes
@pytest.fixture
def files(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> RunTools:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("do not read")
    docs = folder / "docs"
    (docs / "out").symlink_to(outside / "secret.txt")
    (docs / "outdir").symlink_to(outside)
    os.mkfifo(docs / "pipe")
    with open(docs / "huge.bin", "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    raw = challenge_raw(reviewer_turn("x"))
    box = RunTools(validate_spec(raw), folder)
    asyncio.run(box.start())
    return box


@pytest.mark.parametrize(
    ("call", "args", "why"),
    [
        ("read", {"path": "../session.toml"}, "leads outside the tool's root"),
        ("read", {"path": "/etc/passwd"}, "is absolute"),
        ("read", {"path": "out"}, "leads outside the tool's root"),
        ("list", {"path": "outdir"}, "leads outside the tool's root"),
        ("grep", {"pattern": "read", "path": "outdir"}, "leads outside the tool's root"),
        ("read", {"path": "pipe"}, "not a regular file"),
        ("read", {"path": "huge.bin"}, "larger than the size limit"),
        ("read", {"path": "."}, "not a regular file"),
    ],
)
def test_the_files_tool_never_leaves_its_root(
    files: RunTools, call: str, args: dict[str, Any], why: str
) -> None:
    from tui.engine.core.ports import ToolFailure

    with pytest.raises(ToolFailure, match=why):
        asyncio.run(files.run("files", call, args))


def test_the_files_tool_lists_and_greps_only_what_is_inside(files: RunTools) -> None:
    listed = asyncio.run(files.run("files", "list", {"path": "."}))
    assert "design.md" in listed and "out" not in listed.split() and "outdir/" not in listed
    found = asyncio.run(files.run("files", "grep", {"pattern": "EVENT ID"}))
    assert found == "design.md:2: Payments deduplicates on the event id for 24 hours."
    assert asyncio.run(files.run("files", "grep", {"pattern": "do not read"})).startswith("no line")


def test_a_root_outside_the_spec_folder_is_refused(folder: Path) -> None:
    from tui.engine.core.ports import ToolFailure

    raw = copy.deepcopy(challenge_raw(reviewer_turn("x")))
    raw["tools"][0]["root"] = ".."
    box = RunTools(validate_spec(raw), folder)
    with pytest.raises(ToolFailure, match="root '..' is outside the spec's folder"):
        asyncio.run(box.start())


@pytest.mark.parametrize("root", ["/", "..", "link-out"])
def test_validate_refuses_a_root_that_run_refuses(
    folder: Path,
    root: str,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``moot validate`` and ``moot run`` read a spec through one check, by key path."""
    from tui.cli import main

    (folder / "link-out").symlink_to(tmp_path_factory.mktemp("elsewhere"))
    raw = copy.deepcopy(challenge_raw(reviewer_turn("x")))
    raw["tools"][0]["root"] = root
    spec = folder / "spec.toml"
    spec.write_text(tomli_w.dumps(raw))
    for command in (["validate", str(spec)], ["run", str(spec), "--headless", "--no-preflight"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert f"  - tools[0].root: {root!r} is outside the spec's folder" in err, err
        assert "Traceback" not in err
    assert not (folder / "sessions").exists()  # refused before any session file


def test_tools_in_the_spec_are_checked(folder: Path) -> None:
    from tui.engine.basics.errors import SpecError

    raw = challenge_raw(reviewer_turn("x"))
    raw["tools"] = [
        {"name": "files", "builtin": "files", "root": "docs", "roles": ["nobody"]},
        {"name": "files", "mcp": ["server"], "builtin": "files", "roles": ["owner"]},
    ]
    with pytest.raises(SpecError) as err:
        validate_spec(raw)
    text = str(err.value)
    assert "tools[0].roles[0]: 'nobody' is neither a debater id nor a role" in text
    assert "duplicate tool 'files'" in text
    assert "exactly one of mcp" in text


def test_spec_toml_round_trip_keeps_tools(folder: Path) -> None:
    raw = challenge_raw(reviewer_turn("x"))
    (folder / "spec.toml").write_text(tomli_w.dumps(raw))
    from tui.engine.specs.spec import read_spec_file

    spec, _ = read_spec_file(str(folder / "spec.toml"))
    assert spec.tools[0].max_calls_per_turn == 4 and spec.tools[0].max_result_bytes == 65536


def test_the_grounded_example_runs_headless_and_verifies(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "grounded.toml"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui",
            "run",
            "sessions/examples/scripted-grounded-review.toml",
            "--headless",
            "--out",
            str(out),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "lookup L1 files.read(path=orders-outbox-design.md) ok, 1,368 bytes" in done.stdout
    assert "failed: tool 'files' is not given to owner" in done.stdout
    turns = turns_of(out)
    first = turns[0].derived["rubric"]["properties"][0]["evidence"]
    assert [e["admitted"] for e in first] == [True, True, False]
    assert verify_file(out).ok
    from tui.render.adr import to_adr

    adr = to_adr(load_session(out))
    assert "(lookup `files.read`(path=orders-outbox-design.md), result sha256 `" in adr


def test_moot_batch_runs_the_spec_tools(tmp_path: Path) -> None:
    import json
    import shutil
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    folder = tmp_path / "specs"
    shutil.copytree(root / "sessions" / "examples" / "architecture", folder / "architecture")
    shutil.copy(root / "sessions" / "examples" / "scripted-grounded-review.toml", folder)
    summary = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "tui", "batch", str(folder), "--summary", str(summary)],
        cwd=tmp_path,
        env={**os.environ, "MOOT_SESSIONS_DIR": str(tmp_path / "sessions")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said = "tool files: adversary may list, read and grep architecture (reads only)"
    assert said in done.stderr  # what a lookup may do, said before the run
    [entry] = json.loads(summary.read_text())["specs"]
    turns = turns_of(Path(entry["session"]))
    assert [lk["ok"] for lk in turns[0].lookups or []] == [True, True]
    assert verify_file(entry["session"]).ok


def _reviewer_schemas(folder: Path, **script: Any) -> tuple[list[dict[str, Any]], Path]:
    """Run the challenge with its files tool required; the schema of each reviewer call."""
    from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest

    schemas: list[dict[str, Any]] = []

    class Recording:
        async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
            if request.debater.id == "reviewer":
                schemas.append(request.json_schema)
            return await SCRIPTED.complete(request, on_token)

        async def aclose(self) -> None:
            return None

    raw = challenge_raw(reviewer_turn("Payments deduplicates on the event id"))
    raw["tools"][0]["required"] = True
    raw["debaters"][1]["script"].update(script)
    out = folder / "s.toml"
    tools = RunTools(validate_spec(raw), folder)

    async def go() -> None:
        try:
            await run_live(raw, lambda d: Recording(), out, tools=tools)
        finally:
            await tools.aclose()

    asyncio.run(go())
    return schemas, out


def test_a_required_tool_makes_the_first_call_ask_for_a_lookup(folder: Path) -> None:
    (first, second), out = _reviewer_schemas(folder)
    shape = first.get("anyOf", [first])[0]
    assert "lookups" in shape["required"] and shape["properties"]["lookups"]["minItems"] == 1
    assert shape["properties"]["lookups"]["items"]["properties"]["call"]["enum"] == [
        "grep",
        "list",
        "read",
    ]
    later = second.get("anyOf", [second])[0]
    assert "lookups" not in later.get("required", []) and "lookups" in later["properties"]
    assert verify_file(out).ok


def test_a_reask_before_any_lookup_still_asks_for_the_required_one(folder: Path) -> None:
    """A first answer refused (cut by max_tokens, or junk) is asked again under the same
    requirement: a re-ask let off the lookup let a small model skip it."""
    (junk, reask, *after), out = _reviewer_schemas(folder, invalid_once=[1])
    for schema in (junk, reask):
        assert "lookups" in schema.get("anyOf", [schema])[0]["required"]
    assert after and "lookups" not in after[0].get("anyOf", [after[0]])[0].get("required", [])
    [review] = [t for t in turns_of(out) if t.speaker == "reviewer"]
    assert [lk["ok"] for lk in review.lookups or []] == [True]
    assert verify_file(out).ok


def test_a_lookup_that_never_answers_is_refused_on_record_at_its_timeout(folder: Path) -> None:
    """The tool's deadline ends the call in the turn's own task; the debate goes on."""
    from tui.engine.grounding.lookups import run_lookups

    raw = challenge_raw(reviewer_turn("x"))
    raw["tools"][0]["timeout_s"] = 0.2
    spec = validate_spec(raw)

    class Hangs(RunTools):
        async def run(self, tool: str, call: str, args: dict[str, Any]) -> str:
            await asyncio.Event().wait()  # a tool that never answers
            return ""

    async def look() -> list[dict[str, Any]]:
        box = Hangs(spec, folder)
        await box.start()
        ask = {"tool": "files", "call": "read", "args": {"path": "design.md"}}
        return await run_lookups(spec, "reviewer", [ask], box, lambda s: s)

    [record] = asyncio.run(look())
    assert record["ok"] is False and record["reason"] == "timed out after 0.2 s", record


def test_the_files_tools_arguments_are_named_and_closed() -> None:
    """A grammar-bound 135M model wrote one open ``args`` object's keys over and over until
    its tokens ran out, four asks in a row: the files tool's arguments are named, each once."""
    raw = challenge_raw(reviewer_turn("x"))
    args = lookup_schema(validate_spec(raw), "reviewer", lambda _: FILES_CALLS)["items"][
        "properties"
    ]["args"]
    assert args["additionalProperties"] is False
    source = Path(files_module.__file__).read_text()
    read = set(re.findall(r'args\.get\("(\w+)"', source))
    assert read and set(args["properties"]) == read  # every argument the tool reads, no other
    raw["tools"].append({"name": "notes", "mcp": ["notes-server"], "roles": ["reviewer"]})
    mixed = lookup_schema(validate_spec(raw), "reviewer", lambda _: FILES_CALLS)["items"]
    assert mixed["properties"]["args"] == {"type": "object"}  # an MCP call's are its server's
