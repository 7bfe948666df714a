"""The console's garbage-collector settings.

Textual makes and drops many small objects on every screen update (strips, segments and
their caches), and enough of them live long enough to reach Python's oldest generation
that, with the default thresholds, a full collection ran every few updates and walked
every object the console holds: a quarter to a third of the console's CPU in its tests.
Start-up's objects (modules, classes, themes) are never garbage, so they are frozen out
of every later collection, and the young generation is collected less often.
"""

from __future__ import annotations

import gc

YOUNG = 10_000  # Python's default is 700 allocations between young collections
OLDER = 20  # young collections per middle one, middle ones per full one (default 10, 10)


def tune_for_console() -> None:
    """Call once start-up's imports are done, before the console runs."""
    gc.freeze()
    gc.set_threshold(YOUNG, OLDER, OLDER)
