"""Untrusted text for the screen: neutralised, bounded, never parsed as markup.

Model output and spec text reach the console and the headless printer only
through these helpers, then go into plain ``Text``/``Content`` objects. Control characters
(including the ESC that starts ANSI sequences) become visible symbols, so a
sequence split across streamed tokens is neutralised just the same. What is
stored in the session file is never touched: only what is drawn is bounded.
"""

from __future__ import annotations

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
    table[0x2028] = "\n"
    table[0x2029] = "\n"
    return table


_TABLE = _table()
_LINE_TABLE = {**_TABLE, 0x0A: " ", 0x2028: " ", 0x2029: " "}


def clean(text: object) -> str:
    """Replace control, escape and bidi-override characters with visible symbols."""
    return str(text).translate(_TABLE)


def clean_line(text: object) -> str:
    """Like :func:`clean`, on one line (newlines become spaces)."""
    return str(text).translate(_LINE_TABLE)


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
