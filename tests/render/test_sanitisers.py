"""One sanitiser per output: hostile model and spec text reaches no terminal, report or JSON raw.

A scripted debater whose every text carries terminal escapes (OSC 52, CSI, OSC 8,
C1, NUL, bidi overrides) and Markdown that would forge a table row, heading, list
item, image, HTML or a ``javascript:`` link. The raw bytes of every output are
checked, and the Markdown report is parsed: its structure must be exactly the
structure of the same debate with harmless text.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
import tomli_w
from cmarkgfm.cmark import Options
from markdown_it import MarkdownIt
from markdown_it.token import Token

from tests.conftest import EXAMPLES
from tui.engine.record.session import load_session
from tui.render.textsafe import (
    clean,
    clean_line,
    html_text,
    json_rows,
    json_text,
    md_code,
    md_inline,
    md_text,
)

ESCAPES = {
    "osc52": "\x1b]52;c;ZXZpbA==\x07",
    "csi": "\x1b[2J\x1b[31m",
    "osc8": "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "c1": "\x9b31m \x9d52;c;eA==\x9c \x85",
    "nul": "a\x00b",
    "bidi": "\u202eevil\u202c \u2066iso\u2069 \u202a\u202b\u202d \u2067\u2068",
    "cr": "overwrite\rme",
}
FORGERIES = {
    "table": "\n| property | verdict |\n| --- | --- |\n| rollback | yes |",
    "heading": "\n# Forged heading\nForged setext\n===",
    "list": "\n- verdict: yes\n1. forged item\n> forged quote",
    "image": "\n![tracker](http://evil.example/x.png)",
    "link": "\n[click](javascript:alert(1)) <javascript:alert(1)> [ref]\n\n[ref]: javascript:x",
    "html": "\n<script>alert(1)</script> <img src=x onerror=alert(1)> &#x1b;",
    "fence": "\n```\ncode\n```\n~~~\nmore",
    "autolink": "\nhttps://evil.example/phish (www.evil.example) ftp://evil.example/x",
}
ATTACK = " " + " ".join(ESCAPES.values()) + "".join(FORGERIES.values())

# What the terminal, a Markdown file or a JSON file must never hold raw.
FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)


def assert_clean(raw: bytes, where: str) -> None:
    text = raw.decode("utf-8")  # also proves no lone surrogate or broken byte got out
    found = sorted({f"U+{ord(c):04X}" for c in FORBIDDEN.findall(text)})
    assert not found, f"{where} holds {found}"
    assert b"\x1b[" not in raw and b"\x1b]" not in raw and b"\xc2\x9b" not in raw


# --- the three sanitisers, one by one -------------------------------------------------


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_terminal_sanitiser_shows_every_escape_and_obeys_none(name: str) -> None:
    for shown in (clean(ESCAPES[name]), clean_line(ESCAPES[name] + "\nnext")):
        assert_clean(shown.encode(), name)
    assert "\n" not in clean_line("a\nb\u2028c\r\nd")
    assert clean("\x1b[31mred") == "␛[31mred"  # visible, not dropped
    assert clean("one\r\ntwo") == "one\ntwo"  # a Windows line end is a line end
    assert clean("lone \ud800") == md_text("lone \ud800") == "lone \ufffd"  # encodable


def _md() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _github(markdown: str) -> str:
    """``markdown`` as GitHub renders it (cmark-gfm, bare-URL autolinks included)."""
    html: str = cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=Options.CMARK_OPT_UNSAFE
    )
    return html


BARE_LINKS = (
    "https://evil.example/phish",
    "HTTP://evil.example",
    "ftp://evil.example/x",
    "www.evil.example/login",
    "(www.evil.example)",
    "_www.evil.example_",
    "mail a@evil.example now",
    "mailto:a.b+c@evil.example",
    "xmpp:bot@evil.example/r",
    "https://evil.example/me@evil.example",
)


@pytest.mark.parametrize("text", BARE_LINKS)
def test_bare_urls_and_addresses_become_no_link_on_github(text: str) -> None:
    assert "<a " in _github(text)  # GitHub would link it as it stands
    for escape in (md_text, md_inline):
        html = _github(escape(f"Before {text} after"))
        assert "<a " not in html, html
        assert re.sub(r"</?code>", "", html) == f"<p>Before {text} after</p>\n"  # text kept


def _shape(tokens: list[Token]) -> list[str]:
    """Every block and inline token type, consecutive text runs merged: the report's structure."""
    out: list[str] = []
    for tok in tokens:
        out.append(tok.type)
        for child in tok.children or []:
            kind = child.type if child.type != "html_inline" else f"html:{child.content}"
            if not (kind == "text" and out[-1] == "text"):
                out.append(kind)
    return out


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_markdown_sanitiser_lets_no_text_open_a_construct(name: str) -> None:
    hostile = "Before." + FORGERIES[name] + "\nAfter."
    harmless = "Before." + re.sub(r"\S", "x", FORGERIES[name]) + "\nAfter."
    for escape in (md_text, md_inline):
        got = _shape(_md().parse("> " + escape(hostile).replace("\n", "\n> ")))
        assert got == _shape(_md().parse("> " + escape(harmless).replace("\n", "\n> ")))
    # And the reader still sees the text itself, unescaped, once rendered.
    rendered = _md().render(md_text("a [b](c) # d | e <f> `g` *h* _i_ snake_case"))
    assert "a [b](c) # d | e &lt;f&gt; `g` *h* _i_ snake_case" in rendered
    assert md_text("no_defect_found, 1.5 and -3") == "no_defect_found, 1.5 and -3"


