"""Whether a turn's negative channel says something: the rules, in one place.

The statements a kind's rules name (``StatementRules``, declared by the protocol
that adds the kind: weaknesses, suggestions, concerns, answers, reasons) must each
be a statement: not empty, not a vote, verdict or schema label, not a copy of
another item or of the motion, and at least ``min_words`` words. Fields that only
need words (a stance, a candidate) need at least one. A reason (those statements,
a rationale) must go beyond the answer it backs: one that only restates the vote,
the stance, the estimate or the pick is refused.
The functions are pure over recorded content, so the engine can re-ask with the
reason and a reader can re-check a session file with them alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from pydantic import BaseModel

from tui.engine.core.records import CONTENT_MODELS, inline_refs
from tui.engine.terms.spec import DEFAULT_MIN_WORDS


@dataclass(frozen=True)
class StatementRules:
    """What one turn kind's fields must say; the protocol that adds the kind declares them.

    ``channel``: the statements its negative channel carries, as (list or text field,
    item field or ""). ``worded``: fields that need words but may be short (a stance of
    two words). ``answers``: the fields holding the answer the kind gives, which its
    reasons (the channel and ``reasons``, e.g. a rationale) must go beyond.
    """

    channel: tuple[tuple[str, str], ...] = ()
    worded: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()


NO_RULES = StatementRules()  # a kind whose protocol checks it all itself

# One passage of the artifact can show two faults: evidence may repeat across challenges.
_MAY_REPEAT = frozenset({"evidence"})
# Answers that fill a slot without saying anything, whatever the schema.
_FILLERS = frozenset(
    {
        *"zero one two three four five six seven eight nine ten".split(),
        *"none nothing na null nil tbd todo yes no true false ok okay".split(),
        "n a",
        "same as above",
        "see above",
        "string",
        "text",
    }
)
_WORD = re.compile(r"\S*[^\W\d_]\S*")  # a run of non-space holding at least one letter
# Words any answer is framed in: a reason made only of them and the answer restates it.
_FRAMING = frozenset(
    """a an the this that these those it its it s is are was were be been being am
    i we my our me us you your they their he she so thus hence therefore because since
    as why reason reasons reasoning rationale answer estimate vote voted voting pick picked
    choose chose chosen choice stance position value number better best candidate option
    routing verdict status and or of to for in on at by with than then also just only
    simply think believe say said give given final now here there do does did""".split()
)


@lru_cache(maxsize=1024)  # the motion and the votes come back for every statement
def normal(text: str) -> str:
    """Text compared as a label or a duplicate: case, punctuation and ``_`` ignored."""
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


# The content models whose labels count: the shared kinds', and each registered protocol's
# own (the registry adds them, so a label of any protocol is no statement in another).
_LABELLED: list[type[BaseModel]] = list(CONTENT_MODELS.values())


def add_labels(models: Iterable[type[BaseModel]]) -> None:
    """Count these content models' field names and fixed values as labels too."""
    _LABELLED.extend(m for m in models if m not in _LABELLED)
    schema_labels.cache_clear()


