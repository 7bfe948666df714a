"""One pane per debater: who it is, its streaming words, its turns and its vote."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.color import Color
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Static

from tui.app.components.cards import TONE_STYLE, TurnCard
from tui.engine.core.records import Turn
from tui.engine.core.schedule import Slot
from tui.engine.run.budget import Ledger
from tui.render.present import lookup_item
from tui.render.streamfields import FieldStream
from tui.render.textsafe import clean_line, shorten

MAX_CARDS = 8  # older turns stay in the transcript (t) and the session file


class TailText(Widget):
    """The newest lines of a growing text, in a box that grows up to a cap.

    The box grows a line at a time (a re-layout only when it gains a line) until
    it reaches ``max-height``; from then on an update wraps only the last
    paragraphs, enough to fill it, and repaints this one widget.
    """

    DEFAULT_CSS = """
    TailText { height: auto; max-height: 3; color: $text; }
    """

    def __init__(self, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.text = ""
        self._shown: Content | None = None
        self._shown_for: tuple[int, int] = (-1, -1)

    @property
    def cap(self) -> int:
        max_height = self.styles.max_height
        return int(max_height.value) if max_height is not None else 3

    def set_text(self, text: str) -> None:
        """Show ``text``; re-lay out only while the box is still growing."""
        self.text = text
        self._shown = None  # the text may change and keep its length (once at TAIL)
        self.refresh(layout=self.size.height < self.cap)

    def tail_lines(self, width: int, height: int) -> list[str]:
        """The last ``height`` lines of the text wrapped at ``width`` cells."""
        width = max(1, width)
        height = max(1, height)
        lines: list[str] = []
        paragraphs = self.text.split("\n")
        while paragraphs and len(lines) < height:
            paragraph = paragraphs.pop()
            wrapped = [c.plain for c in Content(paragraph).wrap(width)] if paragraph else [""]
            lines[:0] = wrapped
        return lines[-height:]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, len(self.tail_lines(width, self.cap))) if self.text else 1

    def render(self) -> Content:
        width, height = self.content_region.width, self.content_region.height
        key = (width, height)
        if self._shown is None or key != self._shown_for:
            text = "\n".join(self.tail_lines(width, height)).lstrip("\n")
            self._shown = Content(text)
            self._shown_for = key
        return self._shown


def ledger_parts(ledger: Ledger) -> list[str]:
    """``1.2k tok``, ``$0.004``, ``1.8 s``, ``ctx 23%``: what the engine counts against the caps."""
    tokens = f"{ledger.tokens / 1000:.1f}k" if ledger.tokens >= 1000 else str(ledger.tokens)
    parts = [f"{tokens} tok", f"${ledger.cost:.3f}"]
    if ledger.last_latency_ms is not None:
        parts.append(f"{ledger.last_latency_ms / 1000:.1f} s")
    if ledger.fullness is not None:
        parts.append(f"ctx {ledger.fullness:.0%}")
    return parts


def packed(parts: list[str], width: int, taken: int = 0) -> str:
    """``parts`` joined by `` · ``, broken only between parts to fit ``width`` columns when
    ``taken`` are used on the first line: a figure never wraps away from its unit."""
    out, used = "", taken
    for part in parts:
        joined = (" · " if out.strip() else "") + part
        if width > 0 and used + cell_len(joined) > width and used > 0:
            out, used, joined = out + "\n", 0, part
        out, used = out + joined, used + cell_len(joined)
    return out


def live_line(elapsed: float, tokens: int, streamed: float, done: bool = False) -> str:
    """``12 s · 57 tok · 9.8 tok/s``: how a turn in progress is going.

    ``streamed`` is the time since the first token (the rate leaves out the wait
    for it); before the first token the line says what it is waiting for. Once
    the reply is ``done`` the line stops (a rate falling while the turn waits to
    be written in schedule order would say the model is slow when it is not).
    """
    if done:
        return f"done · {elapsed:.0f} s · {tokens:,} tok"
    if tokens == 0:
        return f"waiting for the first token · {elapsed:.0f} s"
    rate = tokens / streamed if streamed > 0.05 else 0.0
    return f"{elapsed:.0f} s · {tokens:,} tok · {rate:.1f} tok/s"


class StreamingTurn(Vertical):
    """The turn being spoken: a heading with a live line, and the fields so far.

    The raw reply goes through :class:`FieldStream` (labelled fields, never raw
    JSON, cleaned and bounded); the newest lines show in a :class:`TailText`.
    """

    TAIL = 3_000

    DEFAULT_CSS = """
    StreamingTurn { height: auto; padding: 0 1; background: $boost; border-left: outer $accent; }
    StreamingTurn > .live { height: 1; color: $text-muted; }
    StreamingTurn > .lookups { height: auto; max-height: 6; }
    """

    def __init__(
        self,
        slot: Slot,
        attempt: int,
        redact: Callable[[str], str] = str,
        lookups: tuple[dict[str, Any], ...] = (),
    ) -> None:
        super().__init__()
        self.slot = slot
        self.attempt = attempt
        self.lookups = lookups
        self.redact = redact  # a streamed reply can echo a key before the engine stores it
        self.reader = FieldStream()
        self.text = ""
        self.tokens = 0
        self.started = time.monotonic()
        self.first_token: float | None = None
        self.replied: float | None = None  # when the reply ended; the turn is not yet written

    def compose(self) -> ComposeResult:
        yield Static(self._heading(), markup=False, classes="heading")
        lookups = Static(self._lookups(), markup=False, classes="lookups")
        lookups.display = bool(self.lookups)  # no lookups: no blank line above the words
        yield lookups
        yield Static(self._live(), markup=False, classes="live")
        yield TailText(classes="body")

    def _lookups(self) -> Content:
        """One line per lookup of this turn: tool, call, short args, ok and bytes or failed."""
        parts: list[tuple[str, str] | str] = []
        for lookup in self.lookups:
            item = lookup_item(lookup)
            parts.append(
                (f"\n{clean_line(item.tag)} ", "bold")
                if parts
                else (f"{clean_line(item.tag)} ", "bold")
            )
            parts.append(clean_line(item.text) + " ")
            parts.append((shorten(clean_line(item.status), 80), TONE_STYLE[item.tone]))
        return Content.assemble(*parts)

    def show_lookups(self, lookups: tuple[dict[str, Any], ...]) -> None:
        self.lookups = lookups
        shown = self.query_one(".lookups", Static)
        shown.update(self._lookups())
        shown.display = bool(lookups)

    def on_mount(self) -> None:
        self.set_interval(1.0, self._show_progress)  # the clock moves while a model thinks

    def _heading(self) -> Content:
        heading = f"#{self.slot.index} r{self.slot.round} {clean_line(self.slot.phase)}"
        if self.slot.target:
            heading += f" → {clean_line(self.slot.target)}"
        state = ("  done", "$success") if self.replied is not None else ("  speaking…", "$accent")
        parts: list[tuple[str, str] | str] = [(heading, "$text-muted"), state]
        if self.attempt > 1:
            parts.append((f" (attempt {self.attempt})", "$warning"))
        return Content.assemble(*parts)

    def _live(self) -> Content:
        now = self.replied if self.replied is not None else time.monotonic()
        streamed = now - self.first_token if self.first_token is not None else 0.0
        return Content(
            live_line(now - self.started, self.tokens, streamed, self.replied is not None)
        )

    def reply_done(self) -> None:
        """The model has answered; the turn waits to be checked and written."""
        if self.replied is None:
            self.replied = time.monotonic()
            self.query_one(".heading", Static).update(self._heading())
            self._show_progress()

    def _show_progress(self) -> None:
        """One line of fixed height: a repaint, never a layout."""
        self.query_one(".live", Static).update(self._live(), layout=False)

    def fit(self, height: int) -> None:
        """Cap the text box below the pane's visible height, so the turn before stays in view."""
        rows = max(3, (height - 2) * 2 // 3)  # the heading and the live line take two rows
        body = self.query_one(TailText)
        if body.cap != rows or body.styles.max_height is None:
            body.styles.max_height = rows

    def feed(self, text: str, tokens: int) -> None:
        if tokens and self.first_token is None:
            self.first_token = time.monotonic()
        self.tokens += tokens
        self._show_progress()
        fragment = self.reader.feed(text)
        if fragment:
            self.text = (self.text + fragment)[-self.TAIL :]
            self.query_one(TailText).set_text(self.redact(self.text))


class TurnsScroll(VerticalScroll):
    """A pane's turns; it follows the newest words only while scrolled to the bottom.

    It follows on every change of its content's size (a token, a card, a
    Markdown block laid out after its card mounted), so the bottom is reached
    whatever order those land in. Scrolling up stops the following (the next
    token does not undo it); reaching the bottom again, or :meth:`follow`,
    restarts it.
    """

    following: var[bool] = var(True, init=False)

    def on_resize(self) -> None:
        self.keep_up()

    def watch_virtual_size(self) -> None:
        self.keep_up()

    def keep_up(self) -> None:
        """Scroll to the end, unless the reader scrolled up."""
        if self.following:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)

    def follow(self) -> None:
        self.following = True
        self.keep_up()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y:
            self.following = True
        elif new_value < old_value:
            self.following = False


