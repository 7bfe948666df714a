"""The JSON schema a slot is sent: the spec's rules as enums, ids and bounds.

Every provider gets the same schema, so a server nobody here wrote (llama.cpp,
Ollama, vLLM, a LiteLLM proxy) is held to the spec's votes, verdicts and ids
exactly as the embedded model is. A provider may tighten it for its backend
(smaller lists, shorter strings) but never chooses a verdict or a vote.
Validation still uses the pydantic content models; the schema only guides.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from tui.engine.core.records import inline_refs
from tui.engine.grounding.evidence import rubric_schema
from tui.engine.specs.spec import Rubric
from tui.engine.terms.openvotes import MAX_VOTE_CHARS

STRING_MAX_LENGTH = 2000  # no single field of a turn needs more
LIST_MAX_ITEMS = 3  # a few distinct points; a model that pads a list repeats itself
MIN_STRING_LENGTH = 40  # a bound never squeezes a field below a sentence
USEFUL_STRING_LENGTH = 80  # on a small budget, fewer list items rather than shorter ones
CHARS_PER_TOKEN = 1.5  # cautious: ~4 on English prose, near 1 when a model loops on digits
TOKENS_FOR_SYNTAX = 60  # braces, keys, quotes, enums and numbers
# Fields whose text must be a statement of at least [debate].min_words words (substance.py).
STATEMENTS = frozenset(
    {"stance", "rationale", "weaknesses", "suggestions", "concern", "evidence", "answer", "reason"}
)
CHARS_PER_WORD = 4  # a statement of n words has at least about 4n characters


def kind_schema(
    model: type[BaseModel],
    votes: Sequence[str],
    rubric: Rubric | None = None,
    min_words: int = 1,
) -> dict[str, Any]:
    """A turn kind's schema: every field required, the vote an enum of the spec's votes.

    Literal fields (verdicts, severities, routings, convergence, statuses) are
    already enums; free strings and lists are bounded, statements long enough
    for ``min_words``; a rubric's answers are one per property, named by an enum
    of its ids.
    """
    out = copy.deepcopy(_model_schema(model))
    props = out.get("properties", {})
    if "routing" in props:
        props.pop("vote", None)  # the adversary critique votes through its routing
    _close(out, list(votes), max(1, min_words * CHARS_PER_WORD))
    return rubric_schema(out, rubric) if rubric is not None else out


@functools.lru_cache(maxsize=128)
def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A content model's schema, refs inlined, built once: pydantic builds it anew on each
    call, and every engine asks for each kind's (most of a thousand-item bench's time).
    Read-only: ``kind_schema`` hands out copies."""
    return inline_refs(model.model_json_schema())


def _close(node: dict[str, Any], votes: list[str], statement: int) -> None:
    props: dict[str, Any] = node.get("properties", {})
    for name, prop in list(props.items()):
        prop.pop("default", None)
        kind = prop.get("type")
        shortest = statement if name in STATEMENTS else 1
        if name == "vote" and not votes:  # open votes: the answer itself, kept short
            props[name] = {"type": "string", "minLength": 1, "maxLength": MAX_VOTE_CHARS}
        elif name == "vote":
            desc = {"description": prop["description"]} if "description" in prop else {}
            props[name] = {"type": "string", "enum": list(votes), **desc}
        elif kind == "string" and "enum" not in prop:
            prop["minLength"] = max(shortest, prop.get("minLength", 1))
            prop["maxLength"] = STRING_MAX_LENGTH
        elif kind == "array":
            items = prop.setdefault("items", {"type": "string"})
            if items.get("type") == "object":
                _close(items, votes, statement)
            elif "enum" not in items:
                prop["items"] = {
                    "type": "string",
                    "minLength": shortest,
                    "maxLength": STRING_MAX_LENGTH,
                }
            prop.setdefault("maxItems", LIST_MAX_ITEMS)
        elif kind == "object":
            _close(prop, votes, statement)
    node["required"] = list(props)
    node["additionalProperties"] = False


