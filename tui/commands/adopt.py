"""``moot adopt``: take on a session of your own that was written before signing.

A signature vouches only for the records its signer wrote, so a 0.1/0.2 file,
even resumed and signed since, is not trusted for its unsigned start. Adopting
it is the one way to vouch for those records: moot shows what they hold (the
debate, who speaks on which model, the tools it would start, how it ended),
asks, and appends an ``adopt`` action, signed by your key, naming how many
records it takes on and the hash they end at (:mod:`tui.engine.record.trust`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from tui.engine.basics.errors import MootInputError
from tui.engine.basics.vocab import OperatorAction
from tui.engine.record.keys import user_signer
from tui.engine.record.session import SessionData, SessionStore, load_session
from tui.engine.record.trust import adopt_fields, adopted_by, recorded_tools
from tui.engine.run.operator import now
from tui.plural import counted
from tui.render.textsafe import clean_line


def holdings(data: SessionData) -> Iterator[str]:
    """What the unsigned records hold, in the words a person decides on."""
    n = data.signatures.unsigned
    first, last = data.records[0].name, data.records[n - 1].name
    spec = data.spec
    yield f"{data.path}: {counted(n, 'record')} written unsigned ({first} to {last})"
    yield f"  title: {spec.debate.title}"
    yield f"  protocol: {spec.debate.protocol}; created {data.meta.get('created', 'at an unknown time')}"
    for d in spec.debaters:
        yield f"  debater {d.id}: {d.model}"
    tools = recorded_tools(data)
    for tool in tools:
        yield f"  tool {tool} (it would start when you resume)"
    if not tools:
        yield "  tools: none"
    turns = sum(1 for r in data.records[:n] if r.name.startswith("turn "))
    yield f"  {counted(turns, 'turn')} among them"
    for span in data.signatures.spans:
        yield f"  later records signed by {span.fingerprint}: {span.first} to {span.last}"
    if data.result is not None:
        yield f"  result: {data.result.get('decision')} ({data.result.get('decision_rule')})"


def adopt(
    path: str | Path, *, yes: bool, ask: Callable[[str], bool], say: Callable[[str], None]
) -> bool:
    """Adopt the file's unsigned records after showing them and asking; True if adopted.

    MootInputError (exit 2) for a changed file, one with nothing to adopt, or a
    question no one can answer (no terminal and no ``--yes``); the file is then
    left exactly as it was.
    """
    data = load_session(path)
    if changed := data.changed:
        raise MootInputError(str(path), [f"{changed}: never adopt a changed file"])
    if not data.signatures.unsigned:
        raise MootInputError(
            str(path), ["nothing to adopt: every record is signed by the key that wrote it"]
        )
    if (already := adopted_by(data)) is not None:
        raise MootInputError(str(path), [f"already adopted by {already}"])
    for line in holdings(data):
        say(clean_line(line))
    signer = user_signer()
    question = (
        f"Sign for these {counted(data.signatures.unsigned, 'record')} as yours "
        f"({signer.fingerprint})? Only if you wrote them."
    )
    if not yes and not ask(question):
        say("not adopted: the file is unchanged")
        return False
    store, loaded = SessionStore.open_existing(path, signer=signer)
    try:
        if loaded.records != data.records:  # changed while we asked: adopt only what was shown
            raise MootInputError(str(path), ["the file changed while you were asked; run again"])
        store.append_action(
            {
                "at": now(),
                "action": OperatorAction.ADOPT,
                "after_turn": len(loaded.turns),
                **adopt_fields(loaded.records, loaded.signatures.unsigned),
            }
        )
    finally:
        store.close()
    say(
        f"adopted: {counted(data.signatures.unsigned, 'record')} now signed for by {signer.fingerprint}"
    )
    return True
