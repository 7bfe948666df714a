"""Errors the engine raises for bad input; each carries every problem found."""

from __future__ import annotations


class MootInputError(Exception):
    """Bad user input (spec, session file, path): exit code 2, never a traceback."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(f"{source}: " + "; ".join(problems))


class SpecError(MootInputError):
    """A spec that does not validate."""


class SessionError(MootInputError):
    """A session file that cannot be loaded or continued."""


class SessionLockedError(SessionError):
    """Another process is running this session."""


class SessionExistsError(SessionError):
    """Something (a file, a link, even a dangling one) already holds the new session's name."""


class SessionFullError(SessionError):
    """A record refused because the file would pass what a session may hold; nothing written."""

    def __init__(self, source: str, problems: list[str], size: int) -> None:
        super().__init__(source, problems)
        self.size = size  # the bytes the file would have held with the refused record
