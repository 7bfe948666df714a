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
from typing import Any

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


# Files that read some of a protocol's [result] fields by name, and why they must.
RESULT_FIELDS_READ: dict[str, str] = {
    # Renumbers a 0.1.0 file's turn references, refine's winning_turn among them: the
    # format of a past version, which no protocol of today writes.
    "tui/engine/record/upgrade.py": "winning_turn, incumbent_turn, challenger_turn",
}


def scripted_engines() -> list[Any]:
    """Each shipped scripted example without tools, played to its end."""
    from tests.helpers import run_engine
    from tui.engine.specs.spec import read_spec_file

    engines = []
    for path in sorted((TUI.parent / "sessions" / "examples").glob("scripted-*.toml")):
        spec, raw = read_spec_file(path)
        if not spec.tools:
            engines.append(run_engine(raw)[0])
    return engines


def own_result_fields() -> dict[str, set[str]]:
    """Per built-in protocol, the ``[result]`` keys its shipped scripted example writes
    beyond the shared ones (``ResultRecord``): its ``report`` and its decisions' extras.
    Only compound names (``judge_rounds``) are looked for: a single word (``verdict``,
    ``seed``) is also a content field or a spec key elsewhere."""
    from tui.engine.run.report import ResultRecord

    shared = set(ResultRecord.__annotations__)
    out: dict[str, set[str]] = {}
    for engine in scripted_engines():
        module = engine.protocol.__module__
        out.setdefault(module, set()).update(set(engine.result()) - shared)
    return {
        m: keys - set().union(*(k for n, k in out.items() if n != m)) for m, keys in out.items()
    }


def test_no_shared_reader_names_a_protocols_result_fields() -> None:
    """The report, the exports, the console's panels and verify read a protocol's own
    result fields only through its hooks (``result_sections``, ``result_summary``, ...)."""
    fields = own_result_fields()
    assert {"tui.engine.protocols.challenge", "tui.engine.protocols.refine"} <= set(fields)
    found: dict[str, set[str]] = {}
    for path in sorted(TUI.rglob("*.py")):
        name = str(path.relative_to(TUI.parent))
        source = path.read_text("utf-8")
        for module, keys in fields.items():
            if name == module.replace(".", "/") + ".py":
                continue
            hits = {k for k in keys if "_" in k and re.search(rf"[\"']{k}[\"']", source)}
            if hits:
                found.setdefault(name, set()).update(hits)
    assert sorted(found) == sorted(RESULT_FIELDS_READ), found


def test_the_panels_take_a_protocols_words_from_its_view_data() -> None:
    """The panels are generic: what a judge picks, what the standing candidate is called,
    how each order is shortened, a findings panel's title and its words and tones come in
    the protocol's ``view_data``, so no file but the protocol's own (and the 0.1.0
    upgrade) quotes those words."""
    words: dict[str, set[str]] = {}
    for engine in scripted_engines():
        for view in engine.protocol.views:
            data = engine.protocol.view_data(view, engine.state.turns)
            named = [*data.get("picks", []), *data.get("orders", {})]
            named += [data[k] for k in ("standing_label", "title", "unanswered") if k in data]
            words.setdefault(engine.protocol.__module__, set()).update(map(str, named))
    assert {"incumbent", "challenger"} <= words["tui.engine.protocols.refine"]
    assert {"challenges", "defender: no answer yet"} <= words["tui.engine.protocols.challenge"]
    found = set()
    for path in sorted(TUI.rglob("*.py")):
        name = str(path.relative_to(TUI.parent))
        source = path.read_text("utf-8")
        for module, own in words.items():
            if name not in (module.replace(".", "/") + ".py", *RESULT_FIELDS_READ):
                found |= {(name, w) for w in own if re.search(rf"[\"']{w}[\"']", source)}
    assert found == set()
