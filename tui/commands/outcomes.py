"""``moot outcomes``: over a folder of sessions, did the decisions hold, and did the votes know?

Every session file found is re-checked by ``moot verify`` first: one that fails
(or cannot be read) is left out and named on stderr, so a figure never rests on
a changed file. The figures are :mod:`tui.commands.calibration`'s; the plot is
drawn in the terminal by plotext and kept as an SVG with ``--out``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import plotext as plt
from rich.console import Console
from rich.text import Text

from tui.bench.plot import write_svg
from tui.commands.calibration import Decision, decision_of, figures, grouped
from tui.engine.basics.errors import MootInputError, SessionError
from tui.engine.record.session import load_session, sessions_dir
from tui.engine.record.verify import verify
from tui.exitcodes import ExitCode
from tui.filekind import kind_of
from tui.plural import counted
from tui.render.textsafe import clean_line


def session_files(paths: Sequence[str | Path]) -> list[Path]:
    """The ``.toml`` files named, and those under each folder named (hidden ones skipped).

    MootInputError (exit 2) for a path that is neither.
    """
    found: list[Path] = []
    missing = [str(p) for p in paths if not (os.path.isfile(p) or os.path.isdir(p))]
    if missing:
        raise MootInputError("moot outcomes", [f"{p}: no such file or folder" for p in missing])
    for p in map(Path, paths):
        if p.is_dir():
            found += sorted(
                f
                for f in p.rglob("*.toml")
                if not any(part.startswith(".") for part in f.relative_to(p).parts)
                and kind_of(f) != "spec"  # a spec beside its sessions is no session
            )
        else:
            found.append(p)
    return list(dict.fromkeys(found))


def read(files: Sequence[Path]) -> tuple[list[Decision], list[tuple[Path, str]]]:
    """The decisions of the files that verify; and each file left out, with why."""
    decisions: list[Decision] = []
    left_out: list[tuple[Path, str]] = []
    for path in files:
        try:
            data = load_session(path, gaps_ok=True)
        except SessionError as err:
            left_out.append((path, f"not a session moot can read: {err.problems[0]}"))
            continue
        report = verify(data)
        if not report.ok:
            first = report.failures[0]
            why = f"moot verify fails ({first.where}: {first.field}: {first.detail})"
            left_out.append((path, why))
            continue
        if (decision := decision_of(data)) is not None:
            decisions.append(decision)
    return decisions, left_out


def summary(
    files: Sequence[Path], decisions: Sequence[Decision], left_out: Sequence[tuple[Path, str]]
) -> dict[str, Any]:
    """The ``--json`` object: how many files, which were left out, the figures."""
    return {
        "files": len(files),
        "left_out": [{"path": str(p), "why": why} for p, why in left_out],
        **figures(decisions),
    }


def lines(report: dict[str, Any]) -> Iterator[str]:
    """The figures in words, for the terminal."""
    yield (
        f"{counted(report['with_outcome'], 'decision')} with an outcome, of "
        f"{report['decisions']} decided in {counted(report['files'], 'session file')}"
    )
    yield (
        f"held {report['held']}, failed {report['failed']}, mixed {report['mixed']} "
        "(mixed is counted apart, in neither share)"
    )
    if report["held_share"] is not None:
        lo, hi = report["ci95"]
        yield (
            f"held share {report['held_share']:.1%} of {report['held'] + report['failed']}, "
            f"95% Wilson interval {lo:.1%}–{hi:.1%}"
        )
    if report["brier_tally"] is not None:
        yield (
            f"Brier score of the tally's share: {report['brier_tally']:.4f} over "
            f"{counted(report['brier_decisions'], 'decision')} (0 is perfect; 0.5 always scores 0.25)"
        )
    if report["debaters"]:
        yield "Brier score of each debater's final vote (1 for the decision, else 0):"
        for who, f in report["debaters"].items():
            yield f"  {who}: {f['brier']:.4f} over {counted(f['votes'], 'vote')}"


def _group_line(by: str, key: str, f: dict[str, Any]) -> str:
    line = f"{by} {key}: {f['with_outcome']} of {f['decisions']} with an outcome"
    if f["held_share"] is not None:
        lo, hi = f["ci95"]
        line += f"; held {f['held_share']:.1%} ({lo:.1%}–{hi:.1%})"
    if f["brier_tally"] is not None:
        line += f"; tally Brier {f['brier_tally']:.4f}"
    if by == "debater" and key in f["debaters"]:
        line += f"; its own Brier {f['debaters'][key]['brier']:.4f}"
    return line


def drawing(report: dict[str, Any], width: int = 64, height: int = 18) -> Text:
    """The calibration plot: each bin's mean forecast against the share that held, and
    the diagonal a calibrated tally would follow (plotext's ANSI, read by Rich, never markup)."""
    plt.clear_figure()
    plt.plotsize(width, height)
    plt.theme("clear")
    plt.title("calibration: tally share for the decision vs share that held")
    plt.xlabel("tally share for the decision")
    plt.ylabel("held")
    plt.plot([0, 1], [0, 1], marker="dot")
    points = report["calibration"]
    if points:
        plt.scatter([b["forecast"] for b in points], [b["held"] for b in points], marker="O")
    plt.xlim(0, 1)
    plt.ylim(0, 1)
    return Text.from_ansi(plt.build())


def outcomes(
    paths: Sequence[str | Path],
    sessions: str | Path | None,
    *,
    as_json: bool = False,
    by: str | None = None,
    svg: str | Path | None = None,
) -> int:
    """Read, verify and sum up; print the figures (or JSON) and the plot. Exit 0."""
    if svg is not None and not Path(svg).parent.is_dir():
        raise MootInputError(str(svg), ["no such folder to write the plot in"])
    files = session_files(paths or [sessions_dir(sessions)])
    decisions, left_out = read(files)
    report = summary(files, decisions, left_out)
    if by is not None:
        report["by"] = by
        report["groups"] = grouped(decisions, by)
    for path, why in left_out:
        print(clean_line(f"moot outcomes: left out {path}: {why}"), file=sys.stderr)
    picture = drawing(report)
    if svg is not None:
        write_svg(picture, Path(svg), "moot outcomes: calibration")
    if as_json:
        print(json.dumps(report, indent=2))
        return ExitCode.DECIDED
    for line in lines(report):
        print(clean_line(line))
    for key, f in report.get("groups", {}).items():
        print(clean_line(_group_line(str(by), key, f)))
    Console(highlight=False).print(picture)
    return ExitCode.DECIDED