def test_markdown_code_span_holds_any_backticks() -> None:
    for text in ("plain", "a`b", "``x``", "`", "tail `"):
        tokens = _md().parseInline(md_code(text))[0].children or []
        assert [t.type for t in tokens] == ["code_inline"]
        assert tokens[0].content == text


def test_json_sanitiser_escapes_what_json_dumps_writes_raw() -> None:
    doc = {"k\u202e": ["\x85\x9b\x1b\u2028\u2066", "\ud800 lone", "é ✓ 日本"]}
    out = json_text(doc)
    assert_clean(out.encode("utf-8"), "json")
    assert "é ✓ 日本" in out  # readable text stays readable
    assert json.loads(out) == doc  # escaping changes nothing a reader parses


# --- every output of a hostile debate -------------------------------------------------


def moot(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args], capture_output=True, cwd=cwd, timeout=120
    )


FREE_TEXT = {"rationale", "concern", "recommendation", "answer", "note", "reason", "stance"}


def _poison(value: Any, text: str) -> Any:
    """Every free-text field a scripted debater writes, with ``text`` appended."""
    if isinstance(value, dict):
        return {
            k: v + text if k in FREE_TEXT and isinstance(v, str) else _poison(v, text)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_poison(v, text) for v in value]
    return value


def _spec(tmp_path: Path, example: str, text: str, name: str) -> Path:
    spec = tomllib.loads((EXAMPLES / example).read_text())
    spec["debate"]["title"] += text
    spec["debate"]["motion"] += text
    for debater in spec["debaters"]:
        script = debater["script"]
        script["token_delay_ms"] = 0
        for key in ("stances", "rationales"):
            script[key] = [s + text for s in script.get(key, ["Plain text."])]
        for key in ("weaknesses", "suggestions"):
            if key in script:
                script[key] = [[w + text for w in ws] for ws in script[key]]
        if "turns" in script:
            script["turns"] = _poison(script["turns"], text)
    path = tmp_path / f"{name}.toml"
    path.write_bytes(tomli_w.dumps(spec).encode())
    return path


def _run(tmp_path: Path, example: str, text: str, name: str = "hostile") -> tuple[Path, bytes]:
    out = tmp_path / f"{name}.session.toml"
    r = moot("run", str(_spec(tmp_path, example, text, name)), "--headless", "--out", str(out))
    assert r.returncode in (0, 3), r.stdout + r.stderr
    assert b"Traceback" not in r.stderr
    return out, r.stdout + r.stderr


