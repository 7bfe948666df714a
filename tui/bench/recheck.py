"""A line read back from ``items.jsonl`` is believed only as far as it can be recomputed.

The item's question and expected answer come from the task, ``correct`` from the
task's checker over the words counted, and a debate's or an adaptive item's whole
line from its session file (chain and signatures intact, signed throughout by keys
the user trusts, the spec its arm runs, the same record rebuilt from its turns and
result). What no file proves for the single and vote arms (their calls, votes and
oracle gap), only the chain over the lines guards.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui.bench.arms import ARMS, DEBATES, Setup, arm_spec, counted, record
from tui.bench.tasks import Item
from tui.engine.basics.errors import MootInputError
from tui.engine.record.keys import trusted_keys
from tui.engine.record.session import load_session
from tui.engine.record.trust import unvouched, who_vouches
from tui.engine.terms.openvotes import normalise


class Recheck:
    """Whether a record read back holds for this bench: None, or what is wrong with it."""

    def __init__(self, setup: Setup, session_of: Callable[[int, str], Path]) -> None:
        self.setup, self.session_of = setup, session_of
        self._keys: set[str] | None = None

    def _trusted(self) -> set[str]:
        """The fingerprints of the keys the user trusts, their own included (read once)."""
        if self._keys is None:
            try:
                self._keys = {k.fingerprint for k in trusted_keys()[0]}
            except MootInputError:  # the user's own key is unreadable: no key is known
                self._keys = set()
        return self._keys

    def __call__(self, line: dict[str, Any]) -> str | None:
        """``line``: the record as read back, its chain fields left out."""
        index, arm = line.get("item"), line.get("arm")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0 or arm not in ARMS:
            return "not a bench record (no item number and arm)"
        item = self.setup.task.item(index)
        where = f"item {index} {arm}"
        problem = self._item(line, item) or self._correct(line, item) or _measured(line)
        if problem is None and arm in DEBATES:
            problem = self._session(line, item, arm)
        return f"{where}: {problem}" if problem else None

    def _item(self, line: dict[str, Any], item: Item) -> str | None:
        if line.get("question") != item.question or line.get("expected") != item.answer:
            return f"not item {item.index} of {self.setup.task.name} (question or expected differ)"
        return None

    def _correct(self, line: dict[str, Any], item: Item) -> str | None:
        said, answer = line.get("said"), line.get("answer")
        if said is None and answer is None:
            right = False
        elif isinstance(said, str) and answer == normalise(self.setup.task.normaliser, said):
            right = self.setup.task.correct(item, said)
        else:
            return "its answer is not the normal form of the words it says were counted"
        if line.get("correct") is not right:
            return f"correct is {_json(line.get('correct'))} but the checker says {_json(right)}"
        return None

    def _session(self, line: dict[str, Any], item: Item, arm: str) -> str | None:
        path = self.session_of(item.index, arm)
        shown = f"its session file {path.name}"
        try:
            data = load_session(path)
        except MootInputError as err:
            return f"{shown}: {'; '.join(err.problems)}"
        except OSError as err:
            return f"{shown}: {err.strerror or err}"
        if data.chain or data.signatures.problems:
            return f"{shown} was changed after it was written (moot verify says where)"
        strangers = unvouched(data, self._trusted())
        if strangers:
            return (
                f"{shown} is not known to be yours: {who_vouches(data, strangers)} "
                "(trust its signer with moot keys trust, or start a new --out folder)"
            )
        if data.spec_raw != arm_spec(self.setup, arm, item):
            return f"{shown} is not the session this item's {arm} ran"
        result = data.result
        if result is None:
            return f"{shown} has no result"
        answer = counted(str(result.get("decision_rule")), str(result.get("decision")))
        rebuilt = json.loads(json.dumps(record(self.setup, arm, item, data.turns, answer, path)))
        differ = [k for k in rebuilt if line.get(k) != rebuilt[k]]
        if set(line) - set(rebuilt):
            differ.append(f"fields a {arm} line does not have")
        if differ:
            return f"not what its session file {path.name} says ({', '.join(differ)})"
        return None


def _measured(line: dict[str, Any]) -> str | None:
    """A line from before the oracle gap was kept cannot be reported with the others."""
    if "gap" not in line:
        return "written before moot bench kept the oracle gap; start a new --out folder"
    return None


def _json(value: Any) -> str:
    return json.dumps(value)[:40]
