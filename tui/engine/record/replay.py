"""Protocol state at any point of a recorded debate, rebuilt by the protocol's own rules.

A replay (or a verification view) must show exactly what the engine decided at
that turn, so it feeds the recorded turns through the same protocol code rather
than re-deriving anything on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui.engine.core.records import Turn
from tui.engine.core.state import DebateState
from tui.engine.protocols import protocol_for
from tui.engine.protocols.base import Protocol
from tui.engine.specs.spec import Spec


def protocol_at(spec: Spec, turns: Sequence[Turn]) -> Protocol:
    """The protocol as it stood after ``turns``: recorded turns fed through its own rules.

    Phases are closed (``after_phase``) only when every slot the protocol schedules
    for them has a turn, exactly as the engine does, so a cursor in the middle of
    a phase shows that phase as still open.
    """
    protocol = protocol_for(spec)
    state = DebateState(spec, spec.max_rounds)
    group: list[Turn] = []
    expected = 0
    for turn in turns:
        if not group:  # a phase starts here: the slot numbering starts at this turn
            slots = protocol.slots(state, turn.round, turn.phase, turn.index)
            expected = max(1, len(slots))
        state.add(turn)
        group.append(turn)
        if len(group) >= expected:
            state.phase_sequence.append(turn.phase)
            try:
                protocol.after_phase(state, turn.round, turn.phase, group)
            except Exception:  # a damaged record still replays up to where it breaks
                pass
            group = []
    return protocol
