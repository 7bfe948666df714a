"""The debate engine: spec, protocols, rules, events and session files.

Importable without Textual or LiteLLM. Names are loaded on first use, so that
importing one small module (``tui.engine.errors``, say) does not load them all:
the console's start-up path depends on it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Debater": "tui.engine.spec",
    "Spec": "tui.engine.spec",
    "read_spec_file": "tui.engine.spec",
    "validate_spec": "tui.engine.spec",
    "Decision": "tui.engine.state",
    "Engine": "tui.engine.runner",
    "MootInputError": "tui.engine.errors",
    "SessionError": "tui.engine.errors",
    "SessionLockedError": "tui.engine.errors",
    "SpecError": "tui.engine.errors",
    "Slot": "tui.engine.schedule",
    "Turn": "tui.engine.records",
}
__all__ = [
    "Debater",
    "Decision",
    "Engine",
    "MootInputError",
    "SessionError",
    "SessionLockedError",
    "Slot",
    "Spec",
    "SpecError",
    "Turn",
    "read_spec_file",
    "validate_spec",
]

if TYPE_CHECKING:
    from tui.engine.errors import MootInputError, SessionError, SessionLockedError, SpecError
    from tui.engine.records import Turn
    from tui.engine.runner import Engine
    from tui.engine.schedule import Slot
    from tui.engine.spec import Debater, Spec, read_spec_file, validate_spec
    from tui.engine.state import Decision


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'tui.engine' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
