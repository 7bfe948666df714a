"""Turn a model's streamed JSON reply into readable Markdown, token by token.

Models answer with a JSON object (``{"stance": "...", "rationale": "...", ...}``).
Showing the braces and escapes would be noise, so this small incremental reader
emits each top-level field as a labelled paragraph (and lists as bullets) the
moment its characters arrive. Output is append-only, so it can feed
``Markdown.get_stream``. Text that is not JSON passes through unchanged. The
output is cleaned of control characters and bounded; the stored reply is not.
"""

from __future__ import annotations

from tui.textsafe import SCREEN_LIMIT, clean

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "", "f": "", "n": "\n", "r": "", "t": "    "}
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]<>#|~"})


def _md_escape(text: str) -> str:
    """Keep model text from turning into links, images, HTML or code in Markdown."""
    return text.translate(_MD_SPECIAL)


class ReadableStream:
    """Feed raw chunks; get Markdown fragments back (possibly empty)."""

    def __init__(self, limit: int = SCREEN_LIMIT, markdown: bool = True) -> None:
        self.limit = limit
        self.markdown = markdown
        self.shown = 0
        self.truncated = False
        self._mode = "start"  # start | fence | json | raw
        self._stack: list[str] = []  # "{" or "["
        self._expect_key = False
        self._in_string = False
        self._string_is_key = False
        self._escape: str | None = None  # pending escape text after a backslash
        self._key = ""
        self._current_key = ""
        self._in_scalar = False

    # ------------------------------------------------------------------ API
    def feed(self, chunk: str) -> str:
        out: list[str] = []
        for ch in chunk:
            self._step(ch, out)
        return self._limit("".join(out))

    # -------------------------------------------------------------- helpers
    def _esc(self, text: str) -> str:
        return _md_escape(text) if self.markdown else text

    def _limit(self, text: str) -> str:
        if self.truncated or not text:
            return ""
        text = clean(text)
        room = self.limit - self.shown
        if len(text) > room:
            self.truncated = True
            self.shown = self.limit
            note = "… the rest is shown when the turn completes"
            return text[:room] + (f"\n\n*{note}*" if self.markdown else f"\n\n{note}")
        self.shown += len(text)
        return text

    def _step(self, ch: str, out: list[str]) -> None:
        mode = self._mode
        if mode == "raw":
            out.append(self._esc(ch))
            return
        if mode == "start":
            if ch.isspace():
                return
            if ch == "`":
                self._mode = "fence"
                return
            if ch == "{":
                self._mode = "json"
                self._stack.append("{")
                self._expect_key = True
                return
            self._mode = "raw"
            out.append(self._esc(ch))
            return
        if mode == "fence":
            if ch == "\n":
                self._mode = "start"
            return
        if mode == "done":
            return
        self._json(ch, out)

    def _json(self, ch: str, out: list[str]) -> None:
        if self._in_string:
            self._string_char(ch, out)
            return
        if self._in_scalar:
            if ch in ",}]" or ch.isspace():
                self._in_scalar = False
            else:
                out.append(self._esc(ch))
                return
        depth = len(self._stack)
        if ch == '"':
            self._in_string = True
            self._string_is_key = self._expect_key and bool(self._stack) and self._stack[-1] == "{"
            if self._string_is_key:
                self._key = ""
            elif depth == 1:
                out.append(self._label())
            elif depth == 2 and self._stack[-1] == "[":
                out.append("\n- ")
        elif ch == ":":
            self._expect_key = False
            if depth == 1:
                self._current_key = self._key
        elif ch == ",":
            self._expect_key = bool(self._stack) and self._stack[-1] == "{"
        elif ch == "{":
            self._stack.append("{")
            self._expect_key = True
        elif ch == "[":
            if depth == 1:
                out.append(self._label())
            self._stack.append("[")
            self._expect_key = False
        elif ch in "}]":
            if self._stack:
                self._stack.pop()
            if not self._stack:
                self._mode = "done"
        elif not ch.isspace() and depth == 1 and not self._expect_key:
            self._in_scalar = True
            out.append(self._label() + self._esc(ch))

    def _label(self) -> str:
        key = self._current_key.replace("_", " ") or "value"
        if not self.markdown:
            return f"\n\n{key}: "
        return f"\n\n**{_md_escape(key)}:** "

    def _string_char(self, ch: str, out: list[str]) -> None:
        if self._escape is not None:
            self._escape += ch
            esc = self._escape
            if esc[0] == "u":
                if len(esc) < 5:
                    return
                try:
                    decoded = chr(int(esc[1:5], 16))
                except ValueError:
                    decoded = "\ufffd"
            else:
                decoded = _ESCAPES.get(esc, esc)
            self._escape = None
            self._emit(decoded, out)
            return
        if ch == "\\":
            self._escape = ""
            return
        if ch == '"':
            self._in_string = False
            if self._string_is_key:
                self._string_is_key = False
            return
        self._emit(ch, out)

    def _emit(self, text: str, out: list[str]) -> None:
        if self._string_is_key:
            self._key += text
        elif len(self._stack) <= 2:
            out.append(self._esc(text))
