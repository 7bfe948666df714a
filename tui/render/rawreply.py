"""An invalid turn's raw reply as it reads: the line breaks between its JSON tokens out.

A grammar lets the embedded model put blank lines between tokens (``{``, ``"stance"``,
``:``, …) until its tokens run out; shown as stored, that is one token a line. The
record keeps the text exactly (``tui.engine.core.rawtext``); only its display is joined.
"""

from __future__ import annotations


def joined(raw: str) -> str:
    """``raw`` with each blank run holding a line break, outside its JSON strings, taken
    out; prose (a reply not opening with ``{`` or ``[``) keeps its lines."""
    if not raw.lstrip().startswith(("{", "[")):
        return raw
    out: list[str] = []
    blank: list[str] = []
    in_string = escaped = False
    for ch in raw:
        if not in_string and ch.isspace():
            blank.append(ch)
            continue
        if blank and "\n" not in blank and "\r" not in blank:
            out.extend(blank)  # a space the model meant, kept
        blank = []
        out.append(ch)
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
    if "\n" not in blank and "\r" not in blank:
        out.extend(blank)
    return "".join(out)
