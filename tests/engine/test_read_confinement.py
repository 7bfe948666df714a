"""What a spec may read: its own folder tree, and only what the command line adds.

A spec names the files its models are sent (``[[context]]`` file and glob,
``[debate].artifact_file``), and a spec may come from anyone; these tests plant
a "private" file beside the spec's folder and try every way out to it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.fake_openai import FakeOpenAI, Status
from tests.helpers import debate_raw
from tui.cli import main
from tui.engine.basics.errors import SpecError
from tui.engine.record.session import load_session
from tui.engine.specs.spec import read_spec_file
from tui.exitcodes import ExitCode
from tui.providers.preflight import document_routes

PRIVATE = "-----BEGIN OPENSSH PRIVATE KEY----- the user's own"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``tmp/spec/`` (the spec's folder) beside ``tmp/private.txt`` and ``tmp/outside/``."""
    (tmp_path / "private.txt").write_text(PRIVATE)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "notes.txt").write_text(PRIVATE)
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "inside.md").write_text("The plan, in the spec's own folder.")
    (folder / "in-link.md").symlink_to("inside.md")
    (folder / "out-link.md").symlink_to(tmp_path / "private.txt")
    (folder / "linkdir").symlink_to(tmp_path / "outside")
    return folder


def _spec(folder: Path, context: list[dict[str, Any]] | None = None, **debate: str) -> Path:
    raw = debate_raw({"a": ["release"], "b": ["release"]}, max_rounds=1, **debate)
    if context is not None:
        raw["context"] = context
    path = folder / "spec.toml"
    path.write_text(tomli_w.dumps(raw))
    return path


def _file(path: str) -> list[dict[str, Any]]:
    return [{"label": "doc", "file": path}]


WAYS_OUT: dict[str, tuple[str, Callable[[Path], dict[str, Any]]]] = {
    "an absolute file": ("context[0].file", lambda t: {"context": _file(str(t / "private.txt"))}),
    "a file up the tree": ("context[0].file", lambda t: {"context": _file("../private.txt")}),
    "artifact_file up the tree": (
        "debate.artifact_file",
        lambda t: {"artifact_file": "../private.txt"},
    ),
    "a glob up the tree": (
        "context[0].glob",
        lambda t: {"context": [{"label": "g", "glob": "../*.txt"}]},
    ),
    "a symlinked file": ("context[0].file", lambda t: {"context": _file("out-link.md")}),
    "a file in a symlinked folder": (
        "context[0].file",
        lambda t: {"context": _file("linkdir/notes.txt")},
    ),
    "a glob through a symlinked folder": (
        "context[0].glob",
        lambda t: {"context": [{"label": "g", "glob": "linkdir/*.txt"}]},
    ),
    "a glob that meets a link out": (
        "context[0].glob",
        lambda t: {"context": [{"label": "g", "glob": "*.md"}]},
    ),
    "artifact_file as a link out": (
        "debate.artifact_file",
        lambda t: {"artifact_file": "out-link.md"},
    ),
}


def _write_way(tree: Path, way: str) -> tuple[str, Path]:
    key, make = WAYS_OUT[way]
    parts = make(tree.parent)
    return key, _spec(tree, parts.pop("context", None), **parts)


