"""The debaters as they stand now: the operator may swap a speaker's model mid-debate."""

from __future__ import annotations

from collections.abc import Iterable

from tui.engine.specs.spec import Debater


class Roster:
    """Each speaker's current debater record and model family, by id."""

    def __init__(self, debaters: Iterable[Debater]) -> None:
        self.debaters: dict[str, Debater] = {d.id: d for d in debaters}
        self.family: dict[str, str] = {d.id: d.resolved_family for d in self.debaters.values()}

    def __getitem__(self, speaker: str) -> Debater:
        return self.debaters[speaker]

    def swap_model(self, speaker: str, model: str) -> None:
        """The speaker keeps its role and persona; script and family follow the new model."""
        new = self.debaters[speaker].model_copy(
            update={"model": model, "script": None, "family": None}
        )
        self.debaters[speaker] = new
        self.family[speaker] = new.resolved_family