def fit(
    schema: dict[str, Any],
    max_tokens: int | None,
    cap: int = STRING_MAX_LENGTH,
    chars_per_token: float = CHARS_PER_TOKEN,
) -> dict[str, Any]:
    """A copy whose lists and strings are bounded so the whole object fits in ``max_tokens``.

    A model that rambles is made to close its strings instead of being cut off
    mid-object; on a small budget free lists hold fewer items (down to one), so
    each item keeps room for a sentence. Without ``max_tokens`` every free string
    is bounded by ``cap``.
    """
    out = copy.deepcopy(schema)
    limit = cap
    if max_tokens is not None:
        budget = max(0, max_tokens - TOKENS_FOR_SYNTAX) * chars_per_token
        for items in range(LIST_MAX_ITEMS, 0, -1):
            cap_lists(out, items)
            slots = max((_strings(b, 1) for b in _branches(out)), default=1)
            if budget / max(1, slots) >= USEFUL_STRING_LENGTH:
                break
        limit = int(max(MIN_STRING_LENGTH, min(cap, budget // max(1, slots))))
    for branch in _branches(out):
        _bound(branch, limit)
    return out


def end_cut_strings(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` with every string the schema's bound cut short ended at a whole sentence
    (or, failing that, a whole word) and marked ``…``.

    A constrained decoder closes a string when it reaches ``maxLength``, often
    mid-word; this keeps the words the model finished. A string stays as it is
    when ending it earlier would put it under its ``minLength``.
    """
    if isinstance(value, dict):
        props: dict[str, Any] = {}
        for branch in reversed(_branches(schema)):
            props.update(branch.get("properties", {}))
        return {k: end_cut_strings(v, props.get(k, {})) for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items", {})
        return [end_cut_strings(v, items) for v in value]
    if isinstance(value, str) and "maxLength" in schema and len(value) >= schema["maxLength"]:
        return _ended(value, int(schema.get("minLength", 1)))
    return value


def _ended(text: str, shortest: int) -> str:
    if text.rstrip().endswith((".", "!", "?", "…")):  # it ended on its own at the bound
        return text
    sentence = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
    if sentence + 1 >= max(shortest, len(text) // 2):
        return text[: sentence + 1]
    space = text.rstrip().rfind(" ")
    cut = text[:space].rstrip(" ,;:-") if space > 0 else ""
    return cut + "…" if len(cut) + 1 >= shortest else text


def cap_lists(schema: dict[str, Any], items: int) -> None:
    """At most ``items`` in every list whose size the engine did not fix (in place)."""
    for node in _branches(schema):
        kind = node.get("type")
        if kind == "object":
            for prop in node.get("properties", {}).values():
                cap_lists(prop, items)
        elif kind == "array":
            cap_lists(node.get("items", {}), items)
            fixed = "maxItems" in node and node.get("minItems") == node["maxItems"]
            if not fixed:
                node["maxItems"] = min(node.get("maxItems", LIST_MAX_ITEMS), items)


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return list(schema.get("anyOf", [schema]))


def _strings(node: dict[str, Any], times: int) -> int:
    """How many free strings an object can hold, lists counted at their maximum."""
    kind = node.get("type")
    if kind == "object":
        return sum(_strings(p, times) for p in node.get("properties", {}).values())
    if kind == "array":
        items = node.get("maxItems", LIST_MAX_ITEMS)
        return _strings(node.get("items", {}), times * max(1, items))
    if kind == "string" and "enum" not in node:
        return times
    return 0


def _bound(node: dict[str, Any], limit: int) -> None:
    kind = node.get("type")
    if kind == "object":
        for prop in node.get("properties", {}).values():
            _bound(prop, limit)
    elif kind == "array":
        _bound(node.get("items", {}), limit)
    elif kind == "string" and "enum" not in node:
        node["maxLength"] = max(limit, node.get("minLength", 1))


def negative_channel(schema: dict[str, Any], channel: tuple[str, str] | None) -> dict[str, Any]:
    """The verifier's rule as two shapes: something listed and its verdict, or nothing and its.

    ``channel`` is what the slot's protocol declares for its kind (``negative_channels``):
    the list and the verdict that stands in for an empty one; the verdict enum's other
    value goes with a non-empty list (a critic lists weaknesses with ``defects_found``,
    or none with ``no_defect_found``). The model picks the shape, the schema never picks
    for it. Without a channel, or when the schema has no such two verdicts, it is
    returned unchanged.
    """
    props = schema.get("properties", {})
    if channel is None:
        return schema
    key, nothing = channel
    verdicts = set(props.get("verdict", {}).get("enum", []))
    if key not in props or nothing not in verdicts or len(verdicts) != 2:
        return schema
    (found,) = verdicts - {nothing}
    some, none = copy.deepcopy(schema), copy.deepcopy(schema)
    some["properties"][key]["minItems"] = 1
    some["properties"]["verdict"]["enum"] = [found]
    none["properties"][key]["maxItems"] = 0
    none["properties"][key].pop("minItems", None)
    none["properties"]["verdict"]["enum"] = [nothing]
    return {"anyOf": [some, none]}
