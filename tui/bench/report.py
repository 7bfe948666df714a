"""The figures per arm, from the per-item records alone: accuracy with a Wilson 95 %
interval, calls, tokens and cost, the oracle gap (items whose right answer some agent
gave but the arm's vote missed), and for the arms of several rounds how answers moved
between rounds and how often an agent changed to the previous round's plurality."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from rich import box
from rich.table import Table

Z95 = 1.959963984540054


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``correct`` of ``n`` (honest near 0 and 1, unlike p ± 2se)."""
    if n == 0:
        return (0.0, 1.0)
    p = correct / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def arm_figures(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One arm's figures over its records."""
    n = len(records)
    correct = sum(1 for r in records if r.get("correct"))
    lo, hi = wilson(correct, n)
    calls = sum(int(r.get("calls", 0)) for r in records)
    gaps = sum(1 for r in records if r.get("gap"))
    out: dict[str, Any] = {
        "items": n,
        "correct": correct,
        "accuracy": correct / n if n else 0.0,
        "ci95": [round(lo, 4), round(hi, 4)],
        "no_answer": sum(1 for r in records if r.get("answer") is None),
        "calls": calls,
        "calls_per_item": calls / n if n else 0.0,
        "tokens": sum(int(r.get("tokens", 0)) for r in records),
        "cost": round(sum(float(r.get("cost", 0.0)) for r in records), 6),
        "failed_calls": sum(int(r.get("failed", 0)) for r in records),
        "oracle_gap_items": gaps,
        "oracle_gap": round(gaps / n, 4) if n else 0.0,
    }
    if any("agreement" in r for r in records):
        chances = sum(int(r.get("conform_chances", 0)) for r in records)
        out["conformed"] = sum(int(r.get("conformed", 0)) for r in records)
        out["conform_chances"] = chances
        out["conformity"] = round(out["conformed"] / chances, 4) if chances else None
        out["wrong_to_right"] = sum(int(r.get("wrong_to_right", 0)) for r in records)
        out["right_to_wrong"] = sum(int(r.get("right_to_wrong", 0)) for r in records)
        out["agreement"] = round(sum(float(r.get("agreement", 0)) for r in records) / n, 4)
    return out


def summary(
    records: Iterable[dict[str, Any]], arms: Sequence[str], items: int, new_calls: int
) -> dict[str, Any]:
    """The ``--json`` object: ``{"items", "arms": {arm: figures}, "new_calls"}``."""
    by_arm: dict[str, list[dict[str, Any]]] = {a: [] for a in arms}
    for r in records:
        if r["arm"] in by_arm and r["item"] < items:
            by_arm[r["arm"]].append(r)
    return {
        "items": items,
        "arms": {a: arm_figures(rs) for a, rs in by_arm.items()},
        "new_calls": new_calls,
    }


def table(result: dict[str, Any], title: str) -> Table:
    """The terminal table: one row per arm."""
    t = Table(title=title, title_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for label in (
        *("arm", "accuracy", "95% CI", "items", "calls", "per item", "tokens", "cost"),
        *("oracle gap", "conformity"),
    ):
        t.add_column(label, justify="left" if label == "arm" else "right", no_wrap=True)
    for arm, f in result["arms"].items():
        lo, hi = f["ci95"]
        t.add_row(
            arm,
            f"{f['accuracy']:.1%}",
            f"{lo:.1%}–{hi:.1%}",
            str(f["items"]),
            str(f["calls"]),
            f"{f['calls_per_item']:g}",
            str(f["tokens"]),
            f"${f['cost']:.4f}",
            f"{f['oracle_gap']:.1%}",
            "–" if f.get("conformity") is None else f"{f['conformity']:.1%}",
        )
    notes = []
    failed = sum(f["failed_calls"] for f in result["arms"].values())
    if failed:
        notes.append(f"{failed} calls failed (provider errors); each counts as no answer")
    for arm, f in result["arms"].items():
        if "agreement" in f:
            notes.append(
                f"{arm}: {f['wrong_to_right']} answers went wrong → right between rounds, "
                f"{f['right_to_wrong']} right → wrong; last-round agreement "
                f"{f['agreement']:.0%}"
            )
    t.caption = "\n".join(notes) or None
    return t
