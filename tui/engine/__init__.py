"""The debate engine: spec, protocols, rules, events and session files.

Importable without Textual or LiteLLM, so headless runs, tests and tools stay fast.
"""

from tui.engine.errors import MootInputError, SessionError, SessionLockedError, SpecError
from tui.engine.events import Slot
from tui.engine.records import Turn
from tui.engine.runner import Engine, SelfCritiqueRefused
from tui.engine.spec import Debater, Spec, read_spec_file, validate_spec
from tui.engine.state import Decision

__all__ = [
    "Debater",
    "Decision",
    "Engine",
    "MootInputError",
    "SelfCritiqueRefused",
    "SessionError",
    "SessionLockedError",
    "Slot",
    "Spec",
    "SpecError",
    "Turn",
    "read_spec_file",
    "validate_spec",
]
