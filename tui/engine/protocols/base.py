"""What a protocol decides: phases, slots, what each slot sees, and when to stop."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from typing import Protocol as Port

from pydantic import BaseModel

from tui.engine.basics.vocab import ESCALATE, DecisionRule, TurnKind
from tui.engine.core.parsing import TurnParseError
from tui.engine.core.records import Turn
from tui.engine.core.schedule import Slot
from tui.engine.core.sections import Quoted, Section
from tui.engine.core.state import DebateState, Decision
from tui.engine.core.substance import NO_RULES, StatementRules, content_problems
from tui.engine.grounding.context import ContextItem as ContextItem  # each protocol's prompt
from tui.engine.protocols.raw import Entry, RawSpec

if TYPE_CHECKING:  # types in signatures only
    from tui.engine.core.ports import TurnRequest
    from tui.engine.terms.spec import RubricRole, Script, Spec


class RecordedSession(Port):
    """What a protocol's verify hooks read of a loaded session file (``moot verify`` passes
    its ``SessionData``): the spec it was run with and the turns it recorded."""

    @property
    def spec(self) -> Spec: ...
    @property
    def turns(self) -> list[Turn]: ...


class Claims(Port):
    """Where a protocol's verify hooks put each claim they re-check (``moot verify``'s
    ``Verification``): one that holds or not, or a recorded value against a recomputed one."""

    def check(self, where: str, name: str, ok: bool, detail: str = "holds") -> bool: ...
    def same(self, where: str, name: str, recorded: Any, recomputed: Any, how: str) -> bool: ...


CRITIQUE_STATEMENTS = StatementRules(  # the shared critique's, and the kinds that extend it
    channel=(("weaknesses", ""), ("suggestions", "")), answers=("vote", "verdict")
)
# The shared kinds' statement rules; each protocol declares its own kinds' (``statement_rules``).
SHARED_STATEMENTS: dict[str, StatementRules] = {
    TurnKind.POSITION: StatementRules(
        worded=("stance", "rationale"), answers=("vote", "stance"), reasons=("rationale",)
    ),
    TurnKind.CRITIQUE: CRITIQUE_STATEMENTS,
}
T = TypeVar("T")


def cycled(items: Sequence[T], n: int, default: T) -> T:
    """A scripted list's entry for a speaker's ``n``-th turn: the lists cycle."""
    return items[(n - 1) % len(items)] if items else default


def clipped(text: str, chars: int = 300) -> str:
    """A long text field (an artifact, a candidate) cut for a one-line summary."""
    return text if len(text) < chars else text[:chars] + "…"


def scripted_critique(request: TurnRequest, script: Script) -> dict[str, Any]:
    """A scripted critique of the slot's target, with a vote: the kinds that critique extend it."""
    n, target = request.speaker_turn, request.slot.target
    weaknesses = cycled(
        script.weaknesses, n, [f"{target}'s position leaves its main risk unaddressed."]
    )
    return {
        "weaknesses": weaknesses,
        "suggestions": cycled(script.suggestions, n, [f"{target} should name a fallback."]),
        "verdict": cycled(script.verdicts, n, "defects_found" if weaknesses else "no_defect_found"),
        "vote": cycled(script.votes, n, request.votes[0] if request.votes else "no answer"),
    }


