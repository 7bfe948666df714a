"""moot's config file, ``<config dir>/config.toml``: read by every front end, written by one.

The console remembers its theme here (``theme = ...``); ``[telemetry]`` says where
traces go (``tui.telemetry.settings``). Reading is bounded and refuses what is not a
regular file, so a planted FIFO or a huge file cannot stall start-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.engine.basics.bounded import SPEC_BYTES, TomlRefused, toml_document
from tui.engine.basics.safeio import FileRefused, read_regular, replace_file
from tui.paths import config_dir


class ConfigRefused(ValueError):
    """The config file exists but cannot be read as TOML; the message says why."""


def config_path() -> Path:
    return config_dir() / "config.toml"


def read_config() -> dict[str, Any]:
    """The config file's tables ({} when there is none); ConfigRefused when it is unreadable."""
    path = config_path()
    if not path.exists():
        return {}
    try:
        data = toml_document(read_regular(path, SPEC_BYTES))
    except (FileRefused, TomlRefused) as err:
        raise ConfigRefused(f"{path}: {err}") from None
    return data if isinstance(data, dict) else {}


def load_config() -> dict[str, Any]:
    """The config, or {} when it cannot be read (the console starts regardless)."""
    try:
        return read_config()
    except ConfigRefused:
        return {}


def save_config(updates: dict[str, Any]) -> None:
    """Merge ``updates`` into the config file (written atomically); other tables are kept."""
    path = config_path()
    import tomli_w

    data = load_config()
    data.update(updates)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, tomli_w.dumps(data).encode("utf-8"))  # fresh temp, no link followed
    except OSError:
        pass  # a read-only config dir must not break the console