@cache
def schema_labels() -> frozenset[str]:
    """Every field name and fixed value (verdicts, routings, statuses) of every turn kind."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.update(k for k in node.get("properties", {}) if isinstance(k, str))
            found.update(v for v in node.get("enum", []) if isinstance(v, str))
            if isinstance(node.get("const"), str):
                found.add(node["const"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for model in _LABELLED:
        walk(inline_refs(model.model_json_schema()))
    return frozenset(normal(label) for label in found)


def statement_problem(
    text: str, *, votes: Iterable[str], motion: str, min_words: int = DEFAULT_MIN_WORDS
) -> str | None:
    """Why ``text`` is not a statement, or None when it is one."""
    said = normal(text)
    if not said:
        return "is empty; say what you found"
    if said in {normal(v) for v in votes}:
        return f"{text.strip()!r} is a vote, not a statement"
    if said in schema_labels() or said in _FILLERS:
        return f"{text.strip()!r} is a label, not a statement"
    if said == normal(motion):
        return "repeats the motion; say what is wrong with the answer to it"
    words = word_count(text)
    if words < min_words:
        return f"has {words} word{'' if words == 1 else 's'}; write a statement of at least {min_words}"
    return None


RATIONALE_MIN_WORDS = 2


def rationale_problem(rationale: str, *, votes: Iterable[str], motion: str) -> str | None:
    """Why an operator's rationale is refused (the modal, ``moot decide``, headless), or None.

    The same rule as a model's statements, at two words: not empty, not a vote
    or a label, not the motion again, and words a reader can file.
    """
    problem = statement_problem(
        rationale, votes=votes, motion=motion, min_words=RATIONALE_MIN_WORDS
    )
    if problem is None:
        return None
    return f"a decision needs a rationale in words (a statement of {RATIONALE_MIN_WORDS} or more): {problem}"


@lru_cache(maxsize=256)  # asked for every turn's prompt; a handful of kinds and minimums
def rule_text(rules: StatementRules, min_words: int = DEFAULT_MIN_WORDS) -> str | None:
    """The rule as a prompt line for a kind with a negative channel, said before it is enforced."""
    fields = [sub or key for key, sub in rules.channel]
    if not fields:
        return None
    named = " and ".join(f'"{f}"' for f in dict.fromkeys(fields))
    return (
        f"Each {named} must be a statement of at least {min_words} "
        f"word{'' if min_words == 1 else 's'}: not a label, "
        "verdict or vote, and not a copy of another entry or of the motion."
    )


def _items(rules: StatementRules, content: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(path, field, value) of each statement a turn of the kind carries."""
    for key, sub in rules.channel:
        value = content.get(key)
        if not sub:
            if isinstance(value, list):
                yield from ((f"{key}[{i}]", key, v) for i, v in enumerate(value))
            elif value is not None:
                yield key, key, value
            continue
        for i, row in enumerate(value if isinstance(value, list) else []):
            if isinstance(row, dict):
                yield f"{key}[{i}].{sub}", sub, row.get(sub)


def content_problems(
    rules: StatementRules,
    content: dict[str, Any],
    *,
    votes: Iterable[str],
    motion: str,
    min_words: int = DEFAULT_MIN_WORDS,
) -> list[str]:
    """Each item of a turn that is not a statement, by field path, with the reason.

    ``rules`` are the kind's (``Protocol.rules_for``); what they do not cover, the
    protocol checks itself (``Protocol.check_state``).
    """
    votes = list(votes)
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path, name, value in _items(rules, content):
        if not isinstance(value, str):
            problems.append(f"{path}: must be text")
            continue
        problem = statement_problem(value, votes=votes, motion=motion, min_words=min_words)
        if problem is not None:
            problems.append(f"{path}: {problem}")
            continue
        said = normal(value)
        if name not in _MAY_REPEAT:
            if said in seen:
                problems.append(f"{path}: repeats {seen[said]}; each item must say something new")
                continue
            seen[said] = path
    for name in rules.worded:
        value = content.get(name)
        if isinstance(value, str) and value and not word_count(value):
            problems.append(f"{name}: {value.strip()!r} holds no words")
    flagged = {p.partition(":")[0] for p in problems}
    answer = _answer_words(rules, content)
    for path, text in _reasons(rules, content):
        if path not in flagged and normal(text) and set(normal(text).split()) <= answer:
            problems.append(f"{path}: only restates the answer; say why it holds")
    return problems


def _answer_words(rules: StatementRules, content: dict[str, Any]) -> set[str]:
    """The words of the answer a turn gives (its rows' too), and the framing around any."""
    found = set(_FRAMING)
    rows = [content, *(r for v in content.values() if isinstance(v, list) for r in v)]
    for row in rows:
        for name in rules.answers:
            value = row.get(name) if isinstance(row, dict) else None
            if isinstance(value, float) and value.is_integer():
                value = int(value)  # 1.0 is said "1"
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                found.update(normal(str(value)).split())
    return found


def _reasons(rules: StatementRules, content: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(path, text) of each reason a turn gives for its answer: its negative channel and
    its rationale."""
    for path, _name, value in _items(rules, content):
        if isinstance(value, str):
            yield path, value
    for name in rules.reasons:
        value = content.get(name)
        if isinstance(value, str):
            yield name, value
