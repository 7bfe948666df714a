"""One pane per debater: who it is, its streaming words, its turns and its vote."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.color import Color
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from tui.app.components.cards import TurnCard
from tui.app.stream import ReadableStream
from tui.engine.events import Slot
from tui.engine.records import Turn
from tui.textsafe import clean_line, shorten

MAX_CARDS = 8  # older turns stay in the transcript (t) and the session file


class TailText(Widget):
    """The newest lines of a growing text, in a box of fixed height.

    Streaming into an auto-height widget re-lays out the whole screen on every
    update and scrolls every pane. This box never changes size while a turn is
    spoken: each update wraps only the last paragraphs, enough to fill it, and
    repaints this one widget (no layout, no scrolling).
    """

    DEFAULT_CSS = """
    TailText { height: 3; color: $text; }
    """

    def __init__(self, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.text = ""
        self._shown: Content | None = None
        self._shown_for: tuple[int, int, int] = (-1, -1, -1)

    def set_text(self, text: str) -> None:
        self.text = text
        self.refresh()

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

    def render(self) -> Content:
        width, height = self.content_region.width, self.content_region.height
        key = (len(self.text), width, height)
        if self._shown is None or key != self._shown_for:
            text = "\n".join(self.tail_lines(width, height)).lstrip("\n")
            self._shown = Content(text)
            self._shown_for = key
        return self._shown


class StreamingTurn(Vertical):
    """The turn being spoken: a heading and the words so far.

    Two renderers: a fixed-height :class:`TailText` showing the newest lines of
    the readable text (the default: cheapest under four fast streams, a repaint
    of one box per update), or a ``Markdown`` fed by ``Markdown.get_stream``
    (``use_markdown = True``; links are never opened). Either way the text is
    cleaned and bounded first.
    """

    use_markdown: ClassVar[bool] = False
    TAIL = 3_000

    DEFAULT_CSS = """
    StreamingTurn { height: auto; padding: 0 1; background: $boost; border-left: outer $accent; }
    StreamingTurn Markdown { margin: 0; padding: 0; background: transparent; }
    StreamingTurn MarkdownParagraph { margin: 0 0 1 0; }
    """

    def __init__(self, slot: Slot, attempt: int) -> None:
        super().__init__()
        self.slot = slot
        self.attempt = attempt
        self.markdown = self.use_markdown
        self.reader = ReadableStream(markdown=self.markdown)
        self.stream: MarkdownStream | None = None
        self.text = ""

    def compose(self) -> ComposeResult:
        heading = f"#{self.slot.index} r{self.slot.round} {clean_line(self.slot.phase)}"
        if self.slot.target:
            heading += f" → {clean_line(self.slot.target)}"
        parts: list[tuple[str, str] | str] = [(heading, "$text-muted"), ("  speaking…", "$accent")]
        if self.attempt > 1:
            parts.append((f" (attempt {self.attempt})", "$warning"))
        yield Static(Content.assemble(*parts), markup=False, classes="heading")
        if self.markdown:
            yield Markdown("", open_links=False)
        else:
            yield TailText(classes="body")

    def fit(self, height: int) -> None:
        """Size the text box to the pane's visible height (once per turn and on resize)."""
        if not self.markdown:
            body = self.query_one(TailText)
            rows = max(3, height - 1)  # the heading takes a row
            if body.styles.height is None or body.styles.height.value != rows:
                body.styles.height = rows

    async def feed(self, text: str) -> None:
        fragment = self.reader.feed(text)
        if not fragment:
            return
        if not self.markdown:
            self.text = (self.text + fragment)[-self.TAIL :]
            self.query_one(TailText).set_text(self.text)
            return
        if self.stream is None:
            self.stream = Markdown.get_stream(self.query_one(Markdown))
        await self.stream.write(fragment)

    async def stop(self) -> None:
        if self.stream is not None:
            await self.stream.stop()
            self.stream = None


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

    def __init__(self, debater_id: str, model: str, family: str, role: str = "") -> None:
        super().__init__(id=f"pane-{debater_id}")
        self.debater_id = debater_id
        self.set_reactive(DebaterPane.model, model)
        self.family = family
        self.role = role
        self.color: str | None = None
        self.streaming: StreamingTurn | None = None
        self.border_title = Content(debater_id)

    def compose(self) -> ComposeResult:
        yield Static(markup=False, classes="meta")
        yield VerticalScroll(classes="turns")
        yield Static(markup=False, classes="failure")

    def on_mount(self) -> None:
        self._show_meta()

    def _follow(self) -> None:
        """Keep the newest words in view (the transcript, t, holds everything)."""
        scroll = self.query_one(".turns", VerticalScroll)
        scroll.call_after_refresh(scroll.scroll_end, animate=False)

    def _fit_streaming(self) -> None:
        if self.streaming is not None:
            height = self.query_one(".turns", VerticalScroll).scrollable_content_region.height
            self.streaming.fit(height)
            self._follow()

    def on_resize(self) -> None:
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
        turns = f"{usage.turns} turn" + ("" if usage.turns == 1 else "s")
        parts.append((f"  {turns} · {usage.tokens:,} tok · ${usage.cost:.4f}", "$text-muted"))
        self.query_one(".meta", Static).update(Content.assemble(*parts))
        self.border_subtitle = Content(clean_line(self.vote)) if self.vote else None

    # --------------------------------------------------------------- turns
    async def begin_turn(self, slot: Slot, attempt: int = 1) -> None:
        await self.stop_streaming()
        self.failure = None
        self.speaking = True
        self.streaming = StreamingTurn(slot, attempt)
        await self.query_one(".turns", VerticalScroll).mount(self.streaming)
        self._fit_streaming()  # a fixed box: tokens repaint it, never re-lay out the pane

    async def feed(self, text: str) -> None:
        if self.streaming is not None:
            await self.streaming.feed(text)
            if self.streaming.markdown:
                self._follow()

    async def stop_streaming(self) -> None:
        if self.streaming is not None:
            streaming, self.streaming = self.streaming, None
            await streaming.stop()
            await streaming.remove()
        self.speaking = False

    async def finish_turn(self, turn: Turn) -> None:
        await self.stop_streaming()
        await self.add_card(turn)

    async def add_card(self, turn: Turn, *, follow: bool = True) -> None:
        scroll = self.query_one(".turns", VerticalScroll)
        await scroll.mount(TurnCard(turn))
        cards = list(scroll.query(TurnCard))
        if len(cards) > MAX_CARDS:
            await scroll.remove_children(cards[: len(cards) - MAX_CARDS])
        self.count(turn)
        if follow:
            self._follow()

    def count(self, turn: Turn) -> None:
        """Add a turn to the meta line (its card may be shown or not)."""
        self.usage = self.usage.plus(turn)
        if turn.vote and not turn.invalid:
            self.vote = turn.vote

    async def reset(self) -> None:
        await self.stop_streaming()
        await self.query_one(".turns", VerticalScroll).remove_children()
        self.vote = None
        self.usage = Usage()
        self.failure = None

    # ------------------------------------------------------------- failure
    def show_failure(self, kind: str, message: str) -> None:
        self.failure = Content.assemble(
            (f"provider failure ({clean_line(kind)}) ", "bold"), shorten(message, 400)
        )
