"""What ``c`` and the palette's "Copy transcript" put on the clipboard: plain text, no styles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.content import Content

from tui.app.components.cards import turn_body, turn_heading
from tui.app.components.pane import DebaterPane
from tui.render.textsafe import clean_line, shorten

if TYPE_CHECKING:
    from tui.app.screens.debate import DebateScreen
    from tui.engine.core.records import Turn
    from tui.engine.specs.spec import Spec

COPY_LIMIT = 100_000  # per section: a copy is the whole turn the engine kept, not a card's cut


def turn_text(turn: Turn) -> str:
    """``speaker (model)  #3 r1 critique → planner`` and the turn's sections, as on screen."""
    return Content.assemble(
        f"{clean_line(turn.speaker)} ({shorten(turn.model, 60)})  ",
        *turn_heading(turn),
        *turn_body(turn, COPY_LIMIT, full=True),
    ).plain


def action_text(action: dict[str, Any]) -> str:
    text = f"operator {clean_line(action.get('action', ''))}"
    for key in ("vote", "text", "rationale", "speaker", "model"):
        if action.get(key):
            text += f" · {key}: {clean_line(str(action[key]))}"
    return text


def transcript_text(spec: Spec, turns: Sequence[Turn], actions: Sequence[dict[str, Any]]) -> str:
    """The debate's title and motion, then every turn and operator action in order."""
    d = spec.debate
    blocks = [f"{clean_line(d.title)}\nmotion: {clean_line(d.motion)}"]
    after: dict[int, list[dict[str, Any]]] = {}
    for a in actions:
        after.setdefault(int(a.get("after_turn", 0)), []).append(a)
    for turn in turns:
        blocks += [action_text(a) for a in after.pop(turn.index - 1, [])]
        blocks.append(turn_text(turn))
    blocks += [action_text(a) for rest in after.values() for a in rest]
    return "\n\n".join(blocks) + "\n"


def selected_turn(screen: DebateScreen) -> Turn | None:
    """The newest turn of the debater whose pane has focus, or (one pane at a time) the
    pane shown; with neither, the newest turn of all (in a replay, the one at the cursor)."""
    focused = screen.app.focused
    pane = next(
        (n for n in (focused.ancestors_with_self if focused else []) if isinstance(n, DebaterPane)),
        None,
    )
    speaker = pane.debater_id if pane is not None else None
    if speaker is None and screen.has_class("-narrow") and not screen.showing_checks:
        speaker = screen.shown_speaker()
    mine = [t for t in screen.turns if speaker is None or t.speaker == speaker]
    return mine[-1] if mine else None
