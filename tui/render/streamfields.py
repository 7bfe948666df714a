"""Read a model's streamed JSON reply as labelled fields, token by token.

Models (and scripted debaters) answer with a JSON object such as
``{"stance": "...", "rationale": "...", "vote": "reject"}``. A person watching
a turn stream wants the words, not braces and escapes, so :class:`FieldStream`
turns the raw chunks into readable text the moment they arrive: each top-level
field becomes a labelled paragraph, a list becomes bullets, and an object in a
list (a challenge, a response) becomes one bullet of ``key: value`` parts.

It is tolerant: chunks may split anywhere (inside a key, an escape or a
``\\uXXXX``), prose or a code fence before the object is skipped or shown,
and a reply that never opens an object passes through as plain text. Output is
append-only, cleaned of control characters and bounded; the stored reply is not.
No Textual here: the console and tests use it alike.
"""

from __future__ import annotations

from tui.render.textsafe import SCREEN_LIMIT, clean

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "", "f": "", "n": "\n", "r": "", "t": "    "}
TRUNCATED_NOTE = "… the rest is shown when the turn completes"


def label(key: str) -> str:
    """A field name as a person reads it: ``revised_artifact`` → ``revised artifact``."""
    return key.replace("_", " ").strip() or "value"


class FieldStream:
    """Feed raw chunks with :meth:`feed`; get the readable text they add (maybe empty)."""

    def __init__(self, limit: int = SCREEN_LIMIT) -> None:
        self.limit = limit
        self.shown = 0
        self.truncated = False
        self._mode = "start"  # start | fence | raw | json | done
        self._stack: list[str] = []  # "{" or "[" per open container
        self._expect_key = False
        self._in_string = False
        self._string_is_key = False
        self._escape: str | None = None  # the escape so far, after a backslash
        self._key = ""  # the key being read
        self._keys: list[str] = []  # the current key at each object depth
        self._in_scalar = False
        self._item_fields = 0  # values shown so far in the current list-item object

    # ------------------------------------------------------------------ API
    def feed(self, chunk: str) -> str:
        out: list[str] = []
        for ch in chunk:
            self._step(ch, out)
        return self._bounded("".join(out))

    # -------------------------------------------------------------- helpers
    def _bounded(self, text: str) -> str:
        if self.truncated or not text:
            return ""
        text = clean(text)
        if not self.shown:
            text = text.lstrip("\n")  # the first label starts the text
            if not text:
                return ""
        room = self.limit - self.shown
        if len(text) > room:
            self.truncated = True
            self.shown = self.limit
            return text[:room] + f"\n\n{TRUNCATED_NOTE}"
        self.shown += len(text)
        return text

    def _step(self, ch: str, out: list[str]) -> None:
        mode = self._mode
        if mode == "json":
            self._json(ch, out)
        elif mode == "start":
            if ch == "`":
                self._mode = "fence"  # ```json … : skip the fence line
            elif ch == "{":
                self._open_object()
            elif not ch.isspace():
                self._mode = "raw"
                out.append(ch)
        elif mode == "fence":
            if ch == "\n":
                self._mode = "start"
        elif mode == "raw":
            if ch == "{":  # prose, then the object after all
                self._open_object()
            else:
                out.append(ch)

    def _open_object(self) -> None:
        self._mode = "json"
        self._stack = ["{"]
        self._keys = [""]
        self._expect_key = True

    @property
    def _depth(self) -> int:
        return len(self._stack)

    def _in_item_object(self) -> bool:
        """Inside an object that is an item of a top-level list (a challenge, a response)."""
        return self._stack[:3] == ["{", "[", "{"] and self._depth == 3

    def _json(self, ch: str, out: list[str]) -> None:
        if self._in_string:
            self._string_char(ch, out)
        elif self._in_scalar and ch not in ",}]" and not ch.isspace():
            out.append(ch)
        else:
            self._in_scalar = False  # a comma, a bracket or a space ends a number, true/false/null
            self._token(ch, out)

    def _token(self, ch: str, out: list[str]) -> None:
        """A character outside strings and scalars: punctuation, or a value's first."""
        if ch == '"':
            self._open_string(out)
        elif ch == ":":
            self._expect_key = False
            if self._stack[-1] == "{":
                self._keys[-1] = self._key
        elif ch == ",":
            self._expect_key = self._stack[-1] == "{"
        elif ch in "{[":
            self._open(ch, out)
        elif ch in "}]":
            self._close()
        elif not ch.isspace() and not self._expect_key:
            self._in_scalar = True  # a number, true/false/null
            self._value_starts(out)
            if self._shows_value():
                out.append(ch)

    def _open_string(self, out: list[str]) -> None:
        """A string opens: a key where an object expects one, else a value."""
        self._in_string = True
        self._string_is_key = self._expect_key and self._stack[-1] == "{"
        if self._string_is_key:
            self._key = ""
        else:
            self._value_starts(out)

    def _open(self, ch: str, out: list[str]) -> None:
        """An object or a list opens: an object in a top-level list is a bullet, a
        top-level list a heading."""
        if ch == "{":
            if self._depth == 2 and self._stack[-1] == "[":
                out.append("\n- ")
                self._item_fields = 0
            self._keys.append("")
        elif self._depth == 1:
            out.append(self._heading())
        self._stack.append(ch)
        self._expect_key = ch == "{"

    def _close(self) -> None:
        if self._stack.pop() == "{":
            self._keys.pop()
        if not self._stack:
            self._mode = "done"
        else:
            self._expect_key = False

    def _value_starts(self, out: list[str]) -> None:
        """A string or scalar value begins: its label or bullet, where it has one."""
        if self._depth == 1:
            out.append(self._heading())
        elif self._depth == 2 and self._stack[-1] == "[":
            out.append("\n- ")
        elif self._in_item_object():
            out.append(("" if self._item_fields == 0 else " · ") + f"{label(self._keys[-1])}: ")
            self._item_fields += 1

    def _shows_value(self) -> bool:
        return self._depth <= 2 or self._in_item_object()

    def _heading(self) -> str:
        return f"\n\n{label(self._keys[0])}: "

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
            self._string_is_key = False
            return
        self._emit(ch, out)

    def _emit(self, text: str, out: list[str]) -> None:
        if self._string_is_key:
            self._key += text
        elif self._shows_value():
            out.append(text)
