"""A protocol is its module: no file outside tui/engine/protocols/ names one.

The console, verify, prompts, the CLI and the exports ask the ``Protocol``
interface instead, so a protocol (a built-in one, or one from the
``moot.protocols`` entry points) is added without editing them.
"""

from __future__ import annotations

import re
from pathlib import Path

from tui.engine.basics.vocab import DEFAULT_PROTOCOL
from tui.engine.protocols import PROTOCOLS

TUI = Path(__file__).resolve().parents[2] / "tui"
INSIDE = TUI / "engine" / "protocols"
BUILT_IN = ("debate", "adversary", "challenge", "refine", "delphi")


def outside() -> list[Path]:
    return sorted(p for p in TUI.rglob("*.py") if INSIDE not in p.parents)


def offending(pattern: re.Pattern[str], skip: re.Pattern[str] | None = None) -> list[str]:
    hits = []
    for path in outside():
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if pattern.search(line) and not (skip and skip.search(line)):
                hits.append(f"{path.relative_to(TUI.parent)}:{n}: {line.strip()}")
    return hits


def test_no_file_outside_the_protocols_names_a_protocol_class() -> None:
    classes = "|".join(PROTOCOLS[name].__name__ for name in BUILT_IN)
    assert offending(re.compile(rf"\b({classes})\b")) == []


def test_no_file_outside_the_protocols_names_a_protocol_by_string() -> None:
    # "adversary" is also a rubric role (the one who challenges), spelled in the rubric's types.
    others = "|".join(name for name in BUILT_IN if name != DEFAULT_PROTOCOL)
    assert offending(re.compile(rf"[\"']({others})[\"']"), re.compile(r"RubricRole")) == []
    # "debate" is also the [debate] table: only its use as a protocol name counts.
    as_protocol = re.compile(rf"protocol\W.*[\"']{DEFAULT_PROTOCOL}[\"']", re.IGNORECASE)
    assert offending(as_protocol, re.compile(r"^DEFAULT_PROTOCOL = ")) == []
    assert offending(re.compile(r"delphi", re.IGNORECASE)) == []


def test_the_default_protocol_is_registered_first() -> None:
    assert next(iter(PROTOCOLS)) == DEFAULT_PROTOCOL
    assert set(BUILT_IN) <= set(PROTOCOLS)
