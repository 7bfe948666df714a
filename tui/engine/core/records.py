"""Turn records: what a model is asked to fill, and what the engine stores.

The content models are both the validation schema and the JSON schema sent to
providers that support structured output, so the two can never drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from tui.engine.basics.vocab import TurnKind


class _Content(BaseModel):
    """Model text is kept byte for byte; only blank answers are refused."""

    model_config = ConfigDict(extra="ignore")

    @field_validator("stance", "rationale", "vote", check_fields=False)
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if isinstance(value, str) and value and not value.strip():
            raise ValueError("must not be blank")
        return value


class Position(_Content):
    """A debater's stance on the motion, with its reasons and its vote."""

    stance: str = Field(min_length=1, description="Your position in one or two sentences.")
    rationale: str = Field(min_length=1, description="The reasons for your position.")
    vote: str = Field(min_length=1, description="One of the allowed votes.")


class CandidateCritique(_Content):
    """The negative channel: weaknesses, or the explicit verdict no_defect_found.

    As is, it is refine's critic, which attacks a candidate and casts no vote.
    """

    weaknesses: list[str] = Field(
        default_factory=list, description="Concrete weaknesses of the work critiqued."
    )
    suggestions: list[str] = Field(default_factory=list, description="How to fix them.")
    verdict: Literal["defects_found", "no_defect_found"] = Field(
        description="no_defect_found only if you found no weakness at all."
    )

    @model_validator(mode="after")
    def _negative_channel(self) -> CandidateCritique:
        self.weaknesses = [w for w in self.weaknesses if w.strip()]
        if not self.weaknesses and self.verdict != "no_defect_found":
            raise ValueError(
                "a critique must list at least one weakness or give the verdict no_defect_found"
            )
        return self


class Critique(CandidateCritique):
    """A debate critique of another debater's latest position, with the critic's vote."""

    vote: str = Field(min_length=1, description="Your own vote after this critique.")


class AdversaryCritique(Critique):
    """The adversary protocol's critique: adds a score and a routing decision."""

    score: int = Field(ge=0, le=100, description="Quality of the proposal, 0 to 100.")
    routing: Literal["release", "revise", "escalate"] = Field(
        description="release it, send it back for revision, or escalate to a human."
    )
    vote: str = Field(default="", description="Leave empty; routing is your vote.")


class Candidate(_Content):
    """A candidate answer to the motion (refine's authors and synthesizer)."""

    candidate: str = Field(min_length=1, description="The full candidate answer.")
    rationale: str = Field(default="", description="Why this candidate is strong.")

    @field_validator("candidate")
    @classmethod
    def _has_text(cls, value: str) -> str:
        return _required_text(value)


def _required_text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


