"""The process exit codes, one definition for the CLI, the console and headless runs."""

from enum import IntEnum


class ExitCode(IntEnum):
    DECIDED = 0  # decided (or, for verify, every claim holds)
    INTERNAL = 1  # a bug: reported without a traceback
    BAD_INPUT = 2  # bad spec, session, path, refused decision, unreachable model
    UNRESOLVED = 3  # ended escalated with no operator decision
    VERIFY_FAILED = 4  # moot verify found a claim that does not hold
    INTERRUPTED = 130  # Ctrl+C or SIGTERM; the session is saved
