"""Where a spec's documents may be read from: its own folder tree, and what the command line adds.

A spec names files (``[[context]]`` ``file`` and ``glob``, ``[debate].artifact_file``)
whose text is sent to its models, and a spec may come from anyone, so a spec
alone must not be able to send ``~/.ssh/id_ed25519`` to the server it names. A
path is resolved with every symlink followed, and read only when the real file
lies inside the spec's folder or inside a path the person running moot named
with ``--allow-read``; no key of the spec can widen this.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tui.engine.basics.safeio import FileRefused


def real(path: str | Path) -> Path:
    """``path`` with every symlink resolved; FileRefused for text that is no path."""
    try:
        return Path(os.path.realpath(path))
    except ValueError:  # a NUL character: no file can be named by it
        raise FileRefused("not a path: it holds a NUL character") from None


@dataclass(frozen=True, slots=True)
class ReadRoots:
    """The real folder of the spec and the real paths ``--allow-read`` granted."""

    spec_folder: Path
    allowed: tuple[Path, ...] = ()

    @classmethod
    def of(cls, spec_folder: str | Path, allow_read: Iterable[str | Path] = ()) -> ReadRoots:
        return cls(real(spec_folder), tuple(real(p) for p in allow_read))

    @property
    def roots(self) -> tuple[Path, ...]:
        return (self.spec_folder, *self.allowed)

    def resolve(self, path: str | Path) -> Path:
        """The real file to open for ``path``; FileRefused when it lies outside every root."""
        target = real(path)
        if any(target.is_relative_to(root) for root in self.roots):
            return target
        raise self._outside(target)

    def check_search(self, folder: str | Path) -> None:
        """A glob may walk ``folder`` only when it is in a root, or holds a path the command
        line allowed (each match is still resolved on its own); FileRefused otherwise,
        before any walk."""
        start = real(folder)
        inside = any(start.is_relative_to(root) for root in self.roots)
        if not inside and not any(path.is_relative_to(start) for path in self.allowed):
            raise self._outside(start)

    def _outside(self, target: Path) -> FileRefused:
        beyond = " and every --allow-read path" if self.allowed else ""
        return FileRefused(
            f"outside the spec's folder ({self.spec_folder}){beyond}, so it is not read; "
            f"to send it to the models, run with --allow-read {target}"
        )
