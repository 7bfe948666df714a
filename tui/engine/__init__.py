"""The debate engine: spec, protocols, rules, events and session files.

Importable without Textual or LiteLLM. Names are loaded on first use, so that
importing one small module (``tui.engine.basics.errors``, say) does not load them all:
the console's start-up path depends on it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Debater": "tui.engine.specs.spec",
    "Spec": "tui.engine.specs.spec",
    "read_spec_file": "tui.engine.specs.spec",
    "validate_spec": "tui.engine.specs.spec",
    "Decision": "tui.engine.core.state",
    "Engine": "tui.engine.run.runner",
    "MootInputError": "tui.engine.basics.errors",
    "SessionError": "tui.engine.basics.errors",
    "SessionLockedError": "tui.engine.basics.errors",
    "SpecError": "tui.engine.basics.errors",
    "Slot": "tui.engine.core.schedule",
    "Turn": "tui.engine.core.records",
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
    from tui.engine.basics.errors import MootInputError, SessionError, SessionLockedError, SpecError
    from tui.engine.core.records import Turn
    from tui.engine.core.schedule import Slot
    from tui.engine.core.state import Decision
    from tui.engine.run.runner import Engine
    from tui.engine.specs.spec import Debater, Spec, read_spec_file, validate_spec


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'tui.engine' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
