"""Theme files (TOML) → Textual themes plus a debater colour cycle; the user config.

Shipped themes live in ``themes/``; a user may add more in
``<config dir>/themes/``. The chosen theme is remembered in
``<config dir>/config.toml`` (``MOOT_CONFIG_DIR`` overrides the config dir).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "moot-dark"
FALLBACK_COLORS = ("#7aa2f7", "#9ece6a", "#ff9e64", "#bb9af7", "#7dcfff", "#f7768e")


def config_dir() -> Path:
    try:
        from tui.paths import config_dir as shared
    except ImportError:  # pragma: no cover - tui.paths ships with the package
        env = os.environ.get("MOOT_CONFIG_DIR")
        if env:
            return Path(env)
        import platformdirs

        return Path(platformdirs.user_config_dir("moot"))
    return shared()


def shipped_themes_dir() -> Path:
    try:
        from tui.paths import themes_dir
    except ImportError:  # pragma: no cover
        return Path(__file__).resolve().parents[2] / "themes"
    return themes_dir()


def user_themes_dir() -> Path:
    return config_dir() / "themes"


def _color(value: str) -> str:
    try:
        Color.parse(value)
    except ColorParseError as err:
        raise ValueError(f"not a colour: {value!r}") from err
    return value


class ThemeFile(BaseModel):
    """What a theme TOML may contain."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
    dark: bool = True
    primary: str
    secondary: str | None = None
    accent: str | None = None
    warning: str | None = None
    error: str | None = None
    success: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    luminosity_spread: float = 0.15
    text_alpha: float = 0.95
    debater_colors: list[str] = Field(default_factory=lambda: list(FALLBACK_COLORS), min_length=1)
    variables: dict[str, str] = Field(default_factory=dict)

    @field_validator(
        "primary", "secondary", "accent", "warning", "error", "success",
        "foreground", "background", "surface", "panel", "boost",
    )
    @classmethod
    def _check_color(cls, value: str | None) -> str | None:
        return None if value is None else _color(value)

    @field_validator("debater_colors")
    @classmethod
    def _check_cycle(cls, value: list[str]) -> list[str]:
        return [_color(v) for v in value]

    def to_theme(self) -> Theme:
        return Theme(
            name=self.name,
            primary=self.primary,
            secondary=self.secondary,
            accent=self.accent,
            warning=self.warning,
            error=self.error,
            success=self.success,
            foreground=self.foreground,
            background=self.background,
            surface=self.surface,
            panel=self.panel,
            boost=self.boost,
            dark=self.dark,
            luminosity_spread=self.luminosity_spread,
            text_alpha=self.text_alpha,
            variables=dict(self.variables),
        )


@dataclass(frozen=True)
class LoadedTheme:
    theme: Theme
    debater_colors: tuple[str, ...]
    path: Path
    stem: str


def load_theme_file(path: Path) -> LoadedTheme:
    """Read and validate one theme file; ValueError names the problems."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ValueError(f"{path.name}: {err}") from None
    try:
        model = ThemeFile.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in err.errors()
        )
        raise ValueError(f"{path.name}: {problems}") from None
    return LoadedTheme(model.to_theme(), tuple(model.debater_colors), path, path.stem)


def load_themes(extra_dirs: list[Path] | None = None) -> tuple[dict[str, LoadedTheme], list[str]]:
    """Shipped then user themes (a user theme may replace a shipped one by name)."""
    themes: dict[str, LoadedTheme] = {}
    problems: list[str] = []
    dirs = [shipped_themes_dir(), user_themes_dir(), *(extra_dirs or [])]
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                loaded = load_theme_file(path)
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


# ---------------------------------------------------------------- user config
def config_path() -> Path:
    return config_dir() / "config.toml"


def load_config() -> dict[str, Any]:
    try:
        data = tomllib.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def save_config(updates: dict[str, Any]) -> None:
    """Merge ``updates`` into the config file (written atomically)."""
    path = config_path()
    data = load_config()
    data.update(updates)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(tomli_w.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only config dir must not break the console
