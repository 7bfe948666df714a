"""What a debate spec says, as data: its pydantic models and their defaults.

Only shapes and the rules one field or table holds by itself live here, so every
room can name a ``Spec`` without loading a protocol. The rules that need the
protocol a spec names, or the disk, are checked when a spec is read
(``tui.engine.specs.spec``); the protocol registry fills ``NAMED`` as it loads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal
from typing import Protocol as Port

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from tui.engine.basics.family import family_of
from tui.engine.basics.vocab import DEFAULT_PROTOCOL
from tui.engine.terms.documents import ARTIFACT, Document
from tui.engine.terms.openvotes import OPEN, Normaliser, normalise

DEFAULT_MIN_WORDS = 3  # words a statement or reason needs, unless [debate] min_words says


class ProtocolTerms(Port):
    """What a spec's own properties ask of the protocol it names: its default rounds, the
    [debate] keys that name debaters, and who votes (``protocols/base.py``'s ``Protocol``
    has these and everything else)."""

    default_rounds: ClassVar[int]
    debater_keys: ClassVar[frozenset[str]]

    @classmethod
    def voters(cls, spec: Spec) -> list[str]: ...


# The protocol registry (``tui.engine.protocols.PROTOCOLS``) itself, set as it loads, so
# a protocol registered later (an entry point, a test's) is found here too.
NAMED: Mapping[str, type[ProtocolTerms]] = {}


def name_protocols(registry: Mapping[str, type[ProtocolTerms]]) -> None:
    """Read each spec's protocol from ``registry`` (called once, by the registry)."""
    global NAMED
    NAMED = registry


