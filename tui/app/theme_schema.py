"""The pydantic schema of a theme file (imported off the start-up path)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

from tui.app.theme_keys import COLOR_KEYS, FALLBACK_COLORS


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

    @field_validator(*COLOR_KEYS)
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
            dark=self.dark,
            luminosity_spread=self.luminosity_spread,
            text_alpha=self.text_alpha,
            variables=dict(self.variables),
            **{k: getattr(self, k) for k in COLOR_KEYS},
        )
