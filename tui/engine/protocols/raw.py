"""The raw spec as protocol rules read it: only shapes are trusted, nothing else.

Protocol rules run on the raw TOML tables, before (and whatever) pydantic says,
so that an operator sees every problem in one pass. This module gives those
rules typed access to tables that may hold anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui.engine.basics.family import family_of

Entry = dict[str, Any]  # one [[debaters]] table, unvalidated


@dataclass(frozen=True, slots=True)
class RawSpec:
    """The ``[debate]`` table and the ``[[debaters]]`` tables, each known to be a table."""

    debate: dict[str, Any]
    entries: list[Entry]

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> RawSpec:
        debate = raw.get("debate")
        debaters = raw.get("debaters")
        return cls(
            debate=debate if isinstance(debate, dict) else {},
            entries=[d for d in debaters if isinstance(d, dict)]
            if isinstance(debaters, list)
            else [],
        )

    @property
    def ids(self) -> list[str]:
        return [i for d in self.entries if isinstance(i := d.get("id"), str)]

    def listed(self, key: str) -> list[Any]:
        """``[debate].key`` when it is a list, else no items."""
        value = self.debate.get(key)
        return value if isinstance(value, list) else []

    def pairs(self, critics: list[Any], authors: list[Any]) -> list[tuple[Entry, Entry]]:
        """(critic, author) tables for every named critic and author that are distinct debaters."""
        by_id = {e.get("id"): e for e in self.entries}
        out = []
        for c in critics:
            for a in authors:
                ce, ae = by_id.get(c), by_id.get(a)
                if ce and ae and ce is not ae:
                    out.append((ce, ae))
        return out

    def role_problems(self, protocol: str, key: str) -> list[str]:
        """A single-debater role: named, and naming a debater."""
        value = self.debate.get(key)
        if value is None:
            return [f"debate.{key}: required for the {protocol} protocol"]
        if isinstance(value, str) and value not in self.ids:
            return [f"debate.{key}: {value!r} is not a debater id"]
        return []

    def pair_problems(self, protocol: str, author: str, critic: str) -> list[str]:
        """Both roles named, both debaters, and never the same one (no self-critique)."""
        problems = self.role_problems(protocol, author) + self.role_problems(protocol, critic)
        a, c = self.debate.get(author), self.debate.get(critic)
        if a is not None and a == c:
            problems.append(
                f"debate.{critic}: {c!r} is also the {author}; self-critique is refused"
            )
        return problems


def family(entry: Entry) -> str | None:
    """A debater table's model family (explicit, else guessed from the model), if known."""
    fam = entry.get("family")
    if isinstance(fam, str):
        return fam
    model = entry.get("model")
    return family_of(model) if isinstance(model, str) else None