EvidenceKind = Literal[
    "artifact_quote",
    "transcript_quote",
    "context_quote",
    "tool_quote",
    "test_result",
    "external_source",
    "assertion",
    "reasoning",
    "summary",
    "final_answer",
]
CHECKABLE: tuple[EvidenceKind, ...] = (
    "artifact_quote",
    "transcript_quote",
    "context_quote",
    "tool_quote",
)
UNCHECKABLE: tuple[EvidenceKind, ...] = ("assertion", "reasoning", "summary", "final_answer")
RubricRole = Literal["critic", "adversary", "judges"]
Structured = Literal["json_schema", "json_object", "prompt"]
RUBRIC_ROLES: tuple[RubricRole, ...] = ("critic", "adversary", "judges")
DEFAULT_VOTES = ("release", "revise", "escalate")
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$"
CallName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,128}$")]  # an MCP tool name
MAX_DEBATERS = 64  # every debater sees every position: prompts and files grow with the square
MAX_PHASES = 8  # phases of one round
# Rounds times debaters: each debater speaks in every phase of every round, and every
# turn is a record in a session file the reader takes up to SESSION_BYTES of.
MAX_ROUND_SEATS = 2_000
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# A key or parameter name that says its value is a credential.
SECRET_NAME = re.compile(
    r"(^|[_-])(api[_-]?key|apikey|key|token|secret|password|passwd|credentials?|sig|signature)$",
    re.IGNORECASE,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Script(_Strict):
    """Canned turns for ``model = "scripted"``; lists cycle over the debater's turns."""

    votes: list[str] = Field(default_factory=list)
    stances: list[str] = Field(default_factory=list)
    rationales: list[str] = Field(default_factory=list)
    weaknesses: list[list[str]] = Field(default_factory=list)
    suggestions: list[list[str]] = Field(default_factory=list)
    verdicts: list[Literal["defects_found", "no_defect_found"]] = Field(default_factory=list)
    scores: list[int] = Field(default_factory=list)
    routings: list[Literal["release", "revise", "escalate"]] = Field(default_factory=list)
    invalid: list[int] = Field(default_factory=list, description="1-based turns answered with junk")
    invalid_once: list[int] = Field(
        default_factory=list, description="1-based turns whose first attempt is junk"
    )
    fail: list[int] = Field(
        default_factory=list, description="1-based turns that fail as a provider"
    )
    turns: list[dict[str, Any]] = Field(
        default_factory=list, description="whole answers (tables), cycled; for any kind of turn"
    )
    token_delay_ms: float = Field(default=0.0, ge=0, le=10_000)
    turn_delay_ms: float = Field(default=0.0, ge=0, le=600_000)


class Budget(_Strict):
    """Spending caps: ``[budget]`` for the session, ``[debaters.budget]`` for one debater.

    Named apart from a debater's ``max_tokens``, which caps one call's reply.
    """

    max_tokens: int | None = Field(default=None, gt=0, description="tokens in and out, summed")
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_lookups: int | None = Field(
        default=None, gt=0, description="lookups run through [[tools]]; refused ones not counted"
    )
    max_lookup_bytes: int | None = Field(
        default=None, gt=0, description="bytes of lookup results, summed"
    )


class ContextEntry(_Strict):
    """One ``[[context]]`` document: a file, a glob of files, or inline text."""

    label: str = Field(pattern=ID_PATTERN)
    file: str | None = Field(default=None, min_length=1)
    glob: str | None = Field(default=None, min_length=1)
    text: str | None = Field(default=None, min_length=1)
    roles: list[str] | None = Field(default=None, min_length=1)


class ToolEntry(_Strict):
    """One ``[[tools]]`` entry: a stdio MCP server or the built-in read-only files tool.

    ``roles`` (role keys or debater ids) are the only speakers who may call it; the
    bounds hold for each turn, whatever the model asks.
    """

    name: str = Field(pattern=ID_PATTERN)
    mcp: list[str] | None = Field(default=None, min_length=1)
    builtin: Literal["files"] | None = None
    root: str | None = Field(default=None, min_length=1)
    roles: list[str] = Field(min_length=1)
    # An MCP tool's allowlist of call names; a listed call its server does not mark
    # read-only is offered only with ``--allow-tool-writes`` (lookups.offer).
    calls: list[CallName] | None = Field(default=None, min_length=1, max_length=64)
    max_calls_per_turn: int = Field(default=4, ge=1, le=32)
    max_result_bytes: int = Field(default=64 * 1024, ge=256, le=1024 * 1024)
    timeout_s: float = Field(default=20.0, gt=0, le=600)
    # The first call of each turn must ask for a lookup (a small model skips an optional one).
    required: bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> ToolEntry:
        if (self.mcp is None) == (self.builtin is None):
            raise ValueError("give exactly one of mcp (a command) or builtin")
        if self.builtin is not None and self.root is None:
            raise ValueError("the files tool needs a root (a folder relative to the spec)")
        if self.mcp is not None and self.root is not None:
            raise ValueError('root goes with builtin = "files" only')
        if self.builtin is not None and self.calls is not None:
            raise ValueError("calls goes with mcp only (the files tool only reads)")
        if self.mcp is not None and not all(part.strip() for part in self.mcp):
            raise ValueError("mcp: the command and its arguments must not be blank")
        return self


class Debater(_Strict):
    """One participant: an identity, a model, and the text of its role."""

    id: str = Field(pattern=ID_PATTERN, description="how roles, the tally and files name it")
    model: str = Field(min_length=1, description='a LiteLLM model string, "local" or "scripted"')
    role: str = Field(default="", description="the position it argues, shown in its prompt")
    persona: str | None = None
    family: str | None = Field(
        default=None, description="its model family for cross_family (else read off model)"
    )
    api_base: str | list[str] | None = Field(
        default=None, description="the server(s) to call; a list spreads calls and fails over"
    )
    api_key_env: str | None = Field(
        default=None, description="the environment variable holding its key (never the key)"
    )
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0, le=200_000, description="a reply's cap")
    timeout_s: float | None = Field(default=None, gt=0, le=3600, description="a call's cap")
    structured: Structured | None = Field(
        default=None,
        description="how the answer's JSON is asked for; unset: json_schema with an "
        "api_base, else whatever LiteLLM knows the model supports",
    )
    script: Script | None = Field(default=None, description='turns for model = "scripted"')
    budget: Budget | None = Field(default=None, description="this debater's spending caps")

    @property
    def resolved_family(self) -> str:
        return self.family or family_of(self.model)


