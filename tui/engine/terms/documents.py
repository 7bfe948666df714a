"""A document a spec names, as the session stores it: read once, hashed, kept whole."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ARTIFACT = "artifact"  # the label of the document read from [debate].artifact_file


@dataclass(frozen=True, slots=True)
class Document:
    """One document as the session stores it."""

    label: str
    path: str
    size: int
    sha256: str
    text: str
    roles: tuple[str, ...] | None = None  # None: every role may see it
    redacted: int = 0  # secrets replaced in ``text`` when it was read

    def record(self) -> dict[str, Any]:
        """The session file's ``[[documents]]`` entry."""
        out: dict[str, Any] = {
            "label": self.label,
            "path": self.path,
            "size": self.size,
            "sha256": self.sha256,
            "text": self.text,
        }
        if self.roles is not None:
            out["roles"] = list(self.roles)
        if self.redacted:
            out["redacted"] = self.redacted
        return out

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Document:
        """A stored entry; KeyError/TypeError/ValueError when it is not one."""
        roles = record.get("roles")
        doc = cls(
            label=str(record["label"]),
            path=str(record["path"]),
            size=int(record["size"]),
            sha256=str(record["sha256"]),
            text=str(record["text"]),
            roles=None if roles is None else tuple(str(r) for r in roles),
            redacted=int(record.get("redacted", 0)),
        )
        if not isinstance(record["text"], str) or not isinstance(roles, list | None):
            raise TypeError("text must be a string and roles a list")
        return doc
