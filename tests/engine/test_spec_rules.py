"""Every protocol's spec rules, pinned message by message.

Each case is a raw spec and the exact problems it must produce (order aside), so
moving a rule between modules cannot change a key path or a word.
"""

from __future__ import annotations

from typing import Any

import pytest

from tui.engine import SpecError, validate_spec
from tui.engine.protocols import PROTOCOLS
from tui.engine.specs.spec import spec_warnings


def S(i: str, **kw: Any) -> dict[str, Any]:
    return {"id": i, "model": "scripted", **kw}


def D(**kw: Any) -> dict[str, Any]:
    return {"title": "T", "motion": "M", **kw}


TWO = [S("a"), S("b")]
REFINE_IDS = [S(x) for x in ("a", "b", "c", "s", "j1", "j2", "j3")]
REFINE = dict(
    protocol="refine", authors=["a", "b"], critic="c", synthesizer="s", judges=["j1", "j2", "j3"]
)
CASES: dict[str, dict[str, Any]] = {
    "unknown protocol flags every role key": {
        "debate": D(protocol="vibes", proposer="a", judges=["b"]),
        "debaters": TWO,
    },
    "protocol not a string": {"debate": D(protocol=["debate"]), "debaters": TWO},
    "debate unknown phase": {"debate": D(phases=["proposal", "brawl"]), "debaters": TWO},
    "debate empty phases": {"debate": D(phases=[]), "debaters": TWO},
    "debate one debater": {"debate": D(), "debaters": [S("a")]},
    "debate one debater, no critique": {"debate": D(phases=["proposal"]), "debaters": [S("a")]},
    "debate role keys": {"debate": D(critic="a", mode="advisory"), "debaters": TWO},
    "debate threshold": {"debate": D(consensus_threshold=3), "debaters": TWO},
    "adversary missing roles, phases": {
        "debate": D(protocol="adversary", phases=["x"]),
        "debaters": TWO,
    },
    "adversary bad ids": {
        "debate": D(protocol="adversary", proposer="x", critic="y", judges=["a"]),
        "debaters": TWO,
    },
    "adversary self critique": {
        "debate": D(protocol="adversary", proposer="a", critic="a"),
        "debaters": TWO,
    },
    "adversary threshold": {
        "debate": D(protocol="adversary", proposer="a", critic="b", consensus_threshold=3),
        "debaters": TWO,
    },
    "challenge no artifact": {
        "debate": D(protocol="challenge", defender="a", adversary="a", phases=["challenge"]),
        "debaters": TWO,
    },
    "challenge missing roles": {
        "debate": D(protocol="challenge", artifact="x", proposer="a"),
        "debaters": TWO,
    },
    "challenge threshold": {
        "debate": D(
            protocol="challenge", artifact="x", defender="a", adversary="b", consensus_threshold=2
        ),
        "debaters": TWO,
    },
    "refine missing everything": {
        "debate": D(protocol="refine", phases=["judging"]),
        "debaters": TWO,
    },
    "refine bad authors": {
        "debate": D(**{**REFINE, "authors": ["a", "zz", "b"]}),
        "debaters": REFINE_IDS,
    },
    "refine authors not a list": {
        "debate": D(**{**REFINE, "authors": "a"}),
        "debaters": REFINE_IDS,
    },
    "refine critic is author": {"debate": D(**{**REFINE, "critic": "a"}), "debaters": REFINE_IDS},
    "refine critic is synthesizer": {
        "debate": D(**{**REFINE, "critic": "s"}),
        "debaters": REFINE_IDS,
    },
    "refine panel": {
        "debate": D(**{**REFINE, "judges": ["j1", "j1", "a", "q"]}),
        "debaters": REFINE_IDS,
    },
    "refine panel too big": {
        "debate": D(**{**REFINE, "judges": ["j1", "j2", "j3", "s", "c", "q", "r", "t", "u"]}),
        "debaters": REFINE_IDS,
    },
    "refine empty judges": {"debate": D(**{**REFINE, "judges": []}), "debaters": REFINE_IDS},
    "refine threshold": {"debate": D(**REFINE, consensus_threshold=4), "debaters": REFINE_IDS},
    "refine unknown critic, synthesizer": {
        "debate": D(**{**REFINE, "critic": "x", "synthesizer": "y"}),
        "debaters": REFINE_IDS,
    },
    "require debate": {
        "debate": D(cross_family="require"),
        "debaters": TWO + [S("c", family="other")],
    },
    "require adversary": {
        "debate": D(protocol="adversary", proposer="a", critic="b", cross_family="require"),
        "debaters": TWO,
    },
    "require challenge": {
        "debate": D(
            protocol="challenge", artifact="x", defender="a", adversary="b", cross_family="require"
        ),
        "debaters": TWO,
    },
    "require refine": {
        "debate": D(**REFINE, cross_family="require"),
        "debaters": [*REFINE_IDS[:4], S("j1", family="f1"), S("j2", family="f2"), S("j3")],
    },
    "votes": {
        "debate": D(votes=["yes", "yes"]),
        "debaters": [S("a", script={"votes": ["no"]}), S("b")],
    },
}

