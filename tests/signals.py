"""Child processes a test will signal start with SIGINT at Python's default.

A shell starts a background job with SIGINT ignored, and children inherit that:
``./dev.sh test &`` (or a loaded-machine bench) would then run every moot the
tests start deaf to the SIGINT they send. Passed as ``preexec_fn``.
"""

from __future__ import annotations

import signal


def sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def sigint_ignored() -> None:
    """As a background job starts: what a SIGTERM must still stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
