"""A protocol's own words stay in its module.

What a protocol declares (its class, the turn kinds it adds with their content
models, the decision rules only it names) may appear in tui/ only in its own
module and in the registry that lists it. The vocabularies session files are
written in (``TurnKind``, ``DecisionRule``, the content models in records.py) hold
only the shared words; the presenter, the result report, verify, the exports and
the scripted provider ask the ``Protocol`` hooks instead.
"""

from __future__ import annotations

import re
from pathlib import Path

from tui.engine.basics.vocab import DecisionRule, TurnKind
from tui.engine.protocols import PROTOCOLS

TUI = Path(__file__).resolve().parents[2] / "tui"
REGISTRY = "tui/engine/protocols/__init__.py"  # lists every built-in protocol by class


def own_words() -> dict[str, re.Pattern[str]]:
    """Per protocol module, a pattern for the words it declares and no other protocol does."""
    declared: dict[str, set[str]] = {}
    for protocol in PROTOCOLS.values():
        words = {rf"\b{protocol.__name__}\b"}
        words |= {rf"\b{model.__name__}\b" for model in protocol.turn_kinds.values()}
        for kind in protocol.turn_kinds:
            words.add(rf"[\"']{kind}[\"']")
            if kind in set(TurnKind):
                words.add(rf"\bTurnKind\.{TurnKind(kind).name}\b")
        for rule in protocol.rule_reasons:
            words.add(rf"[\"']{rule}[\"']")
            if rule in set(DecisionRule):
                words.add(rf"\bDecisionRule\.{DecisionRule(rule).name}\b")
        declared[protocol.__module__] = words
    out = {}
    for module, words in declared.items():
        others = set().union(*(ws for m, ws in declared.items() if m != module))
        if mine := words - others:
            out[module] = re.compile("|".join(sorted(mine)))
    return out


def spread() -> dict[str, set[str]]:
    """Each file outside a protocol's module holding that protocol's words: which modules."""
    out: dict[str, set[str]] = {}
    patterns = own_words()
    for path in sorted(TUI.rglob("*.py")):
        name = str(path.relative_to(TUI.parent))
        if name == REGISTRY:
            continue
        source = path.read_text("utf-8")
        for module, pattern in patterns.items():
            if name != module.replace(".", "/") + ".py" and pattern.search(source):
                out.setdefault(name, set()).add(module)
    return out


def test_no_file_but_its_own_holds_a_protocols_words() -> None:
    assert spread() == {}


def test_an_installed_protocol_keeps_its_words_to_itself() -> None:
    plugins = [p for p in PROTOCOLS.values() if not p.__module__.startswith("tui.")]
    assert plugins  # the tests install examples/protocols/ranked
    hits = spread()
    assert all(p.__module__ not in hits.get(f, set()) for p in plugins for f in hits)