class Protocol(ABC):
    """A protocol is pure bookkeeping over DebateState; it never calls a model.

    The class also carries what the spec needs to know before any run (its role
    keys, default rounds, voters, rules and critique pairs), so that a protocol
    lives in one module and spec.py only dispatches to it by name.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""  # one line for ``--help``
    default_rounds: ClassVar[int]
    # The instruction per (phase, round): round 1 or 2 (= later rounds), or 0 for every round.
    tasks: ClassVar[dict[tuple[str, int], str]] = {}
    # The console's panels for this protocol beside the tally (and the rubric, when the
    # spec has one), chosen from the generic ones: "findings", "judges", "distribution".
    # ``view_data`` fills each from engine-owned state.
    views: ClassVar[tuple[str, ...]] = ()
    template: ClassVar[str]  # the commented spec ``moot new`` writes ({name}: the file name)
    # Keys of [debate] that only this protocol reads; any other protocol refuses them.
    role_keys: ClassVar[frozenset[str]] = frozenset()
    # Those of them that name debaters: a ``[[context]]`` document's ``roles`` may use them.
    debater_keys: ClassVar[frozenset[str]] = frozenset()
    # Whether debaters cast votes the console shows as bars (else only the verdicts count).
    shows_votes: ClassVar[bool] = True
    # Whether a threshold of those votes decides; else they are requests code routes.
    votes_decide: ClassVar[bool] = True
    # Whether ``votes = "open"`` (each vote a debater's own answer, normalised) is allowed.
    open_votes: ClassVar[bool] = False
    # Why each of this protocol's own decision rules decides, in words for the ADR's
    # "Chosen option: ..., because ..." (the shared rules' words are the ADR's own).
    rule_reasons: ClassVar[dict[str, str]] = {}
    # The turn kinds this protocol adds beyond the shared ones in records.py, each with its
    # content model (the validator and the JSON schema providers get). ``present`` shows them,
    # ``scripted`` answers them for a scripted debater, ``examples`` shows their form in prompts.
    turn_kinds: ClassVar[dict[str, type[BaseModel]]] = {}
    # Kinds whose valid turns must carry a negative channel, which verify re-checks:
    # (the list field, the verdict that may stand in for an empty list).
    negative_channels: ClassVar[dict[str, tuple[str, str]]] = {
        TurnKind.CRITIQUE: ("weaknesses", "no_defect_found")
    }
    # Kinds whose speaker passes judgement on someone else's work: never their own (the
    # self-critique rule), a rubric may apply to them, and cross-family checks compare.
    verifier_kinds: ClassVar[frozenset[str]] = frozenset({TurnKind.CRITIQUE})
    # What the statements of each added kind must say (tui.engine.core.substance): the
    # engine re-asks a turn that breaks them, and ``moot verify`` re-checks them.
    statement_rules: ClassVar[dict[str, StatementRules]] = {}
    # One short answer per added kind, the form a small model copies (tui.engine.run.prompts):
    # true of any debate, as a copy of its words must read as a plain, fair point.
    examples: ClassVar[dict[str, dict[str, Any]]] = {}

    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    # ------------------------------------------------- the spec, before a run
    @classmethod
    @abstractmethod
    def voters(cls, spec: Spec) -> list[str]:
        """Who votes; the default consensus threshold is a majority of them."""

    @classmethod
    @abstractmethod
    def voter_count(cls, raw: RawSpec) -> int:
        """How many voters the raw spec implies, for the threshold check."""

    @classmethod
    @abstractmethod
    def critique_pairs(cls, raw: RawSpec) -> list[tuple[Entry, Entry]]:
        """(critic, author) tables: who critiques or judges whose work (cross_family)."""

    @classmethod
    def spec_problems(cls, raw: RawSpec) -> list[str]:
        """This protocol's rules on the raw spec, by key path; by default phases are fixed."""
        if raw.debate.get("phases") is not None:
            return [f"debate.phases: the {cls.name} protocol has fixed phases"]
        return []

    @classmethod
    def drawn_at_start(cls, spec: Spec) -> dict[str, Any]:
        """``[debate]`` values to draw once when a session starts, so the file records them."""
        return {}

    @classmethod
    def handoff(cls, result: dict[str, Any], turns: Sequence[Turn]) -> dict[str, Any] | None:
        """What a next step needs from a finished ``[result]`` and its turns; None: no handoff."""
        return None

    @classmethod
    def decision_problem(cls, spec: Spec, value: str) -> str | None:
        """Why an operator may not decide ``value`` (not a decision this protocol takes)."""
        d = spec.debate
        if d.accepts(value):
            return None
        if d.open_votes:
            return f"{value!r} is not an answer as {d.normaliser} votes are counted"
        return f"{value!r} is not one of {', '.join(d.vote_options)}"

    @classmethod
    def value_prompt(cls, spec: Spec) -> str | None:
        """What the operator types when a decision is a value, not one of the votes; None: votes."""
        return None

    @classmethod
    def position(cls, spec: Spec, turn: Turn) -> str | None:
        """The position a valid turn puts forward (an ADR's considered option), if any."""
        return str(turn.content.get("stance", "")) if turn.kind == TurnKind.POSITION else None

    @classmethod
    def result_lines(cls, result: dict[str, Any]) -> list[str]:
        """What the Markdown export and the ADR say about this protocol's result."""
        return []

    @classmethod
    def chosen_text(cls, result: dict[str, Any]) -> str | None:
        """The text of the option its decision chose, when its result holds it (the ADR's
        chosen option); None: the ADR finds it among the positions."""
        return None

    @classmethod
    def arguments(
        cls, result: dict[str, Any], turns: Sequence[Turn]
    ) -> tuple[list[str], list[str]]:
        """What its result says for and against the decision, as sentences: the ADR's
        ``Good, because`` and ``Bad, because`` items beyond the votes and weaknesses."""
        return [], []

    @classmethod
    def dissent(cls, result: dict[str, Any], turns: Sequence[Turn]) -> list[str]:
        """What still disagrees beyond the debaters who voted otherwise (the ADR)."""
        return []

    @classmethod
    def quoted(cls, turn: Turn) -> list[Quoted]:
        """The quotes of a lookup's result code admitted in a turn of its own kinds,
        beyond the rubric's (the ADR's evidence)."""
        return []

    @classmethod
    def result_sections(cls, result: dict[str, Any], turns: Sequence[Turn]) -> list[Section]:
        """Its own ``[result]`` fields as sections, which the Markdown export shows after
        the shared ones (the decision, the tally, the rubric)."""
        return []

    @classmethod
    def rules_for(cls, kind: str) -> StatementRules:
        """A kind's statement rules: this protocol's own, else the shared kinds', else none."""
        return cls.statement_rules.get(kind) or SHARED_STATEMENTS.get(kind, NO_RULES)

    @classmethod
    def result_summary(cls, key: str, value: Any) -> str | None:
        """One of this protocol's ``[result]`` fields in one line, for the headless result
        table, which knows no protocol's fields; None: the table shows the value as it is."""
        return None

    @classmethod
    def present(
        cls, kind: str, content: dict[str, Any], derived: dict[str, Any], variant: str | None
    ) -> Sequence[Section] | None:
        """How a turn of one of ``turn_kinds`` shows (console, headless, Markdown); None: field by field.

        A wrong-typed field may raise (AttributeError, KeyError, TypeError, ValueError):
        the presenter then marks the turn damaged and shows its fields as stored.
        """
        return None

    @classmethod
    def scripted(cls, request: TurnRequest, script: Script) -> dict[str, Any]:
        """A scripted debater's answer to a slot of one of ``turn_kinds``.

        ``[debaters.script].turns`` still overrides it field by field.
        """
        return {}

    def view_data(self, view: str, turns: Sequence[Turn]) -> dict[str, Any]:
        """What one of this protocol's ``views`` shows now, as plain data."""
        return {}

    # ------------------------------------------------------------ verify

    def turn_claims(self, data: RecordedSession, out: Claims, turn: Turn) -> None:
        """This protocol's claims about one recorded turn, re-checked from the file."""
        return None

    def result_claims(self, data: RecordedSession, out: Claims, result: dict[str, Any]) -> None:
        """This protocol's claims about ``[result]``, recomputed from the turns."""
        return None

    # ------------------------------------------------------------ the run

    @abstractmethod
    def phases(self, round_no: int) -> list[str]: ...

    @abstractmethod
    def slots(self, state: DebateState, round_no: int, phase: str, start: int) -> list[Slot]: ...

    @abstractmethod
    def context(self, state: DebateState, slot: Slot) -> list[ContextItem]: ...

    @abstractmethod
    def after_phase(
        self, state: DebateState, round_no: int, phase: str, turns: list[Turn]
    ) -> Decision | None: ...

    def exhausted(self, state: DebateState) -> Decision:
        return Decision(ESCALATE, DecisionRule.MAX_ROUNDS_EXHAUSTED)

    def report(self, state: DebateState) -> dict[str, Any]:
        return {}

    def check(self, state: DebateState, slot: Slot, content: BaseModel) -> None:
        """Validation beyond the schema; a TurnParseError has the model asked again.

        The negative channel must say something (tui.engine.core.substance) and the
        protocol's own state-dependent rules must hold; every problem is named
        at once, so one re-ask can fix them all.
        """
        d = self.spec.debate
        said = content.model_dump()
        problems = content_problems(
            self.rules_for(slot.kind),
            said,
            votes=d.vote_options,
            motion=d.motion,
            min_words=d.min_words,
        )
        if d.open_votes and isinstance(said.get("vote"), str) and d.vote_of(said) is None:
            problems.append(f"vote: {said['vote'][:80]!r} holds no answer ({d.normaliser})")
        try:
            self.check_state(state, slot, content)
        except TurnParseError as err:
            problems.append(str(err))
        if problems:
            raise TurnParseError("; ".join(problems))

    def check_state(self, state: DebateState, slot: Slot, content: Any) -> None:
        """This protocol's state-dependent rules (e.g. which ids a turn must answer)."""
        return None

    def annotate(self, state: DebateState, slot: Slot, turn: Turn) -> None:
        """Add engine-owned facts to a fresh turn (``turn.derived``)."""
        return None

    def cross_family_against(self, slot: Slot) -> list[str]:
        """Whose work this slot judges: the cross-family check compares against them."""
        if slot.kind in self.verifier_kinds and slot.target:
            return [slot.target]
        return []

    def rubric_role(self, slot: Slot) -> RubricRole | None:
        """Which rubric role (critic, adversary, judges) a slot plays, if any: a critique's
        speaker is a critic; a protocol names the roles of the kinds it adds."""
        return "critic" if slot.kind == TurnKind.CRITIQUE else None

    def slot_schema(self, state: DebateState, slot: Slot, schema: dict[str, Any]) -> dict[str, Any]:
        """The JSON schema sent for this slot: the kind's schema, tightened by state.

        Returned unchanged unless the protocol knows more (e.g. which challenge
        ids must be answered). Validation still uses the kind's pydantic model.
        """
        return schema

    def operator_veto(self, state: DebateState, vote: str) -> str | None:
        """Why the operator may not decide ``vote`` now (blocking rules), or None."""
        return None

    @classmethod
    def task(cls, slot: Slot) -> str:
        """The instruction for a slot: its phase's first-round or later text, else any round's."""
        first_or_later = 1 if slot.round == 1 else 2
        for key in ((slot.phase, first_or_later), (slot.phase, 0)):
            if key in cls.tasks:
                return cls.tasks[key]
        return "Take your turn."

    # Shared pieces of context.
    def motion_items(self) -> list[ContextItem]:
        d = self.spec.debate
        items: list[ContextItem] = [("motion", "Motion", d.motion)]
        if d.artifact:
            items.append(("artifact", "Artifact under review", d.artifact))
        return items

    @staticmethod
    def position_item(turn: Turn, heading: str) -> ContextItem:
        c = turn.content
        text = f"Stance: {c.get('stance', '')}\nRationale: {c.get('rationale', '')}"
        if turn.vote:
            text += f"\nVote: {turn.vote}"
        return (f"position:r{turn.round}:{turn.speaker}", heading, text)

    @staticmethod
    def critique_item(turn: Turn, heading: str) -> ContextItem:
        c = turn.content
        lines = [f"Verdict: {c.get('verdict', '')}"]
        lines += [f"- weakness: {w}" for w in c.get("weaknesses", [])]
        lines += [f"- suggestion: {s}" for s in c.get("suggestions", [])]
        if "score" in c:
            lines.append(f"Score: {c['score']}/100; routing: {c.get('routing', '')}")
        return (f"critique:r{turn.round}:{turn.speaker}", heading, "\n".join(lines))

    @staticmethod
    def note_items(state: DebateState) -> list[ContextItem]:
        return [(f"note:{n}", f"Operator note {n}", text) for n, text in state.recent_notes()]
