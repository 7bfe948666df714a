"""The speaker-schedule timeline: every scheduled slot and its state."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from tui.render.textsafe import shorten

GLYPH = {
    "done": ("✓", "$success"),
    "speaking": ("▶", "bold $accent"),
    "waiting": ("·", "$text-muted"),
    "invalid": ("✗", "bold $error"),
    "failed": ("!", "bold $error"),
}


@dataclass
class Entry:
    index: int
    round: int
    phase: str
    speaker: str
    target: str | None
    status: str = "waiting"


class Timeline(VerticalScroll):
    """One line per slot, grouped by round and phase; follows the current slot."""

    class Changed(Message):
        """Redrawn: the compact line and the narrow layout's shown pane follow."""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: dict[int, Entry] = {}
        self.current: int | None = None
        self.border_title = "timeline"

    def compose(self) -> ComposeResult:
        yield Static(markup=False, id="timeline-lines")

    def clear(self) -> None:
        self.entries.clear()
        self.current = None
        self.redraw()

    def add_slots(self, slots: list[tuple[int, int, str, str, str | None]]) -> None:
        for index, round_no, phase, speaker, target in slots:
            if index not in self.entries:
                self.entries[index] = Entry(index, round_no, phase, speaker, target)
        self.redraw()

    def mark(self, index: int, status: str, *, render: bool = True) -> None:
        entry = self.entries.get(index)
        if entry is None:
            return
        entry.status = status
        if status == "speaking":
            self.current = index
        if render:
            self.redraw()

    def set_current(self, index: int | None) -> None:
        self.current = index
        self.redraw()

    @property
    def current_speaker(self) -> str | None:
        entry = self.entries.get(self.current) if self.current is not None else None
        return entry.speaker if entry else None

    @property
    def latest_speaker(self) -> str | None:
        """Who speaks now, else who spoke last (a narrow terminal shows that pane)."""
        spoken = [e for _, e in sorted(self.entries.items()) if e.status != "waiting"]
        return self.current_speaker or (spoken[-1].speaker if spoken else None)

    def compact(self) -> Content:
        """The current round and phase on one line, for a narrow terminal."""
        if not self.entries:
            return Content("(nothing scheduled yet)")
        ordered = sorted(self.entries)
        anchor = self.current if self.current in self.entries else None
        if anchor is None:  # nothing speaking: the last slot that has been through
            done = [i for i in ordered if self.entries[i].status != "waiting"]
            anchor = done[-1] if done else ordered[0]
        here = self.entries[anchor]
        parts: list[tuple[str, str] | str] = [
            (f"round {here.round} · {shorten(here.phase, 16)} ", "bold $secondary")
        ]
        for index in ordered:
            e = self.entries[index]
            if (e.round, e.phase) != (here.round, here.phase):
                continue
            glyph, style = GLYPH.get(e.status, ("?", ""))
            parts += [
                " ",
                (glyph, style),
                (shorten(e.speaker, 14), "bold" if index == anchor else ""),
            ]
        return Content.assemble(*parts)

    def redraw(self) -> None:
        self.post_message(self.Changed())
        parts: list[tuple[str, str] | str] = []
        group = None
        line_of_current = 0
        line = 0
        for index in sorted(self.entries):
            e = self.entries[index]
            if (e.round, e.phase) != group:
                group = (e.round, e.phase)
                if parts:
                    parts.append("\n")
                    line += 1
                parts.append((f"round {e.round} · {shorten(e.phase, 20)}", "bold $secondary"))
                parts.append("\n")
                line += 1
            glyph, style = GLYPH.get(e.status, ("?", ""))
            here = index == self.current
            parts.append((f" {glyph} ", style))
            who = shorten(e.speaker, 18)
            parts.append((who, "bold reverse" if here else ""))
            if e.target:
                parts.append((f" → {shorten(e.target, 18)}", "$text-muted"))
            parts.append("\n")
            if here:
                line_of_current = line
            line += 1
        lines = self.query_one("#timeline-lines", Static)
        lines.update(Content.assemble(*parts) if parts else Content("(nothing scheduled yet)"))
        # Every redraw schedules its own scroll, so the last one wins: the current slot
        # in the middle, or the end once nothing is speaking (a decision was reached).
        if self.current is not None:
            self.call_after_refresh(self._scroll_to_line, line_of_current)
        elif parts:
            self.call_after_refresh(self.scroll_end, animate=False)

    def _scroll_to_line(self, line: int) -> None:
        target = max(0, line - self.scrollable_content_region.height // 2)
        self.scroll_to(y=target, animate=False)
