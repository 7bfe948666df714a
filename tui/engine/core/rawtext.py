"""Model text kept for the record only (a refused answer, a cut call's partial text), bounded.

Such text is evidence, not content: nothing in the debate rests on it. A reply
can be megabytes long, and a session file the reader refuses is lost, so the
record keeps the first :data:`RAW_CHARS` characters and marks the cut with the
whole text's length and sha256 (whoever holds the original can match it).
``moot verify`` checks that a marked cut is what :func:`kept` writes.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

RAW_CHARS = 100_000  # characters of raw model text one record keeps
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def kept(text: str) -> tuple[str, dict[str, Any] | None]:
    """``text`` as the record keeps it, and the cut's mark (None when kept whole)."""
    if len(text) <= RAW_CHARS:
        return text, None
    whole = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return text[:RAW_CHARS], {"chars": len(text), "sha256": whole}


def cut_problem(text: Any, cut: Any) -> str | None:
    """Why ``text`` with the mark ``cut`` is not what :func:`kept` writes; None when it is."""
    if cut is None:
        return None
    if not isinstance(cut, dict) or set(cut) != {"chars", "sha256"}:
        return "the cut's mark must hold chars and sha256 only"
    chars, whole = cut["chars"], cut["sha256"]
    if isinstance(chars, bool) or not isinstance(chars, int) or chars <= RAW_CHARS:
        return f"a cut text was longer than {RAW_CHARS:,} characters; the mark says {chars!r}"
    if not isinstance(whole, str) or not _SHA256.match(whole):
        return "the cut's sha256 is not a sha256"
    if not isinstance(text, str) or len(text) != RAW_CHARS:
        kept_chars = len(text) if isinstance(text, str) else 0
        return f"a cut keeps the first {RAW_CHARS:,} characters; {kept_chars:,} are kept"
    return None
