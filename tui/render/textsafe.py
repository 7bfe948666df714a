"""Untrusted text made safe for each output: the terminal, Markdown, JSON and HTML.

One sanitiser per output, applied where the text is written, never to what is stored:

- terminal (console, headless printer, CLI messages): :func:`clean` and
  :func:`clean_line` turn control characters (including the ESC that starts ANSI
  sequences, C1 and bidi overrides) into visible symbols, so a sequence split
  across streamed tokens is neutralised just the same; the text then goes into
  plain ``Text``/``Content`` objects, never markup, and is bounded on screen;
- Markdown (the export): :func:`md_text`, :func:`md_inline` and :func:`md_code`
  apply the terminal rules, then escape every character that could open a
  heading, list, quote, table row, link, image, HTML tag or code fence, and
  every bare URL or address GitHub would turn into a link;
- JSON (the export, ``verify --json``): :func:`json_text` escapes C1, bidi,
  line-separator and lone-surrogate characters as ``\\uXXXX``, which
  ``json.dumps(ensure_ascii=False)`` would write raw;
- HTML (``moot serve``'s decide page): :func:`html_text` applies the terminal
  rules, then escapes ``& < > " '``, so text is never a tag or leaves an attribute.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

SCREEN_LIMIT = 20_000
CARD_LIMIT = 1_500


def _table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        table[code] = chr(0x2400 + code)  # ␀ … ␟ (␛ for ESC)
    table[0x0A] = "\n"
    table[0x09] = "    "
    table[0x7F] = "\u2421"  # ␡
    for code in range(0x80, 0xA0):  # C1 controls (CSI, OSC, …)
        table[code] = "\ufffd"
    # Bidirectional overrides and isolates can reorder what the operator reads.
    for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C):
        table[code] = "\ufffd"
    for code in range(0xD800, 0xE000):  # a lone surrogate cannot even be encoded
        table[code] = "\ufffd"
    table[0x2028] = "\n"
    table[0x2029] = "\n"
    return table


_TABLE = _table()
_LINE_TABLE = {**_TABLE, 0x0A: " ", 0x2028: " ", 0x2029: " "}


def clean(text: object) -> str:
    """Replace control, escape and bidi-override characters with visible symbols."""
    return str(text).replace("\r\n", "\n").translate(_TABLE)


def clean_line(text: object) -> str:
    """Like :func:`clean`, on one line (newlines become spaces)."""
    return str(text).replace("\r\n", "\n").translate(_LINE_TABLE)


def bound(text: str, limit: int = SCREEN_LIMIT, keep: str = "head") -> str:
    """At most ``limit`` characters of ``text`` for display, saying how many were left out."""
    if len(text) <= limit:
        return text
    hidden = len(text) - limit
    if keep == "tail":
        return f"… {hidden:,} earlier characters not shown …\n" + text[-limit:]
    return text[:limit] + f"\n… {hidden:,} more characters not shown (kept in the session file)"


def shorten(text: str, width: int) -> str:
    """One line of at most ``width`` characters."""
    line = clean_line(text).strip()
    return line if len(line) <= width else line[: max(0, width - 1)] + "…"


# Markdown. Inline constructs (emphasis, code, links, images, autolinks, HTML,
# entities, strikethrough, table cells) all need one of these characters.
# ``_`` inside a word (snake_case) opens nothing, so it is left as is.
_MD_INLINE = re.compile(r"([\\`*\[\]<|~&]|(?<![^\W_])_|_(?![^\W_]))")
# Block constructs that start a line (after any indent): ATX heading, quote,
# bullet, setext underline or thematic break, ordered list item. Fences and
# ``*``/``_`` breaks start with a character already escaped above.
_MD_LINE_START = re.compile(
    r"^([ \t]*)(#+(?=[ \t]|$)|>|[-+](?=[ \t]|$)|[-=]+(?=[ \t]*$)|\d{1,9}(?=[.)](?:[ \t]|$)))",
    re.MULTILINE,
)


# GitHub links bare URLs too (GFM's extended autolinks). A backslash before the
# scheme's colon or after ``www`` stops the URL and www forms; the email form is
# found after escapes are decoded, so an address is shown as a code span instead.
_MD_URL = re.compile(r"(?i)(https?|ftp)(:)(?=//)|(?<![a-z0-9])(www)(\.)")
_MD_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def md_text(text: object) -> str:
    """Text for a Markdown file: terminal-clean, every line unable to open any construct.

    Each line loses its leading and trailing blanks: an indent would open a code block
    (or, in a quote, read as markdownlint's MD027), trailing spaces a hard break (MD009).
    """
    plain = "\n".join(line.strip(" \t") for line in clean(text).split("\n"))
    parts, at = [], 0
    for email in _MD_EMAIL.finditer(plain):
        parts += [_md_escape(plain[at : email.start()]), md_code(email.group())]
        at = email.end()
    parts.append(_md_escape(plain[at:]))
    return _MD_LINE_START.sub(_escape_line_start, "".join(parts))


def _md_escape(text: str) -> str:
    out = _MD_INLINE.sub(r"\\\1", text)
    return _MD_URL.sub(lambda m: (m[1] or m[3]) + "\\" + (m[2] or m[4]), out)


def _escape_line_start(match: re.Match[str]) -> str:
    lead, mark = match.group(1), match.group(2)
    if mark[0].isdigit():  # ``1.`` → ``1\.``: the number stays readable
        return lead + mark + "\\"
    return lead + "\\" + mark


def md_inline(text: object) -> str:
    """Like :func:`md_text`, on one line (a list item, a table cell, a heading): a line
    break reads as a space, as Markdown's own soft break does (``<br>`` is inline HTML)."""
    return " ".join(md_text(text).split("\n"))


def html_text(text: object) -> str:
    """Text for an HTML page, in an element or a quoted attribute: never markup."""
    return html.escape(clean(text), quote=True)


def md_code(text: object) -> str:
    """A one-line code span, fenced longer than any backtick run inside it."""
    body = clean_line(text)
    if not body:
        return ""
    fence = "`" * (max((len(run) for run in re.findall("`+", body)), default=0) + 1)
    pad = " " if body[0] in "` " or body[-1] in "` " else ""
    return f"{fence}{pad}{body}{pad}{fence}"


# JSON: characters json.dumps(ensure_ascii=False) writes raw that a terminal or
# reader acts on: DEL and C1 controls, bidi marks, JavaScript line separators,
# and lone surrogates (which would not even encode as UTF-8).
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def json_rows(doc: dict[str, Any]) -> str:
    """``doc`` as JSON a line per key and per item of a list, escaped as :func:`json_text`.

    As readable as an indented dump for a long session (a turn a line) and several
    times faster: each line is one call of ``json``'s C encoder, which indenting turns off.
    """
    lines = []
    for key, value in doc.items():
        if isinstance(value, list) and value:
            items = ",\n    ".join(_compact(v) for v in value)
            lines.append(f"  {_compact(key)}: [\n    {items}\n  ]")
        else:
            lines.append(f"  {_compact(key)}: {_compact(value)}")
    return _escaped("{\n" + ",\n".join(lines) + "\n}")


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _escaped(text: str) -> str:
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_text(doc: Any, indent: int | None = 2) -> str:
    """``doc`` as JSON, readable non-ASCII kept, every control or bidi character escaped."""
    return _escaped(json.dumps(doc, indent=indent, ensure_ascii=False))
