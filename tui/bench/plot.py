"""Accuracy against calls per item, one point per arm with its 95 % interval:
drawn in the terminal by plotext and kept as an SVG (the same drawing, by Rich)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import plotext as plt
from rich.console import Console
from rich.text import Text


def drawing(result: dict[str, Any], width: int = 72, height: int = 18) -> Text:
    """The plot as styled text (plotext's ANSI colours, read by Rich, never as markup)."""
    arms = [(a, f) for a, f in result["arms"].items() if f["items"]]
    plt.clear_figure()
    plt.plotsize(width, height)
    plt.theme("clear")
    plt.title("accuracy vs calls per item (95% Wilson interval)")
    plt.xlabel("calls per item")
    plt.ylabel("accuracy")
    if arms:
        xs = [f["calls_per_item"] for _, f in arms]
        ys = [f["accuracy"] for _, f in arms]
        lows = [f["accuracy"] - f["ci95"][0] for _, f in arms]
        highs = [f["ci95"][1] - f["accuracy"] for _, f in arms]
        # plotext draws symmetric bars: the wider side, so the bar covers the interval.
        plt.error(xs, ys, yerr=[max(a, b) for a, b in zip(lows, highs, strict=True)])
        plt.scatter(xs, ys, marker="dot")
        for (arm, _), x, y in zip(arms, xs, ys, strict=True):
            plt.text(f" {arm}", x, y)
        plt.xlim(0, max(xs) * 1.25 + 1)
        plt.ylim(0, 1)
    return Text.from_ansi(plt.build())


def write_svg(text: Text, path: Path, title: str) -> None:
    """The drawing as an SVG file, as a terminal would show it."""
    width = max(len(line) for line in text.plain.split("\n")) + 2
    console = Console(record=True, file=io.StringIO(), width=width)
    console.print(text)
    path.write_text(console.export_svg(title=title), "utf-8")
