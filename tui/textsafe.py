"""Model and spec text made safe to show: no escapes, no control characters, bounded.

Rich and Textual only interpret markup in strings handed to them as markup; moot
always builds ``Text`` objects, and this module removes what a terminal would act on.
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    return f"\\x{ord(ch):02x}"


def printable(text: str, limit: int | None = None) -> str:
    """Escape sequences and control characters shown as ``\\x..``; tail-bounded to ``limit``."""
    if limit is not None and len(text) > limit:
        text = f"… [{len(text) - limit:,} earlier characters not shown]\n" + text[-limit:]
    text = _ANSI.sub(
        lambda m: "".join(f"\\x{ord(c):02x}" if ord(c) < 32 else c for c in m.group(0)), text
    )
    return _CONTROL.sub(_visible, text)
