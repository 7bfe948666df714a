"""How large a spec's session file could grow, said before the run.

The session store refuses any write that would take the file past what the
reader takes (:data:`tui.engine.basics.bounded.SESSION_BYTES`), so a run that outgrows
it stops, its records kept. ``moot validate`` and a run's warnings say so in
advance, from an estimate: every scheduled turn of every round, each about as
large as its debater's answers can be (the longest scripted text, or
``max_tokens`` at about four bytes a token, else a typical answer).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tui.engine.basics.bounded import SESSION_BYTES
from tui.engine.protocols import protocol_for

if TYPE_CHECKING:
    from tui.engine.terms.spec import Debater, Spec

TURN_BYTES = 2_000  # a turn's record besides its answer: ids, timings, saw, hash
ANSWER_BYTES = 16_000  # a model's answer when nothing bounds it (about 4,000 tokens)
BYTES_PER_TOKEN = 4


def answer_bytes(debater: Debater) -> int:
    """About how large one of ``debater``'s answers is recorded."""
    if debater.script is not None:
        script = debater.script.model_dump(exclude={"token_delay_ms", "turn_delay_ms"})
        texts = [json.dumps(v, ensure_ascii=False) for values in script.values() for v in values]
        return sum(sorted(map(len, texts), reverse=True)[:3])  # stance, rationale, a list
    if debater.max_tokens is not None:
        return debater.max_tokens * BYTES_PER_TOKEN
    return ANSWER_BYTES


def session_bytes(spec: Spec) -> int:
    """An estimate of the session a full run of ``spec`` writes (no extends)."""
    protocol = protocol_for(spec)
    phases = sum(len(protocol.phases(r)) for r in range(1, spec.max_rounds + 1))
    per_phase = sum(TURN_BYTES + answer_bytes(d) for d in spec.debaters)
    header = len(json.dumps(spec.model_dump(), ensure_ascii=False))
    header += sum(d.size for d in spec.documents)
    return header + phases * per_phase


def outgrow_warning(spec: Spec) -> str | None:
    """A warning when a full run could pass what a session file may hold; else None."""
    estimate = session_bytes(spec)
    if estimate <= SESSION_BYTES:
        return None
    return (
        f"a full run could write about {estimate / 1e6:,.1f} MB, past the "
        f"{SESSION_BYTES / 1e6:,.0f} MB a session file may hold; the run stops when its "
        f"file is full (fewer rounds or debaters, or a lower max_tokens, keep it within)"
    )
