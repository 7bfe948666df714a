"""The tally panel: a bar per vote, the threshold marked, the decision and its rule."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui.textsafe import clean_line, shorten


class TallyPanel(Static):
    DEFAULT_CSS = """
    TallyPanel { height: auto; border: round $secondary 60%; padding: 0 1; }
    TallyPanel.-decided { border: round $success; }
    TallyPanel.-unresolved { border: round $accent; }
    """

    def __init__(
        self,
        votes: list[str],
        voters: int,
        threshold: int,
        id: str | None = None,
        *,
        bars: bool = True,
    ):
        super().__init__(markup=False, id=id)
        self.bars = bars  # False: the protocol casts no votes (challenge, refine)
        self.votes = list(votes)
        self.voters = max(1, voters)
        self.threshold = threshold
        self.tally: dict[str, int] = {v: 0 for v in votes}
        self.decision: tuple[str, str, str, str | None] | None = None
        self.border_title = "tally" if bars else "decision"

    def on_mount(self) -> None:
        self.redraw()

    def set_tally(self, tally: dict[str, int]) -> None:
        self.tally = {v: int(tally.get(v, 0)) for v in self.votes}
        self.redraw()

    def set_decision(
        self, decision: str | None, rule: str = "", by: str = "", rationale: str | None = None
    ) -> None:
        self.decision = (decision, rule, by, rationale) if decision else None
        self.set_class(bool(decision) and decision != "escalate", "-decided")
        self.set_class(decision == "escalate", "-unresolved")
        self.redraw()

    def redraw(self) -> None:
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
                "bold $success" if n >= self.threshold else ("bold" if n and n == leader else "")
            )
            parts.append((shorten(vote, width).ljust(width), style))
            parts.append(" ")
            for cell in range(self.voters):
                if cell == self.threshold:
                    parts.append(("┃", "bold $warning"))
                filled = cell < n
                parts.append(("██" if filled else "░░", "$success" if filled else "$text-disabled"))
            if self.threshold >= self.voters:
                parts.append(("┃", "bold $warning"))
            parts.append((f" {n}\n", style))
        parts.append((f"threshold ┃ {self.threshold} of {self.voters} votes", "$text-muted"))
        self._decision_parts(parts)
        self.update(Content.assemble(*parts))

    def _decision_parts(self, parts: list[tuple[str, str] | str], first: bool = False) -> None:
        nl = "" if first else "\n"
        if self.decision is None:
            if first:
                parts.append(("no decision yet", "italic $text-muted"))
            return
        decision, rule, by, rationale = self.decision
        if decision == "escalate":
            parts.append((f"{nl}UNRESOLVED", "bold $accent"))
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
