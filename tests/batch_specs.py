"""Spec files for the batch, inbox, decide and watch tests: decided, unresolved, vetoed, bad.

``write`` puts any spec dict on disk, for every test that runs a spec file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w

from tests.helpers import debate_raw

CRITICAL = {
    "category": "reliability",
    "concern": "Restoring a backup loses a day of writes.",
    "evidence": "restore last night's backup",
    "severity": "critical",
    "recommendation": "Use a reversible migration instead.",
}


def decided(title: str = "Decided debate") -> dict[str, Any]:
    """Three debaters who agree at once: ``release`` by ``threshold_vote``."""
    return debate_raw({"a": ["release"], "b": ["release"], "c": ["release"]}, title=title)


def unresolved(title: str = "Split debate", choices: list[str] | None = None) -> dict[str, Any]:
    """Two debaters who never agree: ``escalate`` by ``max_rounds_exhausted``."""
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, title=title, max_rounds=1)
    if choices:
        raw["debate"]["votes"] = choices
    return raw


def blocked(title: str = "Blocked release") -> dict[str, Any]:
    """A challenge left with an unresolved critical challenge: release is vetoed."""
    adversary = [
        {"challenges": [CRITICAL], "verdict": "objections"},
        {
            "challenges": [],
            "verdict": "no_objections",
            "assessments": [{"challenge_id": "C1.1", "status": "unaddressed"}],
        },
    ]
    return {
        "debate": {
            "title": title,
            "motion": "Deployment plan for the billing service.",
            "protocol": "challenge",
            "artifact": "Deploy on Friday at 17:00. Rollback: restore last night's backup.",
            "defender": "owner",
            "adversary": "red",
            "max_rounds": 2,
        },
        "debaters": [
            {"id": "owner", "model": "scripted"},
            {"id": "red", "model": "scripted", "family": "other", "script": {"turns": adversary}},
        ],
    }


def write(path: Path, raw: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps(raw), encoding="utf-8")
    return path