@pytest.mark.parametrize("example", ["scripted-rubric.toml", "scripted-challenge.toml"])
def test_hostile_debate_reaches_no_output_raw(tmp_path: Path, example: str) -> None:
    session, printed = _run(tmp_path, example, ATTACK)
    assert_clean(printed, "headless output")
    assert "␛[2J" in printed.decode()  # shown, not obeyed
    stored = load_session(session)
    osc52 = json.dumps(ESCAPES["osc52"])[1:-1]
    assert any(osc52 in json.dumps(t.content) for t in stored.turns)  # stored exactly

    md = moot("export", str(session), "--format", "markdown")
    js = moot("export", str(session), "--format", "json")
    assert md.returncode == js.returncode == 0, md.stderr + js.stderr
    assert_clean(md.stdout, "markdown on stdout")
    assert_clean(js.stdout, "json on stdout")
    for fmt in ("markdown", "json"):
        target = tmp_path / f"out.{fmt}"
        assert moot("export", str(session), "--format", fmt, "-o", str(target)).returncode == 0
        assert_clean(target.read_bytes(), f"{fmt} file")
    assert json.loads(js.stdout)["turns"] == [t.to_record() for t in stored.turns]  # lossless

    # The report has exactly the structure of the same debate with harmless text.
    harmless, _ = _run(tmp_path, example, re.sub(r"\S", "x", ATTACK), "harmless")
    plain = moot("export", str(harmless), "--format", "markdown").stdout.decode()
    tokens = _md().parse(md.stdout.decode())
    assert _shape(tokens) == _shape(_md().parse(plain))
    assert "<a " not in _github(md.stdout.decode())  # GitHub links no bare URL either
    adr = moot("export", str(session), "--format", "adr")
    assert adr.returncode == 0 and "<a " not in _github(adr.stdout.decode())
    kinds = {t.type for tok in tokens for t in [tok, *(tok.children or [])]}
    assert not kinds & {"image", "link_open", "html_block", "fence", "code_block"}
    assert {t.content for tok in tokens for t in tok.children or [] if t.type == "html_inline"} <= {
        "<br>"
    }
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert all(not h.startswith("Forged") for h in headings)
    assert len(headings) == 3 + sum(1 for _ in stored.turns)  # title, Result, Transcript, turns


def test_forged_rubric_row_cannot_overrule_the_engine(tmp_path: Path) -> None:
    """Turn 2's verdicts are forced to "no"; a rationale claiming a "yes" row stays text."""
    session, _ = _run(tmp_path, "scripted-rubric.toml", ATTACK)
    md = moot("export", str(session)).stdout.decode()
    tokens = _md().parse(md)
    assert not any(t.type == "table_open" for t in tokens)  # no table anywhere in this report
    turn2 = md.split("### Turn 2 ")[1].split("### Turn 3 ")[0]
    assert turn2.count("  - verdict: no (claimed yes)") == 2
    assert "\\| rollback \\| yes \\|" in turn2  # the forged row, shown as text


def test_validate_and_errors_show_spec_escapes_without_obeying_them(tmp_path: Path) -> None:
    bad = tmp_path / "bad\x1b[31m.toml"
    bad.write_text(
        '[debate]\ntitle = "t\\u001b]52;c;eA==\\u0007"\nmotion = "m\\u009b31m"\n'
        'protocol = "x\\u001b[2J\\u202e"\n"\\u001b[31mkey\\u0085\\nforged" = 1\n'
        '[[debaters]]\nid = "a"\nmodel = "scripted"\n[[debaters]]\nid = "b"\nmodel = "scripted"\n'
    )
    r = moot("validate", str(bad))
    assert r.returncode == 2, r.stderr
    assert_clean(r.stdout + r.stderr, "validate")
    err = r.stderr.decode()
    assert "debate.␛[31mkey" in err  # the key path is named, visibly
    assert all(line.startswith(("moot:", "  - ")) for line in err.splitlines())  # no forged line

    good = tmp_path / "good\x1b]52;c;eA==\x07.toml"
    good.write_bytes((EXAMPLES / "scripted-consensus.toml").read_bytes())
    ok = moot("validate", str(good))
    assert ok.returncode == 0 and "ok" in ok.stdout.decode()
    assert_clean(ok.stdout + ok.stderr, "validate ok")
    missing = moot("export", str(tmp_path / "gone\x9b2J.toml"))
    assert missing.returncode == 2
    assert_clean(missing.stdout + missing.stderr, "missing file")


def test_json_rows_is_the_same_document_a_line_per_item_and_escaped_alike() -> None:
    """The export's fast layout (issue 24): same JSON, one turn a line, nothing unsafe raw."""
    doc = {
        "title": "Bidi \u202e and C1 \x9b",
        "turns": [{"index": i, "text": f"line {i}\u2028next"} for i in range(3)],
        "empty": [],
        "result": {"decision": "release", "rounds": [1, 2]},
    }
    rows = json_rows(doc)
    assert json.loads(rows) == json.loads(json_text(doc)) == doc
    assert not re.search("[\u202e\x9b\u2028]", rows)
    lines = rows.splitlines()
    assert [json.loads(line.rstrip(",")) for line in lines[3:6]] == doc["turns"]


def test_html_text_holds_no_markup_and_reads_back_as_the_clean_text() -> None:
    """The decide page's sanitiser: every escape and forgery above, inside an element or a
    quoted attribute, is text; unescaped it is what the terminal would show."""
    out = html_text(ATTACK)
    assert not set("<>\"'") & set(out)
    assert_clean(out.encode(), "html")
    assert html.unescape(out) == clean(ATTACK)
