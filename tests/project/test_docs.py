"""The documentation cannot drift: every complete TOML spec in docs/ and the README
validates, every command marked "run this" runs, the generated references name every
key and option, and every protocol and page is on the site.

Conventions in the Markdown (HTML comments, invisible on the site):
- ```` ```toml ```` blocks are complete specs, checked with `moot validate`, unless the
  line before the fence is ``<!-- partial -->`` (a fragment, or another file's TOML);
- a ```` ```sh ```` block after ``<!-- run -->`` is run line by line in a copy of the
  examples, and must exit 0 (``<!-- run exit=N -->`` for another code).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import tomli_w
from pydantic import BaseModel

from tests.conftest import EXAMPLES, REPO
from tests.fake_openai import FakeOpenAI, Reply
from tui.exitcodes import ExitCode

DOCS = REPO / "docs"
README = REPO / "README.md"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(
    r"^(?P<marker><!-- [^>]* -->\n)?```(?P<lang>\w+)\n(?P<body>.*?)^```$", re.M | re.S
)
BIN = Path(sys.executable).parent


def _docs_module(name: str) -> ModuleType:
    """A module of docs/ (not a package: MkDocs loads its hook by path)."""
    spec = importlib.util.spec_from_file_location(f"moot_docs_{name}", DOCS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _blocks(lang: str, marker: str | None = None) -> list[tuple[str, str, str]]:
    """(where, marker, body) of each ``lang`` block in the docs and the README."""
    found = []
    for path in [*PAGES, README]:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m["lang"] != lang:
                continue
            mark = (m["marker"] or "").strip()
            if marker is not None and not mark.startswith(marker):
                continue
            line = text[: m.start("body")].count("\n")
            found.append((f"{path.relative_to(REPO)}:{line}", mark, m["body"]))
    return found


SPECS = [(where, body) for where, mark, body in _blocks("toml") if mark != "<!-- partial -->"]
RUNS = [(where, mark, body) for where, mark, body in _blocks("sh", "<!-- run")]


def test_the_conventions_find_blocks_of_each_kind() -> None:
    assert len(SPECS) >= 1 and len(RUNS) >= 5


@pytest.mark.parametrize(("where", "body"), SPECS, ids=[w for w, _ in SPECS])
def test_every_complete_toml_example_validates(tmp_path: Path, where: str, body: str) -> None:
    spec = tmp_path / "example.toml"
    spec.write_text(body, encoding="utf-8")
    done = subprocess.run(
        [str(BIN / "moot"), "validate", str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, f"{where}: {done.stdout}{done.stderr}"


@pytest.mark.parametrize(("where", "mark", "body"), RUNS, ids=[w for w, _, _ in RUNS])
def test_every_run_this_command_runs(tmp_path: Path, where: str, mark: str, body: str) -> None:
    """In a folder holding a copy of the examples, with the venv's moot first on PATH."""
    shutil.copytree(EXAMPLES, tmp_path / "sessions" / "examples")
    want = re.search(r"exit=(\d+)", mark)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    for key in [k for k in env if k.endswith("_API_KEY")]:
        del env[key]  # a "run this" command needs no key
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", body],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == (int(want[1]) if want else 0), f"{where}: {done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr


def _tables(model: type[BaseModel]) -> list[type[BaseModel]]:
    """``model`` and every model its keys hold, however deep."""
    spec_reference = _docs_module("spec_reference")
    found = [model]
    for info in model.model_fields.values():
        table = spec_reference._table(info.annotation)
        if table is not None:
            found += _tables(table[0])
    return found


def test_the_spec_reference_names_every_key_of_every_table() -> None:
    from tui.engine.specs.spec import DebateSection, Spec, ToolEntry

    page = _docs_module("spec_reference").spec_reference()
    sections = dict(re.findall(r"^## `\[+([\w.]+)\]+`\n(.*?)(?=^## |\Z)", page, re.M | re.S))
    assert set(sections) >= {"debate", "debaters", "debaters.script", "tools", "rubric.properties"}
    for model in _tables(Spec)[1:]:  # the tables under the file's top level
        matching = [s for s in sections.values() if (model.__doc__ or "").split("\n")[0] in s]
        assert matching, model.__name__
        for key in model.model_fields:
            assert all(f"- **`{key}`**" in s for s in matching), (model.__name__, key)
    debate = sections["debate"]
    assert "- **`title`**: string; **required**" in debate
    assert "- **`retries`**: integer; default `1`; ≥ 0; ≤ 5. re-asks of an invalid turn" in debate
    assert DebateSection.model_fields["cross_family"].description in debate
    assert "default `65536`; ≥ 256; ≤ 1048576" in sections["tools"]
    assert ToolEntry.__doc__ is not None


def _subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += [sub, *_subcommands(sub)]
    return found


def test_the_command_reference_shows_every_command_and_option() -> None:
    from tui.cli import _parser

    page = _docs_module("command_reference").command_reference()
    for parser in _subcommands(_parser()):
        assert f"\n## {parser.prog} {{#{parser.prog.replace(' ', '-')}}}\n" in page, parser.prog
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in page, (parser.prog, flag)
    assert "## moot keys trust {#moot-keys-trust}" in page and "--allow-tool-writes" in page


def _nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    return [p for item in nav for p in _nav_pages(item)]


def test_every_page_and_every_protocol_is_on_the_site() -> None:
    import yaml

    from tui.engine.protocols import PROTOCOLS

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    assert {str(p.relative_to(DOCS)) for p in PAGES} <= set(nav)
    assert {"reference/spec.md", "reference/commands.md"} <= set(nav)  # docs/hooks.py writes them
    for name, protocol in PROTOCOLS.items():
        if type(protocol).__module__.startswith("tui.engine.protocols."):
            assert f"protocols/{name}.md" in nav, name


def test_the_one_key_example_needs_exactly_one_key_and_runs_on_any_openai_server(
    tmp_path: Path,
) -> None:
    """The README's real-model example: one provider key, and the same spec against an
    OpenAI-compatible server (here a fake one on loopback) given each debater's api_base."""
    example = EXAMPLES / "openai-one-key.toml"
    raw = tomllib.loads(example.read_text(encoding="utf-8"))
    assert {d["api_key_env"] for d in raw["debaters"]} == {"OPENAI_API_KEY"}
    assert {d["model"].split("/")[0] for d in raw["debaters"]} == {"openai"}
    for page in (README, DOCS / "getting-started.md"):
        assert "sessions/examples/openai-one-key.toml" in page.read_text(encoding="utf-8")

    server = FakeOpenAI().start()
    try:
        answer = {
            "stance": "Postgres keeps the ledger consistent.",
            "rationale": "Transactions and constraints protect every payment.",
            "vote": "release",
        }
        server.default = Reply(json.dumps(answer))
        for debater in raw["debaters"]:
            debater["api_base"] = server.base_url
        spec = tmp_path / "one-key.toml"
        spec.write_text(tomli_w.dumps(raw), encoding="utf-8")
        env = {**os.environ, "OPENAI_API_KEY": "sk-moot-test-0123456789abcdef"}
        done = subprocess.run(
            [str(BIN / "moot"), "run", str(spec), "--headless", "--json"],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
    finally:
        server.stop()
    assert done.returncode == ExitCode.DECIDED, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["status"] == "decided" and result["result"]["decision"] == "release"
    assert server.calls == len(raw["debaters"])


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[0] == "The two commands"
    assert text.split("## The two commands\n\n```sh\n./dev.sh demo ")[0].startswith("# moot\n")
    assert (
        "Trust: what starts a program, what a tool may do, what a signature vouches for" in headings
    )
    assert "Where the rest lives" in headings


def test_every_link_in_the_readme_reaches_a_file() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 10
    assert [link for link in local if not (REPO / link).exists()] == []


# "pytest -q FILE -k EXPR" as the README, getting-started and CONTRIBUTING write it,
# across a line break too (CONTRIBUTING wraps it).
_ONE_TEST = re.compile(r"pytest(?: -[qx])*\s+(tests/\S+\.py)(?: -x)?\s+-k (\w+)")


def test_the_one_test_commands_the_docs_give_select_tests() -> None:
    """A command that selects nothing exits 5, so a reader copying it learns nothing."""
    found: set[tuple[str, str]] = set()
    for doc in ("README.md", "docs/getting-started.md", "CONTRIBUTING.md"):
        found |= set(_ONE_TEST.findall((REPO / doc).read_text(encoding="utf-8")))
    assert found, "the docs say how to run one test"
    for path, expr in sorted(found):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
            + [path, "-k", expr],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (path, expr, done.stdout[-500:])
        assert re.search(r"^\d+/\d+ tests collected", done.stdout, re.M), done.stdout[-500:]
