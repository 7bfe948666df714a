"""Tasks: generated items with a checker, built in (``arithmetic``) or from reasoning-gym."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol

from tui.engine.basics.errors import MootInputError
from tui.engine.terms.openvotes import Normaliser, final_number


@dataclass(frozen=True, slots=True)
class Item:
    """One question and the answer the task's checker accepts."""

    index: int
    question: str
    answer: str


class Task(Protocol):
    name: str
    normaliser: Normaliser  # how votes are compared (tui.engine.terms.openvotes)

    def item(self, index: int) -> Item:
        """Item ``index`` of this task's seeded sequence (the same for any item count)."""
        ...

    def correct(self, item: Item, reply: str) -> bool:
        """Whether ``reply`` answers ``item`` (the checker)."""
        ...

    def wrong(self, item: Item, k: int) -> str:
        """A wrong answer, different for each ``k`` >= 1 (the oracle's mistakes)."""
        ...


class Arithmetic:
    """Du et al.'s arithmetic: ``a+b*c+d-e*f`` over integers 0..29, one exact answer."""

    name = "arithmetic"
    normaliser: Normaliser = "number"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def item(self, index: int) -> Item:
        rng = random.Random(f"arithmetic:{self.seed}:{index}")
        a, b, c, d, e, f = (rng.randrange(30) for _ in range(6))
        question = (
            f"What is the result of {a}+{b}*{c}+{d}-{e}*{f}? Give the final number as your vote."
        )
        return Item(index, question, str(a + b * c + d - e * f))

    def correct(self, item: Item, reply: str) -> bool:
        return final_number(reply) == item.answer

    def wrong(self, item: Item, k: int) -> str:
        return str(int(item.answer) + k)


class Gym:
    """A reasoning-gym dataset by name: its generator and its own ``score_answer``."""

    normaliser: Normaliser = "text"
    PER_BLOCK = 64  # items generated at a time; the dataset seeds each item by its index

    def __init__(self, name: str, seed: int) -> None:
        try:
            import reasoning_gym  # the optional bench extra: imported for these tasks only
        except ImportError:
            raise MootInputError(
                f"--task {name}", ["reasoning-gym is not installed: pip install 'moot[bench]'"]
            ) from None
        self.name = name
        self._create = reasoning_gym.create_dataset
        self.seed = seed
        self._entries: dict[int, dict[str, Any]] = {}
        try:
            self._dataset: Any = self._create(name, size=1, seed=seed)
        except Exception as err:  # an unknown name: the library's message names it
            raise MootInputError(
                f"--task {name}", [f"not a reasoning-gym dataset: {err}"]
            ) from None

    def _entry(self, index: int) -> dict[str, Any]:
        if index not in self._entries:
            size = (index // self.PER_BLOCK + 1) * self.PER_BLOCK
            if len(self._dataset) < size:
                self._dataset = self._create(self.name, size=size, seed=self.seed)
            self._entries[index] = self._dataset[index]
        return self._entries[index]

    def item(self, index: int) -> Item:
        entry = self._entry(index)
        question = f"{entry['question']}\nGive only your final answer as your vote."
        return Item(index, question, str(entry["answer"]))

    def correct(self, item: Item, reply: str) -> bool:
        score = self._dataset.score_answer(reply.strip(), self._entry(item.index))
        return bool(score is not None and float(score) >= 1.0)

    def wrong(self, item: Item, k: int) -> str:
        return f"wrong answer {k}"


def task_named(name: str, seed: int) -> Task:
    if name == Arithmetic.name:
        return Arithmetic(seed)
    return Gym(name, seed)