EXPECTED = {
    "unknown protocol flags every role key": [
        # the built-in protocols, then any installed (the tests install examples/protocols/)
        f"debate.protocol: unknown protocol 'vibes'; expected one of {', '.join(PROTOCOLS)}",
        "debate.judges: not used by the vibes protocol",
        "debate.proposer: not used by the vibes protocol",
    ],
    "protocol not a string": ["debate.protocol: Input should be a valid string"],
    "debate unknown phase": [
        "debate.phases[1]: unknown phase 'brawl'; expected one of proposal, critique, revision, consensus"
    ],
    "debate empty phases": ["debate.phases: needs at least one phase"],
    "debate one debater": [
        "debaters: a debate with a critique phase needs at least two debaters; one debater would critique itself, and self-critique is refused"
    ],
    "debate one debater, no critique": [],
    "debate role keys": [
        "debate.critic: not used by the debate protocol",
        "debate.mode: not used by the debate protocol",
    ],
    "debate threshold": ["debate.consensus_threshold: 3 is larger than the number of voters (2)"],
    "adversary missing roles, phases": [
        "debate.phases: the adversary protocol has fixed phases",
        "debate.proposer: required for the adversary protocol",
        "debate.critic: required for the adversary protocol",
    ],
    "adversary bad ids": [
        "debate.judges: not used by the adversary protocol",
        "debate.proposer: 'x' is not a debater id",
        "debate.critic: 'y' is not a debater id",
    ],
    "adversary self critique": [
        "debate.critic: 'a' is also the proposer; self-critique is refused"
    ],
    "adversary threshold": [
        "debate.consensus_threshold: 3 is larger than the number of voters (2)"
    ],
    "challenge no artifact": [
        "debate.phases: the challenge protocol has fixed phases",
        "debate.adversary: 'a' is also the defender; self-critique is refused",
        "debate.artifact: required for the challenge protocol (or artifact_file)",
    ],
    "challenge missing roles": [
        "debate.proposer: not used by the challenge protocol",
        "debate.defender: required for the challenge protocol",
        "debate.adversary: required for the challenge protocol",
    ],
    "challenge threshold": [
        "debate.consensus_threshold: 2 is larger than the number of voters (1)"
    ],
    "refine missing everything": [
        "debate.phases: the refine protocol has fixed phases",
        "debate.authors: name exactly two debaters, author A and author B",
        "debate.critic: required for the refine protocol",
        "debate.synthesizer: required for the refine protocol",
        "debate.judges: required for the refine protocol (an odd panel of 3 to 7)",
    ],
    "refine bad authors": [
        "debate.authors: name exactly two debaters, author A and author B",
        "debate.authors[1]: 'zz' is not a debater id",
    ],
    "refine authors not a list": [
        "debate.authors: Input should be a valid list",
        "debate.authors: name exactly two debaters, author A and author B",
    ],
    "refine critic is author": [
        "debate.critic: 'a' also writes candidates (author or synthesizer); self-critique is refused"
    ],
    "refine critic is synthesizer": [
        "debate.critic: 's' also writes candidates (author or synthesizer); self-critique is refused"
    ],
    "refine panel": [
        "debate.judges: an odd panel of 3 to 7 judges, not 4",
        "debate.judges: a judge is named twice",
        "debate.judges[2]: 'a' wrote a candidate; a judge may not judge its own work",
        "debate.judges[3]: 'q' is not a debater id",
    ],
    "refine panel too big": [
        "debate.judges: an odd panel of 3 to 7 judges, not 9",
        "debate.judges[3]: 's' wrote a candidate; a judge may not judge its own work",
        "debate.judges[5]: 'q' is not a debater id",
        "debate.judges[6]: 'r' is not a debater id",
        "debate.judges[7]: 't' is not a debater id",
        "debate.judges[8]: 'u' is not a debater id",
    ],
    "refine empty judges": [
        "debate.judges: required for the refine protocol (an odd panel of 3 to 7)"
    ],
    "refine threshold": ["debate.consensus_threshold: 4 is larger than the number of voters (3)"],
    "refine unknown critic, synthesizer": [
        "debate.critic: 'x' is not a debater id",
        "debate.synthesizer: 'y' is not a debater id",
    ],
    "require debate": [
        "debate.cross_family: require, but critic 'a' and proposer 'b' are both family 'scripted'"
    ],
    "require adversary": [
        "debate.cross_family: require, but critic 'b' and proposer 'a' are both family 'scripted'"
    ],
    "require challenge": [
        "debate.cross_family: require, but critic 'b' and proposer 'a' are both family 'scripted'"
    ],
    "require refine": [
        "debate.cross_family: require, but critic 'c' and proposer 'a' are both family 'scripted'",
        "debate.cross_family: require, but critic 'j3' and proposer 'a' are both family 'scripted'",
        "debate.cross_family: require, but critic 'j3' and proposer 'b' are both family 'scripted'",
        "debate.cross_family: require, but critic 'j3' and proposer 's' are both family 'scripted'",
    ],
    "votes": [
        "debaters[0].script.votes[0]: 'no' is not one of debate.votes",
        "debate.votes: duplicate vote names",
    ],
}

WARNED = {
    "require debate": [("a", "b")],
    "require adversary": [("b", "a")],
    "require challenge": [("b", "a")],
    "require refine": [("c", "a"), ("j3", "a"), ("j3", "b"), ("j3", "s")],
}


def problems(raw: dict[str, Any]) -> list[str]:
    try:
        validate_spec(raw)
    except SpecError as err:
        return err.problems
    return []


@pytest.mark.parametrize("case", sorted(CASES))
def test_rule_messages(case: str) -> None:
    found = problems(CASES[case])
    assert sorted(found) == sorted(EXPECTED[case])


@pytest.mark.parametrize("case", sorted(WARNED))
def test_warn_policy_names_each_critique_pair(case: str) -> None:
    raw = dict(CASES[case])
    raw["debate"] = {**raw["debate"], "cross_family": "warn"}
    expected = [
        f"{critic!r} judges the work of {author!r} and both are family 'scripted': "
        'a weak adversarial pass (cross_family = "warn")'
        for critic, author in WARNED[case]
    ]
    assert spec_warnings(validate_spec(raw)) == expected
