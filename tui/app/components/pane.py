"""One pane per debater: who it is, its streaming words, its turns and its vote."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.color import Color
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from tui.app.components.cards import TurnCard
from tui.app.stream import ReadableStream
from tui.app.text import clean_line, shorten
from tui.engine.events import Slot
from tui.engine.records import Turn

MAX_CARDS = 8  # older turns stay in the transcript (t) and the session file


class StreamingTurn(Vertical):
    """The turn being spoken: a heading and the words so far.

    Two renderers: a plain ``Static`` showing the tail of the readable text
    (the default: cheapest under four fast streams), or a ``Markdown`` fed by
    ``Markdown.get_stream`` (``use_markdown = True``; links are never opened).
    Either way the text is cleaned and bounded first.
    """

    use_markdown: ClassVar[bool] = False
    TAIL = 3_000

    DEFAULT_CSS = """
    StreamingTurn { height: auto; padding: 0 1; background: $boost; border-left: outer $accent; }
    StreamingTurn Markdown { margin: 0; padding: 0; background: transparent; }
    StreamingTurn MarkdownParagraph { margin: 0 0 1 0; }
    StreamingTurn .body { color: $text; }
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
        heading = f"#{self.slot.index + 1} r{self.slot.round} {clean_line(self.slot.phase)}"
        if self.slot.target:
            heading += f" → {clean_line(self.slot.target)}"
        parts: list[tuple[str, str] | str] = [(heading, "$text-muted"), ("  speaking…", "$accent")]
        if self.attempt > 1:
            parts.append((f" (attempt {self.attempt})", "$warning"))
        yield Static(Content.assemble(*parts), markup=False, classes="heading")
        if self.markdown:
            yield Markdown("", open_links=False)
        else:
            yield Static("", markup=False, classes="body")

    async def feed(self, text: str) -> None:
        fragment = self.reader.feed(text)
        if not fragment:
            return
        if not self.markdown:
            self.text += fragment
            shown = self.text[-self.TAIL:].lstrip("\n")
            self.query_one(".body", Static).update(Content(shown))
            return
        if self.stream is None:
            self.stream = Markdown.get_stream(self.query_one(Markdown))
        await self.stream.write(fragment)

    async def stop(self) -> None:
        if self.stream is not None:
            await self.stream.stop()
            self.stream = None


class DebaterPane(Vertical):
    DEFAULT_CSS = """
    DebaterPane { border: round $primary; height: 1fr; }
    DebaterPane > .meta { height: auto; padding: 0 1; background: $panel; }
    DebaterPane > .failure { display: none; height: auto; padding: 0 1;
        background: $error 25%; color: $text; }
    DebaterPane.-failed > .failure { display: block; }
    DebaterPane.-speaking { border: heavy $accent; }
    DebaterPane > VerticalScroll { height: 1fr; scrollbar-size-vertical: 1; }
    """

    def __init__(self, debater_id: str, model: str, family: str, role: str = "") -> None:
        super().__init__(id=f"pane-{debater_id}")
        self.debater_id = debater_id
        self.model = model
        self.family = family
        self.role = role
        self.vote: str | None = None
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost = 0.0
        self.turn_count = 0
        self.color: str | None = None
        self.streaming: StreamingTurn | None = None
        self.border_title = Content(debater_id)

    def compose(self) -> ComposeResult:
        yield Static(markup=False, classes="meta")
        yield VerticalScroll(classes="turns")
        yield Static(markup=False, classes="failure")

    def on_mount(self) -> None:
        self.refresh_meta()

    def _follow(self) -> None:
        """Keep the newest words in view (the transcript, t, holds everything)."""
        scroll = self.query_one(".turns", VerticalScroll)
        scroll.call_after_refresh(scroll.scroll_end, animate=False)

    # ------------------------------------------------------------- display
    def set_color(self, color: str) -> None:
        self.color = color
        self.styles.border = ("round", Color.parse(color))
        self.styles.border_title_color = Color.parse(color)
        self.refresh_meta()

    def refresh_meta(self) -> None:
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
            parts.append(("—", "$text-muted"))
        tokens = self.tokens_in + self.tokens_out
        parts.append(
            (f"  {self.turn_count} turns · {tokens:,} tok · ${self.cost:.4f}", "$text-muted")
        )
        self.query_one(".meta", Static).update(Content.assemble(*parts))
        self.border_subtitle = Content(clean_line(self.vote)) if self.vote else None

    def set_model(self, model: str) -> None:
        self.model = model
        self.refresh_meta()

    # --------------------------------------------------------------- turns
    async def begin_turn(self, slot: Slot, attempt: int = 1) -> None:
        await self.stop_streaming()
        self.clear_failure()
        self.add_class("-speaking")
        self.streaming = StreamingTurn(slot, attempt)
        await self.query_one(".turns", VerticalScroll).mount(self.streaming)
        self._follow()

    async def feed(self, text: str) -> None:
        if self.streaming is not None:
            await self.streaming.feed(text)
            self._follow()

    async def stop_streaming(self) -> None:
        if self.streaming is not None:
            streaming, self.streaming = self.streaming, None
            await streaming.stop()
            await streaming.remove()
        self.remove_class("-speaking")

    async def finish_turn(self, turn: Turn) -> None:
        await self.stop_streaming()
        await self.add_card(turn)

    async def add_card(self, turn: Turn, *, refresh: bool = True) -> None:
        scroll = self.query_one(".turns", VerticalScroll)
        await scroll.mount(TurnCard(turn))
        cards = list(scroll.query(TurnCard))
        if len(cards) > MAX_CARDS:
            await scroll.remove_children(cards[: len(cards) - MAX_CARDS])
        self.count(turn)
        if refresh:
            self.refresh_meta()
            self._follow()

    def count(self, turn: Turn) -> None:
        self.turn_count += 1
        self.tokens_in += turn.tokens_in
        self.tokens_out += turn.tokens_out
        self.cost += turn.cost
        if turn.vote and not turn.invalid:
            self.vote = turn.vote

    async def reset(self) -> None:
        await self.stop_streaming()
        await self.query_one(".turns", VerticalScroll).remove_children()
        self.vote = None
        self.tokens_in = self.tokens_out = 0
        self.cost = 0.0
        self.turn_count = 0
        self.clear_failure()
        self.refresh_meta()

    # ------------------------------------------------------------- failure
    def show_failure(self, kind: str, message: str) -> None:
        self.add_class("-failed")
        self.query_one(".failure", Static).update(
            Content.assemble(
                (f"provider failure ({clean_line(kind)}) ", "bold"), shorten(message, 400)
            )
        )

    def clear_failure(self) -> None:
        self.remove_class("-failed")
