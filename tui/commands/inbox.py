"""The escalation inbox: saved sessions that ended ``escalate`` and wait for a person.

That includes a deferral: the operator's own ``escalate`` vote, with its rationale.

Light on purpose (no engine run, no Rich, no Textual): the console's home screen
lists these first, and ``moot inbox`` prints them. Each file is peeked at up to
its last complete record, bounded and regular files only, so a damaged or
hostile file is skipped instead of stalling the list.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tui.engine.basics.bounded import SESSION_BYTES, TomlRefused, toml_document
from tui.engine.basics.safeio import FileRefused, read_regular
from tui.engine.basics.vocab import DEFAULT_PROTOCOL, ESCALATE, OperatorAction, is_deferral
from tui.engine.record.fileformat import COMMIT, SCHEMA

MAX_SCANNED = 2000  # newest files looked at; an inbox is not an archive


@dataclass(frozen=True)
class Awaiting:
    """One session waiting for an operator decision."""

    path: Path
    title: str
    protocol: str
    decision_rule: str
    vote_tally: dict[str, int]
    votes: list[str]
    turns: int
    modified: float
    rationale: str = ""
    deferred: bool = False  # the operator's own escalate: left for a person, with a rationale

    @property
    def why(self) -> str:
        """The rule, or the deferral and its rationale, as a list shows it."""
        if self.deferred:
            return f"deferred: {self.rationale}" if self.rationale else "deferred"
        return self.decision_rule

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["path"] = str(self.path)
        return out


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _committed(data: bytes) -> bytes:
    cut = data.rfind(COMMIT.encode())
    return data[: cut + len(COMMIT)] if cut >= 0 else b""


def peek(path: Path) -> Awaiting | None:
    """The session at ``path`` if it awaits a person, else None (never raises on bad files)."""
    try:
        doc = toml_document(_committed(read_regular(path, SESSION_BYTES)))
        modified = os.stat(path).st_mtime
    except (FileRefused, TomlRefused, OSError):
        return None
    if doc.get("schema") != SCHEMA:
        return None
    result = _table(doc, "result")
    actions = doc.get("operator_actions")
    if not awaits_a_person(result, actions if isinstance(actions, list) else []):
        return None
    debate = _table(_table(doc, "spec"), "debate")
    tally = _table(result, "vote_tally")
    votes = debate.get("votes")
    turns = doc.get("turns")
    return Awaiting(
        path=path,
        title=str(debate.get("title", path.stem)),
        protocol=str(debate.get("protocol", DEFAULT_PROTOCOL)),
        decision_rule=str(result.get("decision_rule", "")),
        vote_tally={str(k): v for k, v in tally.items() if isinstance(v, int)},
        votes=[str(v) for v in votes] if isinstance(votes, list) else [],
        turns=len(turns) if isinstance(turns, list) else 0,
        modified=modified,
        rationale=str(result.get("rationale", "")),
        deferred=is_deferral(ESCALATE, result.get("decision_rule")),
    )


def awaits_a_person(result: dict[str, Any] | None, actions: list[Any]) -> bool:
    """Escalated, and no operator decision since but (at most) an escalate of their own.

    A decision the process recorded but stopped before writing into the result
    still settles it; the operator's escalate defers it, and it stays waiting.
    """
    if (result or {}).get("decision") != ESCALATE:
        return False  # running, interrupted, or decided
    decides = [
        a for a in actions if isinstance(a, dict) and a.get("action") == OperatorAction.DECIDE
    ]
    return not decides or decides[-1].get("vote") == ESCALATE


def awaiting(directory: str | Path) -> list[Awaiting]:
    """Sessions in ``directory`` waiting for a decision, newest first."""
    folder = Path(directory)
    if not os.path.isdir(folder):  # never raises: a name too long (from the environment) is none
        return []
    files: list[tuple[float, Path]] = []
    for path in folder.glob("*.toml"):
        if path.name.startswith("."):
            continue
        try:
            files.append((path.stat().st_mtime, path))
        except OSError:
            continue
    files.sort(key=lambda f: (f[0], f[1].name), reverse=True)
    found = (peek(path) for _, path in files[:MAX_SCANNED])
    return [a for a in found if a is not None]


def tally_text(tally: dict[str, int]) -> str:
    """Each option's votes; none cast (an estimate's panel votes on nothing) is "no votes",
    never a row of zeros."""
    if not any(tally.values()):
        return "no votes"
    return ", ".join(f"{vote} {count}" for vote, count in tally.items())
