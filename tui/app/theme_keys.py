"""What a theme file holds: its colour fields and the debater colours it falls back to.

Both the theme loader and the theme file schema read these.
"""

from __future__ import annotations

FALLBACK_COLORS = ("#7aa2f7", "#9ece6a", "#ff9e64", "#bb9af7", "#7dcfff", "#f7768e")

# The colour fields of a theme file: both loaders and the schema check these.
COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
