"""Limits checked on TOML and JSON text before a parser sees it.

``tomli`` (the parser ``tomllib`` was taken from) and ``json`` recurse per
nesting level, take quadratic time on deep dotted keys and refuse integers over
4,300 digits with a ValueError, so hostile input could crash or stall them. These scans run at C speed on the text with
its strings removed and name the first limit exceeded.
"""

from __future__ import annotations

import re
from datetime import date, time
from itertools import accumulate
from typing import Any

import tomli

SPEC_BYTES = 1_000_000
SESSION_BYTES = 32_000_000
REPLY_CHARS = 2_000_000
MAX_NESTING = 32  # arrays and inline tables (TOML), arrays and objects (JSON)
MAX_KEY_PARTS = 32  # segments of one dotted key or table header
MAX_DIGITS = 100  # digits in one number

# Each string pattern is "unrolled" (runs of plain characters between escapes),
# so a megabyte-long string is one fast scan, not a per-character alternation.
_TOML_STRINGS = re.compile(
    r'"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""(?:"{1,2})?'
    r"|'''[^']*(?:'(?!'')[^']*)*'''(?:'{1,2})?"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|'[^'\n]*'"
    r"|#[^\n]*"
)
_JSON_STRINGS = re.compile(r'"[^"\\]*(?:\\[\s\S][^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_LONG_NUMBER = re.compile(rf"[0-9_]{{{MAX_DIGITS + 1}}}")
_DEEP_KEY = re.compile(rf"\.(?:[ \t]*[\w-]*[ \t]*\.){{{MAX_KEY_PARTS - 1}}}")
# Every TOML date, time and datetime holds one of these (a literal-led scan, 6x faster
# than matching the whole shape); a key like ``a-12-b`` only costs the walk.
_DATE_OR_TIME = re.compile(r"[0-9]-[0-9]{2}-|[0-9]:[0-9]")
_DEPTH = {"[": 1, "{": 1, "]": -1, "}": -1}


class TomlRefused(ValueError):
    """TOML text that is not UTF-8, exceeds a limit, or does not parse; says which."""


def _nesting(skeleton: str) -> int:
    brackets = _NOT_BRACKET.sub("", skeleton)
    return max(accumulate(map(_DEPTH.__getitem__, brackets)), default=0)


def toml_limit(text: str) -> str | None:
    """The first limit the TOML text exceeds, in words; None when it is within all."""
    return _skeleton_limit(_skeleton(text))


def _skeleton(text: str) -> str:
    """TOML text with each string and comment as ``s`` (a quoted key stays one key part):
    keys, brackets and bare values, none of which an ``s`` can join or make."""
    return _TOML_STRINGS.sub("s", text)


def _skeleton_limit(skeleton: str) -> str | None:
    if _LONG_NUMBER.search(skeleton):
        return f"a number longer than {MAX_DIGITS} digits (limit)"
    if _DEEP_KEY.search(skeleton):
        return f"a dotted key or table name of more than {MAX_KEY_PARTS} parts (limit)"
    if _nesting(skeleton) > MAX_NESTING:
        return f"arrays or inline tables nested more than {MAX_NESTING} deep (limit)"
    return None


def json_limit(text: str) -> str | None:
    """The first limit a model's JSON answer exceeds; None when it is within all."""
    if len(text) > REPLY_CHARS:
        return f"the answer is longer than {REPLY_CHARS:,} characters (limit)"
    # Strings only hide digits and brackets, never make them: an answer with no long run
    # of digits and few brackets in all is within both limits (almost every answer).
    if not _LONG_NUMBER.search(text) and text.count("{") + text.count("[") <= MAX_NESTING:
        return None
    skeleton = _JSON_STRINGS.sub("s", text)
    if _LONG_NUMBER.search(skeleton):
        return f"a number longer than {MAX_DIGITS} digits (limit)"
    if _nesting(skeleton) > MAX_NESTING:
        return f"arrays or objects nested more than {MAX_NESTING} deep (limit)"
    return None


def toml_document(data: bytes) -> dict[str, Any]:
    """Parse UTF-8 TOML bytes (a BOM is allowed) only once they are within every limit."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise TomlRefused(f"not UTF-8 text at byte {err.start}") from None
    skeleton = _skeleton(text)
    if limit := _skeleton_limit(skeleton):
        raise TomlRefused(f"refused before parsing: {limit}")
    try:
        doc = tomli.loads(text)  # tomllib's own code, compiled: a long session reads in half
    except ValueError as err:  # TOMLDecodeError, or a number tomllib cannot convert
        raise TomlRefused(f"not valid TOML: {err}") from None
    # A date or time is bare text outside strings: with none of their shape there, no walk.
    if _DATE_OR_TIME.search(skeleton) and (dated := _dated_keys(doc)):
        raise TomlRefused(
            f"{', '.join(dated[:5])}: a TOML date or time; moot files hold times as quoted text"
        )
    return doc


def _dated_keys(doc: dict[str, Any]) -> list[str]:
    """Key paths of date/time values, which no moot file uses and JSON cannot hold."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack += [(f"{path}.{k}" if path else str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(f"{path}[{i}]", v) for i, v in enumerate(value)]
        elif isinstance(value, date | time):  # datetime is a date
            found.append(path)
    return sorted(found)
