"""A decision an MCP client relayed says so: ``via`` on the action, ``decided_via`` in the result.

Both are claims ``moot verify`` checks: the channel must be one moot knows, and
the result's ``decided_via`` must be what replaying the journal gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.batch_specs import unresolved
from tests.commands.test_inbox import run_specs
from tests.engine.test_verify_session import rewrite
from tui.commands.decide import decide_session
from tui.engine.basics.errors import MootInputError
from tui.engine.basics.vocab import DecisionChannel
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file


def _failed(path: Path) -> set[tuple[str, str]]:
    return {(c.where, c.field) for c in verify_file(path).failures}


def test_a_relayed_decision_names_its_channel_and_verifies(tmp_path: Path) -> None:
    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    result = decide_session(
        target, "revise", "Roll back first.", via=DecisionChannel.MCP_ELICITATION
    )
    assert result["decided_by"] == "operator"
    assert result["decided_via"] == "mcp_elicitation"
    data = load_session(target)
    assert [a.get("via") for a in data.actions] == ["mcp_elicitation"]
    assert data.result is not None and data.result["decided_via"] == "mcp_elicitation"
    report = verify_file(target)
    assert report.ok
    assert any(c.field == "via" and c.ok for c in report.claims)


def test_a_decision_from_moot_itself_names_no_channel(tmp_path: Path) -> None:
    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    result = decide_session(target, "revise", "Roll back first.")
    assert "decided_via" not in result
    assert "via" not in load_session(target).actions[0]
    assert verify_file(target).ok


def _set_via(value: Any) -> Any:
    def change(doc: dict[str, Any]) -> None:
        doc["operator_actions"][0]["via"] = value

    return change


def test_an_unknown_channel_is_named(tmp_path: Path) -> None:
    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    decide_session(target, "revise", "Roll back first.", via=DecisionChannel.MCP)
    rewrite(target, _set_via("telepathy"))
    assert ("operator action 1 (decide)", "via") in _failed(target)


@pytest.mark.parametrize("forged", ["mcp", None])
def test_a_forged_decided_via_fails_the_replay(tmp_path: Path, forged: str | None) -> None:
    """A person's decision passed off as relayed, or a relayed one as a person's."""
    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    via = DecisionChannel.MCP_ELICITATION if forged is None else None
    decide_session(target, "revise", "Roll back first.", via=via)

    def change(doc: dict[str, Any]) -> None:
        if forged is None:
            doc["result"].pop("decided_via")
        else:
            doc["result"]["decided_via"] = forged

    rewrite(target, change)
    assert ("result", "decided_via") in _failed(target)


def test_refusals_name_the_tool_arguments_when_asked(tmp_path: Path) -> None:
    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    before = target.read_bytes()
    with pytest.raises(MootInputError) as err:
        decide_session(target, "ship", "Because.", via=DecisionChannel.MCP, flag="")
    assert err.value.problems == ["vote: 'ship' is not one of release, revise, escalate"]
    assert target.read_bytes() == before
