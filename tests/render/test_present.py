"""The presenter: every turn kind as labelled sections, and three thin outputs over it."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.helpers import builtin_kinds, run_engine
from tui.app.components.cards import turn_content
from tui.cli import main
from tui.commands.headless import turn_text
from tui.engine.core.records import Turn
from tui.engine.protocols.adversary import ADVERSARY_CRITIQUE
from tui.engine.protocols.refine import JUDGMENT
from tui.engine.specs.spec import read_spec_file
from tui.render.export import _turn_md
from tui.render.present import Emphasis, Section, present, words
from tui.render.textsafe import md_inline

SCRIPTED = ["consensus", "adversary", "challenge", "refine", "rubric", "delphi"]


@cache
def _turns(name: str) -> tuple[Turn, ...]:
    spec, _ = read_spec_file(EXAMPLES / f"scripted-{name}.toml")
    engine, _ = run_engine(spec)
    return tuple(engine.state.turns)


def _all_turns() -> list[Turn]:
    return [t for name in SCRIPTED for t in _turns(name)]


def _shown_text(sections: tuple[Section, ...]) -> str:
    """Everything the presenter says of a turn, flattened for substring checks."""
    out: list[str] = []
    for s in sections:
        out += [s.label, s.text]
        out += [f"{f.label} {f.value}" for f in s.facts]
        for item in s.items:
            out += [item.tag, item.status, item.text]
            out += [f"{f.label} {f.value}" for f in item.details]
    return "\n".join(out)


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [str(value)]


def test_the_examples_cover_every_turn_kind() -> None:
    assert {t.kind for t in _all_turns()} == set(builtin_kinds())


@pytest.mark.parametrize("name", SCRIPTED)
def test_every_field_a_model_filled_is_presented(name: str) -> None:
    for turn in _turns(name):
        shown = _shown_text(present(turn))
        content = {k: v for k, v in turn.content.items() if k != "vote"}  # the vote is the turn's
        for leaf in _leaves(content):
            assert leaf in shown or words(leaf) in shown, (turn.kind, leaf)


def test_engine_facts_are_presented() -> None:
    challenge = next(t for t in _turns("challenge") if t.derived.get("challenge_ids"))
    tags = [i.tag for s in present(challenge) for i in s.items]
    assert tags == challenge.derived["challenge_ids"]
    judgment = next(t for t in _turns("refine") if t.kind == JUDGMENT)
    assert f"= {judgment.derived['picked']}" in _shown_text(present(judgment))
    assert judgment.variant and judgment.variant in _shown_text(present(judgment))


def test_rubric_shows_evidence_then_rationale_then_the_verdict_given() -> None:
    failed = next(t for t in _turns("rubric") if t.derived.get("rubric", {}).get("pass") is False)
    sections = {s.label: s for s in present(failed)}
    summary = {f.label: f.value for f in sections["rubric"].facts}
    assert summary == {
        "rubric": "fail",
        "missing evidence": str(failed.derived["rubric"]["missing_evidence"]),
    }
    props = sections["rubric properties"]
    assert props.full_only  # the console's rubric panel shows them; the card does not
    for item, prop in zip(props.items, failed.derived["rubric"]["properties"], strict=True):
        labels = [f.label for f in item.details]
        assert labels[-2:] == ["rationale", "verdict"]
        assert all(label.startswith("evidence") for label in labels[:-2])
        assert item.details[-1].value == "no (claimed yes)"  # claimed yes, no admitted evidence
        assert "refused: " in item.details[0].value and prop["evidence"][0]["why"] in (
            item.details[0].value
        )


def test_invalid_turn_shows_the_error_and_the_raw_reply_only() -> None:
    turn = Turn(0, 1, "proposal", "a", "position", "m", "f", invalid=True, error="bad", raw="{x")
    sections = present(turn)
    assert [(s.label, s.text) for s in sections] == [("error", "bad"), ("raw reply", "{x")]


def test_an_invalid_local_reply_reads_as_the_text_it_was_not_a_token_a_line() -> None:
    """The embedded model's grammar lets it put blank lines between JSON tokens: the raw
    reply is shown joined (every output: console, headless, Markdown), the strings intact."""
    raw = '{\n\n"stance"\n\n:\n\n"Ship it:\\n staged"\n\n,\n\n"rationale"\n\n:\n\n"The flag'
    turn = Turn(0, 1, "proposal", "a", "position", "m", "f", invalid=True, error="cut", raw=raw)
    shown = {s.label: s.text for s in present(turn)}
    assert shown["raw reply"] == '{"stance":"Ship it:\\n staged","rationale":"The flag'
    assert any('{"stance":"Ship it:' in line for line in _turn_md(turn))
    assert '{"stance":"Ship it' in turn_text(turn).plain
    prose = "I cannot answer that.\n\nThe motion is unclear."
    turn = Turn(0, 1, "proposal", "a", "position", "m", "f", invalid=True, error="x", raw=prose)
    assert {s.label: s.text for s in present(turn)}["raw reply"] == prose  # its own lines


def test_an_unknown_kind_shows_every_field_literally() -> None:
    turn = Turn(4, 1, "p", "a", "future_kind", "m", "f", content={"claim": "c", "n": 3})
    assert [(s.label, s.emphasis, s.text) for s in present(turn)] == [
        ("claim", Emphasis.TEXT, "c"),
        ("n", Emphasis.TEXT, "3"),
    ]


def _visible(section: Section) -> list[str]:
    """What every output must show of a section: its values (labels may be styled apart)."""
    if section.emphasis is Emphasis.FACTS:
        return [f.value for f in section.facts]
    if section.emphasis is Emphasis.LIST:
        return [x for i in section.items for x in (i.tag, i.status, i.text) if x]
    return [section.text]


@pytest.mark.parametrize("name", SCRIPTED)
def test_the_three_outputs_show_what_the_presenter_says(name: str) -> None:
    for turn in _turns(name):
        card = turn_content(turn).plain
        printed = turn_text(turn).plain
        markdown = "\n".join(_turn_md(turn))
        for section in present(turn):
            for value in _visible(section):
                first_line = value.splitlines()[0]
                if not section.full_only:
                    assert first_line in card, (turn.kind, value)
                assert first_line in printed, (turn.kind, value)
                assert md_inline(first_line) in markdown, (turn.kind, value)


def test_card_and_report_number_turns_from_one() -> None:
    first, second = _turns("consensus")[:2]
    assert turn_content(first).plain.startswith("#1 r1 ")
    assert _turn_md(second)[0].startswith("### Turn 2 · round 1 · ")


def test_outputs_escape_model_text_each_their_own_way() -> None:
    hostile = "[bold]x[/] \x1b[31m <b>&"
    turn = Turn(0, 1, "proposal", "a", "position", "m", "f", content={"stance": hostile})
    assert "␛[31m" in turn_content(turn).plain  # the escape made visible, markup not parsed
    assert "[bold]x[/]" in turn_text(turn).plain and "\x1b" not in turn_text(turn).plain
    assert "\\<b>\\&" in "\n".join(_turn_md(turn))  # no HTML in the report


def test_the_presenter_imports_no_ui_library() -> None:
    probe = "import sys, tui.render.present\nprint(sorted(m for m in ('rich', 'textual') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"


WRONG_SHAPES: list[Any] = [True, 7, "text", [1, {"a": 2}], {"x": [True]}]


@pytest.mark.parametrize("wrong", WRONG_SHAPES, ids=repr)
def test_a_field_of_the_wrong_type_is_shown_as_stored_never_raised(wrong: Any) -> None:
    """A hand-edited or damaged file: every field of every kind swapped for another type."""
    for turn in _all_turns():
        fields = [*turn.content, *(["rubric"] if "rubric" in turn.derived else [])]
        for key in fields:
            content = {**turn.content, key: wrong} if key in turn.content else turn.content
            derived = {**turn.derived, "rubric": wrong} if key == "rubric" else turn.derived
            damaged = dataclasses.replace(turn, content=content, derived=derived)
            sections = present(damaged)  # raises nothing
            shown = _shown_text(sections)
            if key not in ("vote", "rubric"):  # the vote is the turn's, shown in its heading
                assert all(leaf in shown for leaf in _leaves(wrong)), (turn.kind, key, shown)
            turn_content(damaged)  # the console card, from the same sections
            _turn_md(damaged)  # the Markdown export


def test_a_damaged_turn_says_so_and_keeps_its_fields() -> None:
    turn = next(t for t in _turns("adversary") if t.kind == ADVERSARY_CRITIQUE)
    damaged = dataclasses.replace(turn, content={**turn.content, "suggestions": True})
    sections = present(damaged)
    assert sections[0].label == "damaged" and "moot verify" in sections[0].text
    shown = _shown_text(sections)
    assert "True" in shown and str(turn.content["weaknesses"][0]) in shown
    assert "damaged" not in _shown_text(present(turn))  # an intact turn says nothing of it


DAMAGE = [  # (example, where in the file): each made `export` exit 1 before
    ("adversary", ("turns", 1, "content", "suggestions")),
    ("adversary", ("turns", 1, "content", "weaknesses")),
    ("adversary", ("result", "vote_tally")),
    ("challenge", ("result", "challenges")),
    ("refine", ("result", "judge_rounds")),
    ("rubric", ("turns", 1, "derived", "rubric")),
]


@cache
def _session_text(name: str, folder: str) -> str:
    out = Path(folder) / f"{name}.toml"
    spec = EXAMPLES / f"scripted-{name}.toml"
    assert main(["run", str(spec), "--headless", "--out", str(out)]) == 0
    return out.read_text()


@pytest.mark.parametrize("fmt", ["markdown", "json", "adr"])
@pytest.mark.parametrize(
    ("name", "where"), DAMAGE, ids=[f"{n}:{'.'.join(map(str, w))}" for n, w in DAMAGE]
)
def test_export_of_a_session_with_a_damaged_field_exits_cleanly(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    name: str,
    where: tuple[Any, ...],
    fmt: str,
) -> None:
    """Found by the fuzzer: `suggestions = true` in a stored critique made `export` exit 1."""
    import tomllib

    import tomli_w

    folder = tmp_path_factory.getbasetemp() / "damaged-exports"
    folder.mkdir(exist_ok=True)
    doc = tomllib.loads(_session_text(name, str(folder)))
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = True
    damaged = folder / f"{name}-{'-'.join(map(str, where))}.toml"
    damaged.write_text(tomli_w.dumps(doc) + "# moot:commit\n")
    capsys.readouterr()
    assert main(["export", str(damaged), "--format", fmt]) == 0
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err
    assert "hash chain is broken" in err  # the edit is still reported
    if fmt == "markdown" and where[0] == "turns":
        assert "does not have its kind's shape" in out
    if fmt == "markdown" and where[0] == "result":
        assert "The stored result does not have its shape" in out
