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


class TurnContent(BaseModel):
    """Model text is kept byte for byte; only blank answers are refused."""

    model_config = ConfigDict(extra="ignore")

    @field_validator("stance", "rationale", "vote", check_fields=False)
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if isinstance(value, str) and value and not value.strip():
            raise ValueError("must not be blank")
        return value


class Position(TurnContent):
    """A debater's stance on the motion, with its reasons and its vote."""

    stance: str = Field(min_length=1, description="Your position in one or two sentences.")
    rationale: str = Field(min_length=1, description="The reasons for your position.")
    vote: str = Field(min_length=1, description="One of the allowed votes.")


class NegativeChannel(TurnContent):
    """Every critique's negative channel: weaknesses, or the explicit verdict no_defect_found."""

    weaknesses: list[str] = Field(
        default_factory=list, description="Concrete weaknesses of the work critiqued."
    )
    suggestions: list[str] = Field(default_factory=list, description="How to fix them.")
    verdict: Literal["defects_found", "no_defect_found"] = Field(
        description="no_defect_found only if you found no weakness at all."
    )

    @model_validator(mode="after")
    def _negative_channel(self) -> NegativeChannel:
        self.weaknesses = [w for w in self.weaknesses if w.strip()]
        if not self.weaknesses and self.verdict != "no_defect_found":
            raise ValueError(
                "a critique must list at least one weakness or give the verdict no_defect_found"
            )
        return self


class Critique(NegativeChannel):
    """A debate critique of another debater's latest position, with the critic's vote."""

    vote: str = Field(min_length=1, description="Your own vote after this critique.")


class SourceWhenGiven(BaseModel):
    """A model whose ``source`` is written only when it names one: older files have none,
    and an empty one would change their bytes on a rewrite."""

    @model_serializer(mode="wrap")
    def _without_empty_source(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if not out.get("source"):
            out.pop("source", None)
        return out


def required_text(value: str) -> str:
    """A field a model must fill with words, not only spaces (protocols' models use it)."""
    if not value.strip():
        raise ValueError("must not be blank")
    return value


# The shared kinds' models; a protocol's own kinds are its ``turn_kinds``.
CONTENT_MODELS: dict[str, type[TurnContent]] = {
    TurnKind.POSITION: Position,
    TurnKind.CRITIQUE: Critique,
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
