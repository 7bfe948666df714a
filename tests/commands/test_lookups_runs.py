"""Lookups in every way a run starts or goes on: resume, fork, ``moot mcp`` and batch."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.engine.test_lookups import DESIGN, challenge_raw, reviewer_turn, turns_of
from tests.helpers import moot_in_process as moot
from tui.engine.record.verify import verify_file

MARK = "# moot:commit\n"
DONE = (0, 3)  # decided, or ended unresolved: this one-round challenge may end either way


def keep_records(path: Path, records: int) -> None:
    """Cut a session file after its first ``records`` records, as a run stopped there."""
    text = path.read_text()
    end = 0
    for _ in range(records):
        end = text.index(MARK, end) + len(MARK)
    path.write_text(text[:end])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    spec_folder = tmp_path / "review"
    (spec_folder / "docs").mkdir(parents=True)
    (spec_folder / "docs" / "design.md").write_text(DESIGN)
    return spec_folder


def spec_file(folder: Path, raw: dict[str, Any]) -> Path:
    spec = folder / "review.toml"
    spec.write_text(tomli_w.dumps(raw))
    return spec


# ------------------------------------------------------------------ resume
def test_a_resumed_session_runs_its_tools_and_verifies(folder: Path, tmp_path: Path) -> None:
    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    out = folder / "session.toml"
    done = moot("run", spec.name, "--headless", "--out", str(out), cwd=folder)  # relative
    assert done.returncode in DONE, done.stderr[-2000:]
    keep_records(out, 1)  # the header only: stopped before the reviewer spoke
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()  # a resume from another folder still roots the tool in the spec's
    done = moot("resume", str(out), "--headless", cwd=elsewhere)
    assert done.returncode in DONE, done.stderr[-2000:]
    assert "moot: tool files: adversary may list, read and grep docs (reads only)" in done.stderr
    review = next(t for t in turns_of(out) if t.speaker == "reviewer")
    [lookup] = review.lookups or []
    assert lookup["ok"] is True and lookup["result"] == DESIGN, lookup
    assert review.derived["rubric"]["properties"][0]["evidence"][0]["admitted"] is True
    assert verify_file(out).ok


def test_a_resumed_session_whose_spec_folder_is_gone_refuses_its_lookups_on_record(
    folder: Path, tmp_path: Path
) -> None:
    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    out = tmp_path / "session.toml"
    assert moot("run", str(spec), "--headless", "--out", str(out), cwd=folder).returncode in DONE
    keep_records(out, 1)
    (folder / "docs" / "design.md").unlink()
    (folder / "docs").rmdir()
    done = moot("resume", str(out), "--headless", cwd=tmp_path)
    assert "tools" in done.stderr and "docs" in done.stderr, done.stderr[-2000:]
    assert done.returncode == 2  # a tool that cannot start stops the run at once, named
    assert verify_file(out).ok


def test_the_recorded_spec_folder_is_checked_by_verify(folder: Path) -> None:
    from tui.engine.record.session import load_session

    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    out = folder / "session.toml"
    assert moot("run", spec.name, "--headless", "--out", str(out), cwd=folder).returncode in DONE
    assert load_session(out).meta["spec_folder"] == str(folder.resolve())
    report = verify_file(out)
    assert any(c.field == "spec_folder" and c.ok for c in report.claims), report


def test_a_session_someone_else_signed_starts_no_tool_unless_allowed(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resuming a file sent by another person must not run its commands or read its
    folders: it says what would start, leaves the file as it was, and --allow-tools
    starts them."""
    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    out = folder / "session.toml"
    assert moot("run", spec.name, "--headless", "--out", str(out), cwd=folder).returncode in DONE
    keep_records(out, 1)
    before = out.read_bytes()
    monkeypatch.setenv("MOOT_CONFIG_DIR", str(tmp_path / "someone-else"))  # another user's keys
    refused = moot("resume", str(out), "--headless", cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr[-2000:]
    said = " ".join(refused.stderr.split())
    assert "not a key you trust" in said and "--allow-tools" in said, said
    assert f"files reads {folder.resolve() / 'docs'}" in said, said
    assert "Traceback" not in refused.stderr
    assert out.read_bytes() == before
    allowed = moot("resume", str(out), "--headless", "--allow-tools", cwd=tmp_path)
    assert allowed.returncode in DONE, allowed.stderr[-2000:]
    review = next(t for t in turns_of(out) if t.speaker == "reviewer")
    [lookup] = review.lookups or []
    assert lookup["ok"] is True and lookup["result"] == DESIGN, lookup
    assert verify_file(out).ok


def test_an_edited_tool_folder_is_not_followed_on_a_forced_resume(
    folder: Path, tmp_path: Path
) -> None:
    """A file whose recorded folder was changed (to read elsewhere) breaks its chain:
    --force resumes the debate, but its tools start only with --allow-tools."""
    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    out = folder / "session.toml"
    assert moot("run", spec.name, "--headless", "--out", str(out), cwd=folder).returncode in DONE
    keep_records(out, 1)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "docs").mkdir(parents=True)
    (elsewhere / "docs" / "design.md").write_text("someone else's files")
    text = out.read_text()
    assert f'spec_folder = "{folder.resolve()}"' in text
    out.write_text(text.replace(str(folder.resolve()), str(elsewhere)))
    before = out.read_bytes()
    refused = moot("resume", str(out), "--headless", "--force", cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr[-2000:]
    said = " ".join(refused.stderr.split())
    assert "hash chain or signatures do not hold" in said and "--allow-tools" in said, said
    assert out.read_bytes() == before


# ------------------------------------------------- moot mcp and moot batch
def shared_raw(folder: Path) -> dict[str, Any]:
    """The review whose files tool is rooted outside the spec's folder, in ``../shared``."""
    shared = folder.parent / "shared"
    shared.mkdir(exist_ok=True)
    (shared / "design.md").write_text(DESIGN)
    raw = challenge_raw(reviewer_turn("Payments deduplicates on the event id"))
    raw["tools"][0]["root"] = "../shared"
    return raw


def server(tmp_path: Path, allow_read: tuple[str, ...] = ()) -> Any:
    """A ``moot mcp`` that may read the spec's folder, ``review``, and ``allow_read``."""
    from tui.mcp_server import MootServer
    from tui.providers.scripted import ScriptedProvider

    provider = ScriptedProvider()
    allowed = (str(tmp_path / "review"), *allow_read)
    return MootServer(tmp_path / "sessions", lambda d: provider, allow_read=allowed)


async def mcp_run(moot_server: Any, spec: Path) -> Any:
    from mcp import Client

    async with Client(moot_server.mcp) as client:
        return await client.call_tool("run", {"spec": str(spec), "wait": True})


async def test_a_run_over_mcp_runs_the_spec_tools(folder: Path, tmp_path: Path) -> None:
    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    result = await mcp_run(server(tmp_path), spec)
    assert not result.is_error, result.content
    session = Path(result.structured_content["session"])
    [lookup] = next(t for t in turns_of(session) if t.speaker == "reviewer").lookups or []
    assert lookup["ok"] is True and lookup["result"] == DESIGN, lookup
    assert (await asyncio.to_thread(verify_file, session)).ok


async def test_over_mcp_a_root_outside_the_spec_folder_needs_allow_read(
    folder: Path, tmp_path: Path
) -> None:
    spec = spec_file(folder, shared_raw(folder))
    refused = await mcp_run(server(tmp_path), spec)
    assert refused.is_error
    said = " ".join(getattr(c, "text", "") for c in refused.content)
    assert "tools[0].root: '../shared' is outside the spec's folder" in said, said
    assert not list((tmp_path / "sessions").glob("*.toml"))  # refused before any file exists
    allowed = await mcp_run(server(tmp_path, (str(folder.parent / "shared"),)), spec)
    assert not allowed.is_error, allowed.content
    session = Path(allowed.structured_content["session"])
    [lookup] = next(t for t in turns_of(session) if t.speaker == "reviewer").lookups or []
    assert lookup["ok"] is True and lookup["result"] == DESIGN, lookup


def test_moot_mcp_takes_allow_read_on_its_command_line() -> None:
    from tui.cli import _parser

    args = _parser().parse_args(["mcp", "--allow-read", "shared"])
    assert args.allow_read == ["shared"]


def test_batch_roots_a_tool_outside_the_spec_folder_only_with_allow_read(
    folder: Path, tmp_path: Path
) -> None:
    from tui.commands.batch import Status, collect, run_items
    from tui.providers.scripted import ScriptedProvider

    spec = spec_file(folder, shared_raw(folder))
    provider = ScriptedProvider()
    refused = collect([str(spec)])
    allowed = collect([str(spec)], allow_read=[str(folder.parent / "shared")])
    for items in (refused, allowed):
        asyncio.run(
            run_items(items, directory=tmp_path / "sessions", provider_for=lambda d: provider)
        )
    [bad], [good] = refused, allowed
    assert bad.status == Status.BAD and bad.session is None
    [problem] = bad.problems
    assert problem.startswith("tools[0].root: '../shared' is outside the spec's folder")
    assert "--allow-read" in problem
    assert good.session is not None
    [lookup] = next(t for t in turns_of(good.session) if t.speaker == "reviewer").lookups or []
    assert lookup["ok"] is True and lookup["result"] == DESIGN, lookup
    assert verify_file(good.session).ok


# -------------------------------------------------------------------- fork
def test_a_fork_keeps_its_lookups_verifiable_and_its_resume_runs_the_tools(
    folder: Path, tmp_path: Path
) -> None:
    from tui.engine.record.fork import fork
    from tui.engine.record.session import load_session

    raw = challenge_raw(reviewer_turn("Payments deduplicates on the event id"))
    raw["debate"]["max_rounds"] = 2
    raw["debaters"][1]["script"]["turns"] *= 2
    spec = spec_file(folder, raw)
    source = tmp_path / "source.toml"
    assert moot("run", spec.name, "--headless", "--out", str(source), cwd=folder).returncode in DONE
    forked = fork(source, 2, tmp_path / "fork.toml", ["debate.title=Forked review"])
    kept = load_session(forked)
    assert [t.lookups for t in kept.turns] == [t.lookups for t in turns_of(source)[:2]]
    assert kept.meta["spec_folder"] == str(folder.resolve())
    assert verify_file(forked).ok
    done = moot("resume", str(forked), "--headless", cwd=tmp_path)
    assert done.returncode in DONE, done.stderr[-2000:]
    reviews = [t for t in turns_of(forked) if t.speaker == "reviewer"]
    assert [lk["ok"] for t in reviews for lk in t.lookups or []] == [True, True]
    assert reviews[1].lookups is not None and reviews[1].lookups[0]["result"] == DESIGN
    assert verify_file(forked).ok


def test_a_fork_whose_changes_would_fail_its_kept_lookups_is_refused(
    folder: Path, tmp_path: Path
) -> None:
    import pytest

    from tui.engine.basics.errors import MootInputError
    from tui.engine.record.fork import fork

    read = {"tool": "files", "call": "read", "args": {"path": "design.md"}}
    raw = challenge_raw(reviewer_turn("Payments deduplicates on the event id", [read, read]))
    raw["budget"] = {"max_lookups": 5}
    spec = spec_file(folder, raw)
    source = tmp_path / "source.toml"
    assert moot("run", spec.name, "--headless", "--out", str(source), cwd=folder).returncode in DONE
    with pytest.raises(MootInputError) as err:
        fork(source, 1, tmp_path / "fork.toml", ["budget.max_lookups=1"])
    assert "2 lookups ran, over budget.max_lookups = 1" in str(err.value), err.value
    with pytest.raises(MootInputError) as err:
        fork(
            source,
            1,
            tmp_path / "fork.toml",
            ["debate.adversary=owner", "debate.defender=reviewer"],
        )
    assert "turn 1" in str(err.value) and "not given to reviewer" in str(err.value), err.value
    assert not (tmp_path / "fork.toml").exists()
    assert verify_file(fork(source, 1, tmp_path / "fork.toml", ["budget.max_lookups=2"])).ok


def test_a_fork_keeps_a_strangers_tools_only_when_allowed(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fork is signed by you: forking someone else's session must not make its
    tools yours, to be started by the fork's resume without a word."""
    from tui.engine.basics.errors import SessionError
    from tui.engine.record.fork import fork
    from tui.engine.record.session import load_session

    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    source = tmp_path / "source.toml"
    assert moot("run", spec.name, "--headless", "--out", str(source), cwd=folder).returncode in DONE
    monkeypatch.setenv("MOOT_CONFIG_DIR", str(tmp_path / "someone-else"))
    with pytest.raises(SessionError) as refused:
        fork(source, 1, tmp_path / "fork.toml", [])
    said = " ".join(refused.value.problems)
    assert "not a key you trust" in said and "--allow-tools" in said, said
    assert f"files reads {folder.resolve() / 'docs'}" in said, said
    assert not (tmp_path / "fork.toml").exists()
    done = moot(
        "fork", str(source), "--at", "1", "--out", str(tmp_path / "fork.toml"), cwd=tmp_path
    )
    assert done.returncode == 2 and "--allow-tools" in done.stderr, done.stderr[-2000:]
    forked = fork(source, 1, tmp_path / "fork.toml", [], allow_tools=True)
    assert load_session(forked).meta["spec_folder"] == str(folder.resolve())
    assert verify_file(forked).ok