class DebateSection(_Strict):
    """The ``[debate]`` table: motion, protocol and the rules the engine enforces."""

    title: str = Field(min_length=1)
    motion: str = Field(min_length=1, description="what is decided, shown to every debater")
    protocol: str = Field(default=DEFAULT_PROTOCOL, description="a built-in or installed one")
    artifact: str | None = Field(default=None, description="the text under review, inline")
    artifact_file: str | None = Field(
        default=None, min_length=1, description="the text under review, from a file"
    )
    max_rounds: int | None = Field(
        default=None, ge=1, le=1000, description="unset: the protocol's own default"
    )
    consensus_threshold: int | None = Field(
        default=None, ge=1, description="votes that decide; unset: a majority of the voters"
    )
    phases: list[str] | None = Field(default=None, description="a round's phases, in order")
    votes: Annotated[list[str], Field(min_length=1)] | Literal["open"] = Field(
        default_factory=lambda: list(DEFAULT_VOTES),
        description='the votes to choose from, or "open": each vote is the debater\'s own '
        "answer, counted in the form normalise gives it",
    )
    normalise: Normaliser | None = Field(
        default=None, description='how open votes are compared (unset: "text")'
    )
    early_stop: bool = Field(
        default=True,
        description="false: votes decide only after the last round, so every debater "
        "speaks in every round",
    )
    cross_family: Literal["off", "warn", "require"] = Field(
        default="warn", description="whether debaters must come from more than one model family"
    )
    rotate: bool = Field(default=False, description="the speaking order turns by one each round")
    retries: int = Field(default=1, ge=0, le=5, description="re-asks of an invalid turn")
    min_words: int = Field(
        default=DEFAULT_MIN_WORDS,
        ge=1,
        le=50,
        description="words a weakness, concern, answer or reason needs",
    )
    parallel: bool = Field(default=True, description="independent calls in a phase run at once")
    on_invalid: Literal["escalate", "continue"] = Field(
        default="escalate", description="what a turn still invalid after its retries does"
    )
    proposer: str | None = Field(default=None, description="the debater who proposes")
    critic: str | None = Field(default=None, description="the debater who critiques")
    release_score: int = Field(
        default=80, ge=0, le=100, description="the critic's score a release needs"
    )
    defender: str | None = Field(default=None, description="the debater who defends the artifact")
    adversary: str | None = Field(default=None, description="the debater who challenges it")
    mode: Literal["blocking", "advisory"] = Field(
        default="blocking",
        description="blocking: an unresolved critical challenge refuses a release; advisory: "
        "the operator decides",
    )
    authors: list[str] | None = Field(default=None, description="the debaters who write candidates")
    synthesizer: str | None = Field(default=None, description="the debater who merges them")
    judges: list[str] | None = Field(
        default=None, description="the debaters who judge candidates blind"
    )
    # Each protocol that reads it bounds it (spec_problems) and gives its own default.
    convergence: int | float | None = Field(
        default=None,
        gt=0,
        le=50,
        description="when the rounds have converged (each protocol that reads it says how)",
    )
    unit: str | None = Field(
        default=None, min_length=1, max_length=40, description="the unit of an estimated number"
    )
    minimum: int | float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="the least estimate the unit allows (0 where it cannot be negative)",
    )
    seed: int | None = Field(
        default=None, description="the seed of the judges' X/Y order (drawn when unset)"
    )
    position_swap: bool = Field(
        default=False, description="each judge asked both ways; a flip is no preference"
    )

    @property
    def open_votes(self) -> bool:
        return self.votes == OPEN

    @property
    def vote_options(self) -> list[str]:
        """The votes to choose from; empty when votes are open."""
        return [] if isinstance(self.votes, str) else list(self.votes)

    @property
    def normaliser(self) -> Normaliser:
        return self.normalise or "text"

    def counted(self, vote: str) -> str | None:
        """The vote ``vote`` counts as: itself if listed, its normal form if open, else None."""
        if self.open_votes:
            return normalise(self.normaliser, vote)
        return vote if vote in self.vote_options else None

    def vote_of(self, content: dict[str, Any]) -> str | None:
        """A valid turn's counted vote: its routing, or its vote (normalised when open)."""
        routing = content.get("routing")
        if routing:
            return str(routing)
        vote = content.get("vote")
        if not isinstance(vote, str) or not vote:
            return None
        return self.counted(vote) if self.open_votes else vote

    def accepts(self, vote: str) -> bool:
        """Whether the operator may decide ``vote``: a listed vote, or an open one in normal form."""
        return self.counted(vote) == vote


