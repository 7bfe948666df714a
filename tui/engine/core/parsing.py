"""Tolerant reading of model output: code fences and prose around one JSON object."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from tui.engine.basics.bounded import json_limit

MAX_OBJECT_STARTS = 64
_SURROGATE = re.compile("[\ud800-\udfff]")


class TurnParseError(ValueError):
    """Model text that does not hold a valid turn; the message is fed back on re-ask."""


def as_text(text: str) -> str:
    """Model text with lone surrogates (undecodable bytes upstream) as U+FFFD.

    Such a string cannot be encoded as UTF-8, so it could be neither printed nor
    saved; it only arises from a provider's broken decoding or JSON escapes.
    """
    return _SURROGATE.sub("\ufffd", text)


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text``, ignoring fences and prose around it.

    Limits are checked first: ``json`` recurses per nesting level and refuses
    integers over 4,300 digits with a ValueError, and a reply is untrusted.
    """
    if limit := json_limit(text):
        raise TurnParseError(limit)
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
            if isinstance(value, dict):
                return value
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            pass
    decoder = json.JSONDecoder()
    start = text.find("{")
    tries = 0
    while start != -1 and tries < MAX_OBJECT_STARTS:  # bounded: hostile text may hold many
        tries += 1
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise TurnParseError("the answer holds no JSON object")


def parse_turn(text: str, model: type[BaseModel], votes: list[str]) -> BaseModel:
    """Parse and validate one turn; raise TurnParseError saying what is wrong.

    An empty ``votes`` means open votes: any answer, normalised by the protocol's check.
    """
    data = extract_json_object(text)
    if "\\u" in text or _SURROGATE.search(text):  # where a lone surrogate can come from
        _no_surrogate(json.dumps(data, ensure_ascii=False))
    return _valid(data, model, votes)


def check_content(data: dict[str, Any], model: type[BaseModel], votes: list[str]) -> BaseModel:
    """A recorded turn's content held to every rule its reply was (``moot verify``).

    The content is already JSON-shaped, so its text is only checked, never parsed again.
    """
    text = json.dumps(data, ensure_ascii=False)
    if limit := json_limit(text):
        raise TurnParseError(limit)
    _no_surrogate(text)
    return _valid(data, model, votes)


def _no_surrogate(text: str) -> None:
    if _SURROGATE.search(text):
        raise TurnParseError("the answer holds an unpaired surrogate (not text)")


def _valid(data: dict[str, Any], model: type[BaseModel], votes: list[str]) -> BaseModel:
    """``data`` as ``model``, its vote (if it has one) among ``votes``."""
    try:
        content = model.model_validate(data)
    except ValidationError as err:
        parts = []
        for e in err.errors():
            loc = ".".join(str(p) for p in e["loc"]) or "answer"
            parts.append(f"{loc}: {e['msg']}")
        raise TurnParseError("; ".join(parts)) from None
    if "routing" in model.model_fields or "vote" not in model.model_fields:
        return content  # no vote, or the routing is the vote (from a fixed set)
    vote = content.vote  # type: ignore[attr-defined]
    if votes and vote not in votes:
        raise TurnParseError(f"vote: {vote!r} is not one of {', '.join(votes)}")
    return content
