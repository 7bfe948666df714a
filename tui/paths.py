"""Where shipped files live: the repository's folders, or the installed wheel's."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import platformdirs

_REPO = Path(__file__).resolve().parent.parent


def _shipped(repo_rel: str, package: str) -> Path:
    candidate = _REPO / repo_rel
    if candidate.is_dir():
        return candidate
    return Path(str(resources.files(package)))


def examples_dir() -> Path:
    """The example specs (``sessions/examples/``)."""
    return _shipped("sessions/examples", "tui._examples")


def themes_dir() -> Path:
    """The themes shipped with moot (``themes/``)."""
    return _shipped("themes", "tui._themes")


def config_dir() -> Path:
    """User config (theme choice, user themes); ``MOOT_CONFIG_DIR`` overrides it."""
    env = os.environ.get("MOOT_CONFIG_DIR")
    return Path(env) if env else Path(platformdirs.user_config_dir("moot"))