class RubricProperty(_Strict):
    """One property a verifier must establish with admissible evidence (default: no)."""

    id: str = Field(pattern=ID_PATTERN)
    question: str = Field(min_length=1)
    admissible: list[EvidenceKind] = Field(default_factory=lambda: list(CHECKABLE), min_length=1)
    forbidden: list[EvidenceKind] = Field(default_factory=lambda: list(UNCHECKABLE))
    shortcuts: list[str] = Field(default_factory=list)


class Rubric(_Strict):
    """An adversarial-frame rubric for critics, adversaries and judges."""

    applies_to: list[RubricRole] = Field(default_factory=lambda: list(RUBRIC_ROLES), min_length=1)
    default_verdict: Literal["no"] = "no"
    properties: list[RubricProperty] = Field(min_length=1)


class Spec(_Strict):
    """A whole debate spec as read from TOML."""

    debate: DebateSection
    debaters: list[Debater] = Field(min_length=1)
    rubric: Rubric | None = None
    context: list[ContextEntry] = Field(default_factory=list)
    budget: Budget | None = None
    tools: list[ToolEntry] = Field(default_factory=list, max_length=16)
    _documents: tuple[Document, ...] = PrivateAttr(default=())

    @property
    def documents(self) -> tuple[Document, ...]:
        """The documents read for this spec (from its files, or from the session)."""
        # Read from pydantic's own store: ``self._documents`` goes through ``__getattr__``
        # at about 2.5 µs, and every turn asks.
        documents: tuple[Document, ...] = (self.__pydantic_private__ or {}).get("_documents", ())
        return documents

    def with_documents(self, documents: tuple[Document, ...] | list[Document]) -> Spec:
        """A copy holding ``documents``; the artifact file's text becomes the artifact."""
        artifact = next((d for d in documents if d.label == ARTIFACT), None)
        update = {}
        if artifact is not None and self.debate.artifact_file is not None:
            update["debate"] = self.debate.model_copy(update={"artifact": artifact.text})
        spec = self.model_copy(update=update)
        spec._documents = tuple(documents)
        return spec

    @property
    def terms(self) -> type[ProtocolTerms]:
        """What the registered protocol this spec names says of it (validation refuses any
        other); the whole protocol is ``tui.engine.protocols.protocol_class(spec)``."""
        return NAMED[self.debate.protocol]

    @property
    def max_rounds(self) -> int:
        if self.debate.max_rounds is not None:
            return self.debate.max_rounds
        return self.terms.default_rounds

    def debater(self, debater_id: str) -> Debater:
        for d in self.debaters:
            if d.id == debater_id:
                return d
        raise KeyError(debater_id)

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self.debaters]

    @property
    def voters(self) -> list[str]:
        return self.terms.voters(self)

    @property
    def threshold(self) -> int:
        if self.debate.consensus_threshold is not None:
            return self.debate.consensus_threshold
        return len(self.voters) // 2 + 1
