"""Context documents: the files a panel holds up, read once and kept in the session.

A spec names documents in ``[[context]]`` (``file``, ``glob`` or ``text``) and
may give the artifact as ``[debate].artifact_file``. They are read when the run
starts, must be UTF-8 text and stay within :data:`FILE_BYTES` each and
:data:`TOTAL_BYTES` together (:data:`GLOB_FILES` files per glob). A key in a
document (a debater's key value, or a key shape) is redacted as it is read, so
no model, session file or export gets it; ``redacted`` counts the replacements.
Every path must resolve inside the spec's folder or a ``--allow-read`` path
(:mod:`tui.engine.grounding.readroots`); the file read is the resolved one, never a link.
The session stores every document's label, path, size, sha256 and text (size
and sha256 of that stored text), so a replay, an export or ``moot verify``
never needs the originals again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Protocol

from tui.engine.basics.redact import REDACTED, Redactor
from tui.engine.basics.safeio import FileRefused, read_regular
from tui.engine.grounding.readroots import ReadRoots
from tui.engine.grounding.roles import allowed_roles, holds, role_problems
from tui.engine.terms.documents import ARTIFACT as ARTIFACT
from tui.engine.terms.documents import Document as Document

if TYPE_CHECKING:
    from tui.engine.core.schedule import Slot
    from tui.engine.core.state import DebateState
    from tui.engine.terms.spec import Spec

ContextItem = tuple[str, str, str]  # (saw-label, heading, text): one section of a prompt

FILE_BYTES = 256 * 1024  # one document
TOTAL_BYTES = 1024 * 1024  # every document of a spec, the artifact file included
GLOB_FILES = 64  # files one glob may match
SAW_PREFIX = "context:"  # how a prompt's document items are named in ``saw``


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def of_text(
    label: str, path: str, text: str, roles: Sequence[str] | None, redacted: int = 0
) -> Document:
    return Document(
        label, path, len(text.encode("utf-8")), digest(text), text, _roles(roles), redacted
    )


def _roles(roles: Sequence[str] | None) -> tuple[str, ...] | None:
    return None if roles is None else tuple(roles)


class _Reader:
    """Reads a spec's documents, keeping the running total and every problem by key."""

    def __init__(
        self, base: Path, roots: ReadRoots, redact: Callable[[str], str], marker: str
    ) -> None:
        self.base = base
        self.roots = roots
        self.redact = redact
        self.marker = marker  # what ``redact`` puts in a secret's place
        self.total = 0
        self.problems: list[str] = []

    def document(self, label: str, path: str, text: str, roles: Sequence[str] | None) -> Document:
        """``text`` as a document, its secrets redacted (size and sha256 are of what is kept)."""
        kept = self.redact(text)
        replaced = kept.count(self.marker) - text.count(self.marker)
        return of_text(label, path, kept, roles, replaced)

    def read(self, key: str, path: Path) -> str | None:
        try:  # the resolved file, opened without following a link swapped in since
            data = read_regular(self.roots.resolve(path), FILE_BYTES, follow=False)
        except FileRefused as err:
            self.problems.append(f"{key}: {path}: {err}")
            return None
        self.total += len(data)
        if self.total > TOTAL_BYTES:
            self.problems.append(
                f"{key}: {path}: the documents together pass the limit of {TOTAL_BYTES:,} bytes"
            )
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as err:
            self.problems.append(f"{key}: {path}: not UTF-8 text (byte {err.start})")
            return None

    def shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.base))
        except ValueError:
            return str(path)


def read_documents(
    spec: Spec, base: Path, allow_read: Iterable[str | Path] = ()
) -> tuple[list[Document], list[str]]:
    """Every document the spec names, read from ``base`` (the spec's folder), and problems.

    A path that resolves outside ``base`` and every ``allow_read`` path is a problem.
    """

    reader = _Reader(base, ReadRoots.of(base, allow_read), Redactor.for_spec(spec), REDACTED)
    docs: list[Document] = []
    if spec.debate.artifact_file is not None:
        path = base / spec.debate.artifact_file
        text = reader.read("debate.artifact_file", path)
        if text is not None:
            docs.append(reader.document(ARTIFACT, reader.shown(path), text, None))
    for i, entry in enumerate(spec.context):
        key = f"context[{i}]"
        if entry.text is not None:
            text = entry.text
            reader.total += len(text.encode("utf-8"))
            docs.append(reader.document(entry.label, "(inline)", text, entry.roles))
        elif entry.file is not None:
            path = base / entry.file
            text = reader.read(f"{key}.file", path)
            if text is not None:
                docs.append(reader.document(entry.label, reader.shown(path), text, entry.roles))
        elif entry.glob is not None:
            docs += _globbed(reader, f"{key}.glob", entry.glob, entry.label, entry.roles)
    if reader.total > TOTAL_BYTES and not reader.problems:
        reader.problems.append(
            f"context: the documents together pass the limit of {TOTAL_BYTES:,} bytes"
        )
    return docs, reader.problems


