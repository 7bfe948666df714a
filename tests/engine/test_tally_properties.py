"""Property tests of counting and stopping over random vote sequences."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import debate_raw, run_engine
from tui.engine import Turn, validate_spec
from tui.engine.basics.vocab import TurnKind
from tui.engine.core import tally
from tui.engine.core.state import DebateState

VOTES = ["release", "revise", "escalate"]
ids = st.sampled_from(["a", "b", "c", "d", "e"])
events = st.lists(st.tuples(ids, st.sampled_from(VOTES), st.booleans()), max_size=60)


@given(events)
def test_latest_valid_vote_per_distinct_debater(seq: list[tuple[str, str, bool]]) -> None:
    spec = validate_spec(debate_raw({d: ["release"] for d in "abcde"}, consensus_threshold=1))
    state = DebateState(spec, 1)
    for i, (speaker, vote, invalid) in enumerate(seq):
        state.add(
            Turn(
                index=i + 1,
                round=1,
                phase="proposal",
                speaker=speaker,
                kind=TurnKind.POSITION,
                model="scripted",
                family="scripted",
                vote=None if invalid else vote,
                invalid=invalid,
            )
        )
    latest = state.latest_vote
    for speaker in {s for s, _, _ in seq}:
        valid = [v for s, v, invalid in seq if s == speaker and not invalid]
        assert latest.get(speaker) == (valid[-1] if valid else None)
    counts = state.tally()
    assert sum(counts.values()) == len(latest)  # one vote per distinct debater
    assert set(counts) == set(VOTES)


@given(st.dictionaries(st.sampled_from(VOTES), st.integers(0, 6)), st.integers(1, 6))
def test_consensus_rule(counts: dict[str, int], threshold: int) -> None:
    winner = tally.consensus(counts, threshold)
    if winner is None:
        top = max(counts.values(), default=0)
        assert top < threshold or list(counts.values()).count(top) > 1
    else:
        assert counts[winner] >= threshold
        assert all(n < counts[winner] for v, n in counts.items() if v != winner)


vote_lists = st.lists(st.sampled_from(VOTES), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(vote_lists, min_size=2, max_size=4),
    st.integers(1, 4),
    st.integers(1, 3),
    st.sets(st.integers(1, 4), max_size=2),
)
def test_debate_stops_exactly_when_the_rule_says(
    scripts: list[list[str]], threshold: int, max_rounds: int, invalid_turns: set[int]
) -> None:
    threshold = min(threshold, len(scripts))
    raw = debate_raw(
        {f"d{i}": v for i, v in enumerate(scripts)},
        consensus_threshold=threshold,
        max_rounds=max_rounds,
        phases=["proposal", "consensus"],
        on_invalid="continue",
    )
    raw["debaters"][0]["script"]["invalid"] = sorted(invalid_turns)
    engine, _ = run_engine(raw)
    turns = engine.state.turns
    r = engine.result()
    # Recount independently from the transcript.
    latest: dict[str, str | None] = {}
    stop_at = None
    per_phase = len(scripts)
    for i, t in enumerate(turns):
        if not t.invalid:
            latest[t.speaker] = t.vote
        if (i + 1) % per_phase == 0:
            c = Counter(latest.values())
            top = max(c.values(), default=0)
            if top >= threshold and list(c.values()).count(top) == 1:
                stop_at = i + 1
                break
    assert all(not (t.invalid and t.vote) for t in turns)  # invalid turns carry no vote
    if stop_at is not None:
        assert len(turns) == stop_at
        assert r["decision_rule"] == "threshold_vote"
        assert r["decision"] == Counter(latest.values()).most_common(1)[0][0]
    else:
        assert len(turns) == max_rounds * 2 * per_phase
        assert (r["decision"], r["decision_rule"]) == ("escalate", "max_rounds_exhausted")
    assert sum(r["vote_tally"].values()) == len(latest)