class Challenge(BaseModel):
    """One objection to the artifact; without evidence it is not a challenge."""

    category: str = Field(min_length=1, description="e.g. correctness, security, cost, scope.")
    concern: str = Field(min_length=1, description="What could fail, in one sentence.")
    evidence: str = Field(
        min_length=1, description="Where in the artifact the problem shows; quote it."
    )
    source: str = Field(
        default="",
        description="Only when evidence quotes a lookup's result: its id (L1, L2, ...). "
        "The challenge then counts only if the quote is verbatim in that result.",
    )
    severity: Literal["critical", "significant", "minor"]
    recommendation: str = Field(min_length=1, description="What to change.")

    @field_validator("category", "concern", "evidence", "recommendation")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return _required_text(value)

    @model_serializer(mode="wrap")
    def _without_empty_source(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only a challenge quoting a lookup carries ``source`` (older files have none)."""
        out: dict[str, Any] = handler(self)
        if not out.get("source"):
            out.pop("source", None)
        return out


class Assessment(BaseModel):
    """The adversary's view of an earlier challenge after the defense."""

    challenge_id: str = Field(min_length=1, description="The id of an earlier challenge.")
    status: Literal["addressed", "rejected", "unaddressed"]
    note: str = ""


class ChallengeReport(_Content):
    """An adversary's report: challenges or an explicit no-objections verdict."""

    challenges: list[Challenge] = Field(default_factory=list)
    verdict: Literal["objections", "no_objections"] = Field(
        description="no_objections only if you raise no challenge at all."
    )
    assessments: list[Assessment] = Field(
        default_factory=list, description="From round 2: one per earlier challenge."
    )
    convergence: Literal["continue", "converging", "deadlock"] = "continue"

    @model_validator(mode="after")
    def _negative_channel(self) -> ChallengeReport:
        if not self.challenges and self.verdict != "no_objections":
            raise ValueError("raise at least one challenge, or give the verdict no_objections")
        if self.challenges and self.verdict == "no_objections":
            raise ValueError("the verdict no_objections cannot come with challenges")
        return self


class DefenseResponse(BaseModel):
    challenge_id: str = Field(min_length=1)
    status: Literal["addressed", "rejected"]
    answer: str = Field(min_length=1, description="The change made, or why it is rejected.")


class Defense(_Content):
    """A defender's answer per challenge, and the revised artifact."""

    responses: list[DefenseResponse] = Field(default_factory=list)
    revised_artifact: str = Field(min_length=1, description="The whole artifact, revised.")


class Judgment(_Content):
    """A blind judge's pick between two unlabelled candidates."""

    pick: Literal["X", "Y"] = Field(description="The better candidate: X or Y.")
    reason: str = Field(min_length=1, description="The decisive reason, one or two sentences.")


class Estimate(_Content):
    """A panelist's number and why; the estimate must be a finite number."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    estimate: float = Field(description="Your estimate, a single number in the spec's unit.")
    rationale: str = Field(min_length=1, description="Why this number, in one or two sentences.")


CONTENT_MODELS: dict[str, type[_Content]] = {
    TurnKind.POSITION: Position,
    TurnKind.CRITIQUE: Critique,
    TurnKind.ADVERSARY_CRITIQUE: AdversaryCritique,
    TurnKind.CANDIDATE: Candidate,
    TurnKind.CANDIDATE_CRITIQUE: CandidateCritique,
    TurnKind.CHALLENGE_REPORT: ChallengeReport,
    TurnKind.DEFENSE: Defense,
    TurnKind.JUDGMENT: Judgment,
    TurnKind.ESTIMATE: Estimate,
}


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema with every ``$ref`` replaced by its definition (no ``$defs``).

    Per-slot constraints and small constrained decoders both want a plain tree.
    """
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(defs[ref.rsplit("/", 1)[-1]])
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    inlined: dict[str, Any] = walk(schema)
    return inlined


@dataclass(slots=True)
class Turn:
    """One completed turn as the session file records it."""

    index: int  # the turn number, 1-based, as the screen, saw labels and exports show it
    round: int
    phase: str
    speaker: str
    kind: str  # a TurnKind, or a kind its protocol adds (Protocol.turn_kinds)
    model: str
    family: str
    content: dict[str, Any] = field(default_factory=dict)
    vote: str | None = None
    target: str | None = None
    invalid: bool = False
    raw: str | None = None
    raw_cut: dict[str, Any] | None = None  # raw was longer: its length and sha256 (rawtext.py)
    error: str | None = None
    saw: list[str] = field(default_factory=list)
    attempts: int = 1
    started_at: str = ""
    elapsed_ms: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    cross_family_held: bool | None = None
    variant: str | None = None
    structured: str | None = None  # how the provider asked for JSON, when it says (json_schema ...)
    client: str | None = (
        None  # the library that made the calls, when it says (tui.engine.basics.clients)
    )
    clamped: list[str] | None = (
        None  # counts a provider reported out of range (tui.engine.core.usage)
    )
    derived: dict[str, Any] = field(default_factory=dict)  # engine-owned facts about the turn
    lookups: list[dict[str, Any]] | None = None  # every lookup asked, as run (lookups.py)

    def to_record(self) -> dict[str, Any]:
        """A TOML-ready dict: no None values (TOML has no null), no empty tables.

        Its lists and tables are the turn's own, not copies (a deep copy was most
        of a long session's export): the session store and exports only read them.
        """
        return {k: v for k in _TURN_FIELDS if (v := getattr(self, k)) is not None and v != {}}


_TURN_FIELDS = tuple(f.name for f in fields(Turn))

# Loading a session validates stored turns against this same dataclass.
Turn.__pydantic_config__ = ConfigDict(extra="ignore")  # type: ignore[attr-defined]