def _globbed(
    reader: _Reader, key: str, pattern: str, label: str, roles: Sequence[str] | None
) -> list[Document]:
    try:  # the folder the pattern starts from, checked before any walk outside the roots
        reader.roots.check_search(reader.base.joinpath(*_literal_parts(pattern)))
    except FileRefused as err:
        reader.problems.append(f"{key}: {pattern}: {err}")
        return []
    try:
        matches = sorted(p for p in reader.base.glob(pattern) if not p.is_dir())
    except (ValueError, NotImplementedError) as err:
        reader.problems.append(f"{key}: {err}")
        return []
    if not matches:
        reader.problems.append(f"{key}: {pattern!r} matches no file")
        return []
    if len(matches) > GLOB_FILES:
        reader.problems.append(f"{key}: {len(matches)} files match; the limit is {GLOB_FILES}")
        return []
    docs = []
    for path in matches:
        text = reader.read(key, path)
        if text is not None:
            shown = reader.shown(path)
            docs.append(reader.document(f"{label}/{shown}", shown, text, roles))
    return docs


def _literal_parts(pattern: str) -> list[str]:
    """The leading parts of a glob pattern that hold no wildcard."""
    parts = []
    for part in PurePath(pattern).parts:
        if any(c in part for c in "*?["):
            break
        parts.append(part)
    return parts


def context_problems(raw: Mapping[str, Any], debater_keys: Iterable[str]) -> list[str]:
    """Rules on ``[[context]]`` and ``artifact_file`` in a raw spec, by key path."""
    problems: list[str] = []
    debate = raw.get("debate")
    debate = debate if isinstance(debate, dict) else {}
    if debate.get("artifact") is not None and debate.get("artifact_file") is not None:
        problems.append("debate.artifact_file: give artifact or artifact_file, not both")
    entries = raw.get("context")
    roles_ok = allowed_roles(raw, debater_keys)
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict):
            continue
        sources = [k for k in ("file", "glob", "text") if entry.get(k) is not None]
        if len(sources) != 1:
            problems.append(f"context[{i}]: give exactly one of file, glob or text")
        label = entry.get("label")
        if isinstance(label, str):
            if label == ARTIFACT:
                problems.append(
                    f"context[{i}].label: {ARTIFACT!r} is the artifact's; use artifact_file"
                )
            elif label in seen:
                problems.append(
                    f"context[{i}].label: duplicate label {label!r} (also context[{seen[label]}])"
                )
            seen.setdefault(label, i)
        problems += role_problems(f"context[{i}]", entry.get("roles"), roles_ok)
    return problems


def may_see(spec: Spec, doc: Document, speaker: str) -> bool:
    """Whether ``speaker`` sees ``doc``: everyone, or listed by id or a [debate] role it holds."""
    return doc.roles is None or any(holds(spec, role, speaker) for role in doc.roles)


def document_items(spec: Spec, speaker: str) -> list[ContextItem]:
    """The prompt sections for the documents ``speaker`` may see (the artifact is the protocol's)."""
    return [
        (f"{SAW_PREFIX}{d.label}", f"Document {d.label} ({d.path})", d.text)
        for d in spec.documents
        if d.label != ARTIFACT and may_see(spec, d, speaker)
    ]


class ContextSource(Protocol):
    """What a slot is shown beyond the documents: its protocol's part of the prompt."""

    def context(self, state: DebateState, slot: Slot) -> list[ContextItem]: ...


def slot_context(
    spec: Spec, protocol: ContextSource, state: DebateState, slot: Slot
) -> list[ContextItem]:
    """Everything a slot sees: its documents, then what the protocol shows it."""
    return document_items(spec, slot.speaker) + protocol.context(state, slot)


def seen_documents(items: Iterable[ContextItem]) -> dict[str, str]:
    """Label to text of the documents among a slot's items."""
    return {
        label[len(SAW_PREFIX) :]: text for label, _, text in items if label.startswith(SAW_PREFIX)
    }
