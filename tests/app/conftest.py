"""Console tests: a private config and sessions folder per test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def moot_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    config = tmp_path / "config"
    sessions = tmp_path / "sessions"
    config.mkdir(exist_ok=True)
    sessions.mkdir(exist_ok=True)
    monkeypatch.setenv("MOOT_CONFIG_DIR", str(config))
    monkeypatch.setenv("MOOT_SESSIONS_DIR", str(sessions))
    return {"config": config, "sessions": sessions, "root": tmp_path}
