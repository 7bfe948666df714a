"""Theme files (TOML) → Textual themes plus a debater colour cycle; the user config.

Shipped themes live in ``themes/``; a user may add more in
``<config dir>/themes/``. The chosen theme is remembered in the config file
(``tui.config``; ``MOOT_CONFIG_DIR`` overrides the config dir).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

from tui.app.theme_keys import COLOR_KEYS as COLOR_KEYS
from tui.app.theme_keys import FALLBACK_COLORS as FALLBACK_COLORS
from tui.engine.basics.bounded import SPEC_BYTES, TomlRefused, toml_document
from tui.engine.basics.safeio import FileRefused, read_regular
from tui.paths import config_dir, themes_dir

DEFAULT_THEME = "moot-dark"


def user_themes_dir() -> Path:
    """Theme files of the user's own, beside the config file."""
    return config_dir() / "themes"


@dataclass(frozen=True)
class LoadedTheme:
    theme: Theme
    debater_colors: tuple[str, ...]
    path: Path
    stem: str


_KEYS = {
    *COLOR_KEYS,
    "name",
    "dark",
    "luminosity_spread",
    "text_alpha",
    "debater_colors",
    "variables",
}


def _read(path: Path) -> dict[str, Any]:
    try:  # bounded, regular files only, like specs
        return toml_document(read_regular(path, SPEC_BYTES))
    except (FileRefused, TomlRefused) as err:
        raise ValueError(f"{path.name}: {err}") from None


def quick_theme_file(path: Path) -> LoadedTheme:
    """Start-up path: read a theme without importing pydantic (~200 ms saved).

    It refuses what the schema refuses in the common cases (unknown keys, bad
    colours); :func:`load_theme_file` is the full validation, run after the
    first paint and by the tests.
    """
    raw = _read(path)
    unknown = set(raw) - _KEYS
    if unknown or not isinstance(raw.get("name"), str) or "primary" not in raw:
        raise ValueError(f"{path.name}: not a valid theme (use load_theme_file for details)")
    try:
        for key in COLOR_KEYS:
            if key in raw:
                Color.parse(raw[key])
        colors = [str(c) for c in raw.get("debater_colors", FALLBACK_COLORS)]
        for c in colors:
            Color.parse(c)
        theme = Theme(
            name=raw["name"],
            dark=bool(raw.get("dark", True)),
            luminosity_spread=float(raw.get("luminosity_spread", 0.15)),
            text_alpha=float(raw.get("text_alpha", 0.95)),
            variables={str(k): str(v) for k, v in dict(raw.get("variables", {})).items()},
            **{k: raw[k] for k in COLOR_KEYS if k in raw},
        )
    except (ColorParseError, TypeError, ValueError) as err:
        raise ValueError(f"{path.name}: {err}") from None
    return LoadedTheme(theme, tuple(colors) or FALLBACK_COLORS, path, path.stem)


def load_theme_file(path: Path) -> LoadedTheme:
    """Read and validate one theme file with its pydantic schema; ValueError names problems."""
    from pydantic import ValidationError

    from tui.app.theme_schema import ThemeFile

    raw = _read(path)
    try:
        model = ThemeFile.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in err.errors()
        )
        raise ValueError(f"{path.name}: {problems}") from None
    return LoadedTheme(model.to_theme(), tuple(model.debater_colors), path, path.stem)


def load_themes(
    extra_dirs: list[Path] | None = None, *, quick: bool = False
) -> tuple[dict[str, LoadedTheme], list[str]]:
    """Shipped then user themes (a user theme may replace a shipped one by name)."""
    loader = quick_theme_file if quick else load_theme_file
    themes: dict[str, LoadedTheme] = {}
    problems: list[str] = []
    dirs = [themes_dir(), user_themes_dir(), *(extra_dirs or [])]
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                loaded = loader(path)
            except ValueError as err:
                problems.append(str(err))
                continue
            themes[loaded.theme.name] = loaded
    return themes, problems


def resolve_theme_name(name: str, themes: dict[str, LoadedTheme], known: set[str]) -> str | None:
    """Accept a theme's name, its file stem (``dark``) or a built-in Textual theme name."""
    if name in themes or name in known:
        return name
    for loaded in themes.values():
        if loaded.stem == name or loaded.theme.name == f"moot-{name}":
            return loaded.theme.name
    return None
