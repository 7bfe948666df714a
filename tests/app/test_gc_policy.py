"""The console runs with its own garbage-collector settings (tui/app/gc_policy.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui.app import gc_policy
from tui.app.app import MootApp
from tui.app.launch import launch

SPEC = Path(__file__).resolve().parents[2] / "sessions" / "examples" / "scripted-consensus.toml"


@pytest.fixture
def python_defaults() -> Iterator[None]:
    """Start from Python's own settings; leave the test process as conftest set it."""
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    yield
    gc_policy.tune_for_console()


def test_the_console_starts_with_start_up_frozen_and_fewer_collections(
    python_defaults: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[tuple[int, int, int], int]] = []

    def run(self: MootApp) -> int:
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return 0

    monkeypatch.setattr(MootApp, "run", run)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert launch(spec_path=str(SPEC)) == 0
    (threshold, frozen), *_ = seen
    assert threshold == (gc_policy.YOUNG, gc_policy.OLDER, gc_policy.OLDER)
    assert frozen > 10_000  # the modules and classes start-up made, kept out of every pass