@pytest.mark.parametrize("way", list(WAYS_OUT))
def test_every_way_out_of_the_spec_folder_is_refused(tree: Path, way: str, capsys) -> None:
    key, spec = _write_way(tree, way)
    out = tree.parent / "never.toml"
    assert main(["run", str(spec), "--headless", "--out", str(out)]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert f"  - {key}:" in err and "outside the spec's folder" in err and "--allow-read" in err
    assert PRIVATE not in err
    assert not out.exists()
    assert main(["validate", str(spec)]) == ExitCode.BAD_INPUT
    assert "outside the spec's folder" in capsys.readouterr().err


@pytest.mark.parametrize("pattern", ["../**/*", "linkdir/**/*.txt", "/*", "sub/../../*"])
def test_a_glob_out_of_the_folder_is_refused_before_any_walk(
    tree: Path, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec(tree, [{"label": "g", "glob": pattern}])

    def no_walk(self: Path, pattern: str) -> None:
        raise AssertionError(f"walked {self} for {pattern}")

    monkeypatch.setattr(Path, "glob", no_walk)
    with pytest.raises(SpecError) as caught:
        read_spec_file(spec)
    (problem,) = caught.value.problems
    assert problem.startswith(f"context[0].glob: {pattern}: outside the spec's folder")


def test_links_that_stay_inside_are_read(tree: Path) -> None:
    spec = _spec(tree, [{"label": "plan", "file": "in-link.md"}, {"label": "all", "glob": "i*.md"}])
    parsed, _ = read_spec_file(spec)
    assert [d.label for d in parsed.documents] == ["plan", "all/in-link.md", "all/inside.md"]
    assert {d.text for d in parsed.documents} == {"The plan, in the spec's own folder."}


@pytest.mark.parametrize("way", list(WAYS_OUT))
def test_allow_read_on_the_command_line_lets_a_path_in(tree: Path, way: str) -> None:
    _, spec = _write_way(tree, way)
    out = tree.parent / "s.toml"
    granted = ["--allow-read", str(tree.parent / "private.txt")]
    granted += ["--allow-read", str(tree.parent / "outside")]
    assert main(["run", str(spec), "--headless", "--out", str(out), *granted]) == 0
    texts = [d.text for d in load_session(out).spec.documents]
    assert PRIVATE in texts
    assert main(["validate", str(spec), *granted]) == 0


def test_allow_read_grants_only_what_it_names(tree: Path, capsys) -> None:
    spec = _spec(tree, _file("../private.txt"))
    granted = ["--allow-read", str(tree.parent / "outside")]  # a folder beside, not the file
    assert main(["validate", str(spec), *granted]) == ExitCode.BAD_INPUT
    assert "outside the spec's folder" in capsys.readouterr().err


def test_a_missing_allow_read_path_is_named(tree: Path, capsys) -> None:
    spec = _spec(tree, _file("inside.md"))
    assert main(["validate", str(spec), "--allow-read", str(tree / "nope")]) == 2
    assert "--allow-read" in capsys.readouterr().err


def test_a_spec_cannot_allow_itself(tree: Path) -> None:
    raw = debate_raw({"a": ["release"], "b": ["release"]}, allow_read=["/"])
    raw["context"] = _file("../private.txt")
    raw["allow_read"] = [str(tree.parent)]
    spec = tree / "spec.toml"
    spec.write_text(tomli_w.dumps(raw))
    with pytest.raises(SpecError) as caught:
        read_spec_file(spec)
    assert any("allow_read" in p for p in caught.value.problems)  # an unknown key, not a grant


def test_batch_applies_the_same_rules(tree: Path, capsys) -> None:
    spec = _spec(tree, _file("../private.txt"))
    summary = tree.parent / "summary.json"
    argv = ["batch", str(spec), "--sessions-dir", str(tree.parent / "sessions")]
    assert main([*argv, "--summary", str(summary)]) == ExitCode.BAD_INPUT
    assert "outside the spec's folder" in capsys.readouterr().err
    bad = json.loads(summary.read_text())["specs"][0]
    assert bad["status"] == "bad" and "outside the spec's folder" in bad["problems"][0]
    granted = ["--allow-read", str(tree.parent / "private.txt")]
    assert main([*argv, *granted]) == ExitCode.DECIDED
    (session,) = (tree.parent / "sessions").glob("*.toml")
    assert PRIVATE in [d.text for d in load_session(session).spec.documents]


def _served_spec(tree: Path, fake: FakeOpenAI) -> Path:
    raw = debate_raw({"a": ["release"], "b": ["release"]}, max_rounds=1)
    raw["debaters"][0] = {
        "id": "a",
        "model": "openai/fake",
        "api_base": fake.base_url,
        "api_key_env": "MOOT_TEST_KEY",
    }
    raw["context"] = [
        {"label": "plan", "file": "inside.md"},
        {"label": "b_only", "file": "in-link.md", "roles": ["b"]},
        {"label": "inline", "text": "Not a file."},
    ]
    path = tree / "spec.toml"
    path.write_text(tomli_w.dumps(raw))
    return path


def test_the_preflight_lists_which_files_go_to_which_server(
    tree: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_TEST_KEY", "sk-test-key")
    spec, _ = read_spec_file(_served_spec(tree, fake))
    routes = document_routes(spec)
    assert routes == [f"sends inside.md to {fake.base_url} (debater a)"]
    assert fake.calls == 0


def test_a_headless_run_prints_the_routes_before_it_starts(
    tree: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("MOOT_TEST_KEY", "sk-test-key")
    fake.default = Status(401, "invalid api key")  # the run ends at its first call, at once
    spec = _served_spec(tree, fake)
    out = tree.parent / "s.toml"
    main(["run", str(spec), "--headless", "--out", str(out)])
    err = capsys.readouterr().err
    assert f"moot: sends inside.md to {fake.base_url} (debater a)" in err
