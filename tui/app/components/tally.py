"""The tally panel: a bar per vote, the threshold marked, the decision and its rule.

``tally`` and ``verdict`` are reactive: the screen assigns them, the watchers redraw.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static

from tui.engine.basics.vocab import ESCALATE, is_deferral
from tui.plural import counted
from tui.render.textsafe import clean_line, shorten


@dataclass(frozen=True)
class Verdict:
    """How a debate ended, as the panel shows it (``escalate``: unresolved)."""

    decision: str
    rule: str = ""
    by: str = ""
    rationale: str | None = None
    outcomes: tuple[str, ...] = ()  # what became of it since, as lines (replay only)


class TallyPanel(Static):
    class Changed(Message):
        """Redrawn: the compact (narrow terminal) line follows."""

    tally: var[dict[str, int]] = var(dict, init=False)
    verdict: var[Verdict | None] = var(None, init=False)

    def __init__(
        self,
        votes: list[str],
        voters: int,
        threshold: int,
        id: str | None = None,
        *,
        bars: bool = True,
        decide: bool = True,
    ):
        super().__init__(markup=False, id=id)
        self.bars = bars  # False: the protocol casts no votes (challenge, refine)
        self.decide = decide  # False: votes are requests, no threshold decides (adversary)
        self.options = list(votes)  # empty: open votes, shown as they are cast
        self.voters = max(1, voters)
        self.threshold = threshold
        self.set_reactive(TallyPanel.tally, {v: 0 for v in votes})
        self.border_title = ("tally" if decide else "requests") if bars else "decision"

    def on_mount(self) -> None:
        self.redraw()

    @property
    def votes(self) -> list[str]:
        return self.options or list(self.tally)

    def validate_tally(self, tally: dict[str, int]) -> dict[str, int]:
        """Every vote of the spec, in its order, and nothing else; open votes as cast, most first."""
        if not self.options:
            return dict(sorted(((v, int(n)) for v, n in tally.items()), key=lambda vn: -vn[1]))
        return {v: int(tally.get(v, 0)) for v in self.options}

    def watch_tally(self) -> None:
        self.redraw()

    def watch_verdict(self, verdict: Verdict | None) -> None:
        self.set_class(verdict is not None and verdict.decision != ESCALATE, "-decided")
        self.set_class(verdict is not None and verdict.decision == ESCALATE, "-unresolved")
        self.redraw()

    def one_line(self) -> Content:
        """The tally or the decision on one line, for a narrow terminal."""
        if self.verdict is not None:
            decision, rule, by, _, _ = astuple(self.verdict)
            head = (
                (_unresolved(decision, rule), "bold $accent")
                if decision == ESCALATE
                else (f" {clean_line(decision)} ", "bold $background on $success")
            )
            tail = f" rule {clean_line(rule)}" + (f" · by {clean_line(by)}" if by else "")
            return Content.assemble(head, (tail, "$text-muted"))
        if not self.bars:
            return Content.assemble(("no decision yet", "italic $text-muted"))
        parts: list[tuple[str, str] | str] = [
            ("tally " if self.decide else "requests ", "$text-muted")
        ]
        for i, vote in enumerate(self.votes):
            n = self.tally.get(vote, 0)
            parts += [" · " if i else "", (f"{shorten(vote, 14)} {n}", "bold" if n else "")]
        if self.decide:
            parts.append((f"  (needs {self.threshold} of {self.voters})", "$text-muted"))
        return Content.assemble(*parts)

    def redraw(self) -> None:
        self.post_message(self.Changed())
        width = max(len(clean_line(v)) for v in self.votes) if self.votes else 4
        width = min(width, 14)
        parts: list[tuple[str, str] | str] = []
        leader = max(self.tally.values(), default=0)
        if not self.bars:
            self._decision_parts(parts, first=True)
            self.update(Content.assemble(*parts))
            return
        for vote in self.votes:
            n = self.tally.get(vote, 0)
            style = (
                "bold $success"
                if self.decide and n >= self.threshold
                else ("bold" if n and n == leader else "")
            )
            parts.append((shorten(vote, width).ljust(width), style))
            parts.append(" ")
            for cell in range(self.voters):
                if self.decide and cell == self.threshold:
                    parts.append(("┃", "bold $warning"))
                filled = cell < n
                parts.append(("██" if filled else "░░", "$success" if filled else "$text-disabled"))
            if self.decide and self.threshold >= self.voters:
                parts.append(("┃", "bold $warning"))
            parts.append((f" {n}\n", style))
        if self.decide:
            parts.append(
                (f"threshold ┃ {self.threshold} of {counted(self.voters, 'vote')}", "$text-muted")
            )
        else:  # a request is not a decision: the gate's verdict is below
            parts.append(("requested; code decides the routing", "$text-muted"))
        self._decision_parts(parts)
        self.update(Content.assemble(*parts))

    def _decision_parts(self, parts: list[tuple[str, str] | str], first: bool = False) -> None:
        nl = "" if first else "\n"
        if self.verdict is None:
            if first:
                parts.append(("no decision yet", "italic $text-muted"))
            return
        decision, rule, by, rationale, outcomes = astuple(self.verdict)
        if decision == ESCALATE:
            parts.append((f"{nl}{_unresolved(decision, rule)}", "bold $accent"))
        else:
            parts.append((f"{nl}decision ", "$text-muted"))
            parts.append((f" {clean_line(decision)} ", "bold $background on $success"))
        parts.append((f"\nrule {clean_line(rule)}", "$text-muted"))
        if by:
            parts.append((f" · by {clean_line(by)}", "$text-muted"))
        if rationale:
            parts.append(("\n“", "$text-muted"))
            parts.append(shorten(rationale, 300))
            parts.append(("”", "$text-muted"))
        for line in outcomes:  # plain text: a note is never markup
            parts.append(("\n" + shorten(clean_line(line), 300), ""))


def _unresolved(decision: str, rule: str) -> str:
    """How an unresolved end reads: the operator's own escalate is a deferral."""
    return "DEFERRED (awaiting a person)" if is_deferral(decision, rule) else "UNRESOLVED"