@dataclass(frozen=True)
class Usage:
    """What a debater has spent so far."""

    turns: int = 0
    tokens: int = 0
    cost: float = 0.0

    def plus(self, turn: Turn) -> Usage:
        return Usage(
            self.turns + 1, self.tokens + turn.tokens_in + turn.tokens_out, self.cost + turn.cost
        )


class DebaterPane(Vertical):
    """One debater: the meta line, its turns, and a provider failure when there is one.

    The meta line and the pane's state classes follow reactive attributes:
    assign ``model``, ``vote``, ``usage``, ``speaking`` or ``failure`` and the
    watchers redraw.
    """

    model: var[str] = var("", init=False)
    vote: var[str | None] = var(None, init=False)
    usage: var[Usage] = var(Usage, init=False)
    speaking: var[bool] = var(False, init=False, toggle_class="-speaking")
    failure: var[Content | None] = var(None, init=False, toggle_class="-failed")
    ledger: var[Ledger | None] = var(None, init=False)  # the engine's, live per call

    def __init__(
        self,
        debater_id: str,
        model: str,
        family: str,
        role: str = "",
        redact: Callable[[str], str] = str,
    ) -> None:
        super().__init__(id=f"pane-{debater_id}")
        self.redact = redact
        self.debater_id = debater_id
        self.set_reactive(DebaterPane.model, model)
        self.family = family
        self.role = role
        self.color: str | None = None
        self.streaming: StreamingTurn | None = None
        self._lookups: dict[int, tuple[dict[str, Any], ...]] = {}  # by slot, while it speaks
        self.border_title = Content(debater_id)

    def compose(self) -> ComposeResult:
        yield Static(markup=False, classes="meta")
        yield TurnsScroll(classes="turns")
        yield Static(markup=False, classes="failure")

    def on_mount(self) -> None:
        self._show_meta()

    @property
    def turns(self) -> TurnsScroll:
        return self.query_one(".turns", TurnsScroll)

    def follow(self) -> None:
        """Follow the newest words again (after scrolling up)."""
        self.turns.follow()

    def _fit_streaming(self) -> None:
        if self.streaming is not None:
            self.streaming.fit(self.turns.scrollable_content_region.height)

    def on_resize(self) -> None:
        self._show_meta()  # its usage figures are packed to the width
        if self.streaming is not None:
            self.call_after_refresh(self._fit_streaming)

    # ------------------------------------------------------------- display
    def set_color(self, color: str) -> None:
        self.color = color
        self.styles.border = ("round", Color.parse(color))
        self.styles.border_title_color = Color.parse(color)

    # Watchers run from the first assignment on; before mount there is nothing to draw.
    def watch_model(self) -> None:
        if self.is_mounted:
            self._show_meta()

    def watch_vote(self) -> None:
        if self.is_mounted:
            self._show_meta()

    def watch_usage(self) -> None:
        if self.is_mounted:
            self._show_meta()

    def watch_ledger(self) -> None:
        if self.is_mounted:
            self._show_meta()

    def watch_failure(self, failure: Content | None) -> None:
        if self.is_mounted and failure is not None:
            self.query_one(".failure", Static).update(failure)

    def _show_meta(self) -> None:
        parts: list[tuple[str, str] | str] = [
            (shorten(self.model, 40), "bold"),
            (f" · {shorten(self.family, 20)}", "$text-muted"),
        ]
        if self.role:
            parts.append((f"\n{shorten(self.role, 120)}", "italic $text-muted"))
        parts.append(("\nvote ", "$text-muted"))
        if self.vote:
            parts.append((f" {shorten(self.vote, 14)} ", "bold $text on $primary-muted"))
        else:
            parts.append((" — ", "$text-muted"))
        usage = self.usage
        spent = (
            [f"{usage.tokens:,} tok", f"${usage.cost:.4f}"]
            if self.ledger is None
            else ledger_parts(self.ledger)
        )
        turns = f"{usage.turns} turn" + ("" if usage.turns == 1 else "s")
        width = self.content_size.width - 2  # the meta line's padding
        taken = sum(cell_len(p if isinstance(p, str) else p[0]) for p in parts[-2:]) + 2
        parts.append(("  " + packed([turns, *spent], width, taken), "$text-muted"))
        self.query_one(".meta", Static).update(Content.assemble(*parts))
        self.border_subtitle = Content(clean_line(self.vote)) if self.vote else None

    # --------------------------------------------------------------- turns
    async def begin_turn(self, slot: Slot, attempt: int = 1) -> None:
        await self.stop_streaming()
        self.failure = None
        self.speaking = True
        if not self.turns.is_attached:  # the app is closing: the pane is already taken down
            return
        streaming = StreamingTurn(slot, attempt, self.redact, self._lookups.get(slot.index, ()))
        await self.turns.mount(streaming)
        if not streaming.children:  # the app is closing: mounted, never composed
            return
        # Only a composed box is the pane's: a resize while it mounted must not reach it.
        self.streaming = streaming
        self._fit_streaming()  # a capped box: once full, tokens repaint it without a layout

    def show_lookups(self, slot: Slot, lookups: tuple[dict[str, Any], ...]) -> None:
        """A turn's lookups as they ran; they stay shown when the model is asked again."""
        self._lookups[slot.index] = lookups
        if self.streaming is not None and self.streaming.slot.index == slot.index:
            self.streaming.show_lookups(lookups)

    def feed(self, text: str, tokens: int) -> None:
        """``tokens`` chunks arrived, together ``text``."""
        if self.streaming is not None:
            self.streaming.feed(text, tokens)

    def reply_done(self) -> None:
        """The speaking turn's call has ended: it shows done until it is written or asked again."""
        if self.streaming is not None:
            self.streaming.reply_done()

    async def stop_streaming(self) -> None:
        if self.streaming is not None:
            streaming, self.streaming = self.streaming, None
            await streaming.remove()
        self.speaking = False

    async def finish_turn(self, turn: Turn) -> None:
        self._lookups.pop(turn.index, None)  # the card shows them now
        await self.stop_streaming()
        await self.add_card(turn)

    async def add_card(self, turn: Turn) -> None:
        scroll = self.turns
        if not scroll.is_attached:  # the app is closing: the pane is already taken down
            self.count(turn)
            return
        await scroll.mount(TurnCard(turn), before=self.streaming)
        cards = list(scroll.query(TurnCard))
        if len(cards) > MAX_CARDS:
            old, first_kept = cards[: len(cards) - MAX_CARDS], cards[len(cards) - MAX_CARDS]
            removed = first_kept.virtual_region.y - old[0].virtual_region.y
            await scroll.remove_children(old)
            if not scroll.following:  # the words being read stay where they are
                scroll.scroll_to(y=max(0, scroll.scroll_y - removed), animate=False, immediate=True)
        self.count(turn)

    def count(self, turn: Turn) -> None:
        """Add a turn to the meta line (its card may be shown or not)."""
        self.usage = self.usage.plus(turn)
        if turn.vote and not turn.invalid:
            self.vote = turn.vote

    async def reset(self) -> None:
        await self.stop_streaming()
        await self.turns.remove_children()
        self.vote = None
        self.usage = Usage()
        self.failure = None

    # ------------------------------------------------------------- failure
    def show_failure(self, kind: str, message: str) -> None:
        self.failure = Content.assemble(
            (f"provider failure ({clean_line(kind)}) ", "bold"), shorten(message, 400)
        )
