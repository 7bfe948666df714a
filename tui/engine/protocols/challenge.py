"""``challenge``: an adversary challenges an artifact, a defender answers and revises.

The engine numbers every challenge, tracks its status across rounds from the
adversary's assessments, and decides release, deadlock or hand-over itself.
The verdict ``no_objections`` is a request: it releases (rule ``no_objections``)
only when no challenge is left unaddressed; refused on the last round, the
debate escalates (rule ``release_gate``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    field_validator,
    model_validator,
)

from tui.engine.basics.vocab import ESCALATE, DecisionRule
from tui.engine.core.parsing import TurnParseError
from tui.engine.core.records import (
    SourceWhenGiven,
    Turn,
    TurnContent,
    inline_refs,
    required_text,
)
from tui.engine.core.schedule import Slot
from tui.engine.core.sections import (
    STATUS_TONE,
    Fact,
    Item,
    Quoted,
    Section,
    Tone,
    each,
    facts,
    listed,
    recorded,
    text,
    words,
)
from tui.engine.core.state import DebateState, Decision
from tui.engine.core.substance import StatementRules
from tui.engine.grounding.evidence import lookup_evidence
from tui.engine.grounding.lookups import results as lookup_results
from tui.engine.grounding.lookups import tools_of
from tui.engine.protocols.base import ContextItem, Protocol, clipped, cycled
from tui.engine.protocols.raw import Entry, RawSpec

if TYPE_CHECKING:
    from tui.engine.core.ports import TurnRequest
    from tui.engine.terms.spec import RubricRole, Script, Spec

UNRESOLVED = ("open", "unaddressed")


# The turn kinds this protocol adds, and the rules only it decides by (session files hold them).
CHALLENGE_REPORT = "challenge_report"
DEFENSE = "defense"
NO_OBJECTIONS = "no_objections"
ADVERSARY_DEADLOCK = "adversary_deadlock"
ADVISORY_REVIEW = "advisory_review"
SEVERITY_ORDER = {"critical": 0, "significant": 1, "minor": 2}


class Challenge(SourceWhenGiven):
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
        return required_text(value)


class Assessment(BaseModel):
    """The adversary's view of an earlier challenge after the defense."""

    challenge_id: str = Field(min_length=1, description="The id of an earlier challenge.")
    status: Literal["addressed", "rejected", "unaddressed"]
    note: str = ""


class ChallengeReport(TurnContent):
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


class Defense(TurnContent):
    """A defender's answer per challenge, and the revised artifact."""

    responses: list[DefenseResponse] = Field(default_factory=list)
    revised_artifact: str = Field(min_length=1, description="The whole artifact, revised.")


def no_objections_refusal(content: dict[str, Any]) -> list[str]:
    """Why a ``no_objections`` report cannot release: earlier challenges it leaves open.

    Every earlier open challenge must be assessed in the same report (checked
    before the turn counts), so the report alone shows what stays open.
    """
    return [
        f"{a['challenge_id']} is still unaddressed"
        for a in content.get("assessments", [])
        if a.get("status") == "unaddressed"
    ]


# The commented starting spec ``moot new --protocol challenge`` writes; it validates as written.
TEMPLATE = '''# A moot challenge/defense spec: an adversary challenges an artifact, a defender answers.
[debate]
title = "Cache plan review"
motion = "Plan to put a cache in front of the catalogue API."
protocol = "challenge"
defender = "owner"
adversary = "reviewer"       # must differ from the defender
mode = "blocking"            # blocking: unresolved critical challenges block release
                             # advisory: the adversary informs, the operator decides
max_rounds = 2
retries = 3                  # the embedded model's junk answer is asked again three times
min_words = 1                # it writes hyphenated phrases; for a real model keep 3
artifact = """Cache every catalogue response for 24 hours.
Invalidate nothing: prices change rarely."""

[[debaters]]
id = "owner"
model = "local"
max_tokens = 260             # sized for the embedded model: raise it for a real one
role = "Owns the plan and defends it, or fixes it."

[[debaters]]
id = "reviewer"
model = "local"
max_tokens = 260
role = "Challenges the plan with evidence quoted from it."

# Evidence rubric (optional): verdicts need admitted evidence, default no.
# [rubric]
# applies_to = ["adversary"]
# [[rubric.properties]]
# id = "invalidation"
# question = "Does the plan say how stale prices are invalidated?"
# admissible = ["artifact_quote"]
'''


SEVERITY_TONE = {"critical": Tone.BAD, "significant": Tone.WARN, "minor": Tone.MUTED}
# How the findings panel tones this protocol's words: severities, statuses, mode, convergence.
FINDING_TONES = {
    **SEVERITY_TONE,
    "open": Tone.WARN,
    "unaddressed": Tone.BAD,
    "addressed": Tone.GOOD,
    "rejected": Tone.ACCENT,
    "raised": Tone.MUTED,
    "blocking": Tone.WARN,
    "advisory": Tone.ACCENT,
    "deadlock": Tone.BAD,
}


def _challenge_evidence(ch: dict[str, Any], judged: dict[str, Any] | None) -> Fact:
    """A challenge's evidence; one quoting a lookup says which, and whether it was found."""
    if judged is None:
        return Fact("evidence", str(ch.get("evidence", "")))
    ok = bool(judged.get("admitted"))
    return Fact(
        f"evidence ({judged.get('source', '')}: {'found verbatim' if ok else 'not admitted'})",
        str(ch.get("evidence", "")) + ("" if ok else f" ({judged.get('why', '')})"),
        Tone.GOOD if ok else Tone.BAD,
    )


def _report_sections(c: dict[str, Any], derived: dict[str, Any]) -> list[Section]:
    verdict = str(c.get("verdict", ""))
    ids = list(each(derived.get("challenge_ids")))
    judged = {
        str(e.get("id")): e for e in each(derived.get("challenge_evidence")) if isinstance(e, dict)
    }
    challenges = [
        Item(
            f"{ch.get('category', '')}: {ch.get('concern', '')}",
            tag=ids[i] if i < len(ids) else "",
            status=str(ch.get("severity", "")),
            tone=SEVERITY_TONE.get(str(ch.get("severity", "")), Tone.PLAIN),
            details=(
                _challenge_evidence(ch, judged.get(ids[i]) if i < len(ids) else None),
                Fact("recommendation", str(ch.get("recommendation", ""))),
            ),
        )
        for i, ch in enumerate(each(c.get("challenges")))
    ]
    assessments = [
        Item(
            str(a.get("note", "")),
            tag=str(a.get("challenge_id", "")),
            status=str(a.get("status", "")),
            tone=STATUS_TONE.get(str(a.get("status", "")), Tone.PLAIN),
        )
        for a in each(c.get("assessments"))
    ]
    return [
        facts(
            "verdict",
            Fact("verdict", words(verdict), Tone.GOOD if verdict == "no_objections" else Tone.WARN),
            Fact("convergence", str(c.get("convergence", "")), Tone.MUTED),
        ),
        *listed("assessments", assessments),
        *listed("challenges", challenges),
    ]


def _defense_sections(c: dict[str, Any]) -> list[Section]:
    responses = [
        Item(
            str(r.get("answer", "")),
            tag=str(r.get("challenge_id", "")),
            status=str(r.get("status", "")),
            tone=STATUS_TONE.get(str(r.get("status", "")), Tone.PLAIN),
        )
        for r in each(c.get("responses"))
    ]
    return [
        *listed("responses", responses),
        *text("revised artifact", c.get("revised_artifact")),
    ]


def _ids_to_answer(schema: dict[str, Any]) -> list[str]:
    """The challenge ids the engine's per-slot schema says this turn must cover."""
    shape = schema.get("anyOf", [schema])[0]  # every verdict's shape names the same ids
    props = shape.get("properties", {})
    for key in ("assessments", "responses"):
        item = props.get(key, {}).get("items", {})
        enum = item.get("properties", {}).get("challenge_id", {}).get("enum")
        if enum:
            return list(enum)
    return []


class ChallengeProtocol(Protocol):
    """Rounds of challenge then defense; blocking or advisory release."""

    name = "challenge"
    description = "evidence-backed challenges and defenses over an artifact"
    tasks = {
        ("challenge", 1): (
            "You are the adversary. Challenge the artifact: find what is wrong, missing or risky. "
            "Each challenge needs a category, the concern, evidence (quote the artifact where the "
            "problem shows; a challenge without evidence is refused), a severity (critical, "
            "significant or minor) and a recommendation. If you truly find nothing, give the "
            "verdict no_objections with no challenges."
        ),
        ("challenge", 2): (
            "You are the adversary. First assess every earlier challenge against the defense and "
            "the revised artifact: addressed, rejected (the defender's reason stands) or "
            "unaddressed. Then raise any new challenges, with evidence. Say whether the exchange "
            "should continue, is converging, or is deadlocked."
        ),
        ("defense", 0): (
            "You defend the artifact. Answer every challenge by its id: addressed (and change the "
            "artifact accordingly) or rejected (with a specific reason). Then give the whole "
            "revised artifact."
        ),
    }
    template = TEMPLATE
    views = ("findings",)
    default_rounds = 3
    role_keys = frozenset({"defender", "adversary", "mode"})
    debater_keys = frozenset({"defender", "adversary"})
    shows_votes = False
    turn_kinds = {CHALLENGE_REPORT: ChallengeReport, DEFENSE: Defense}
    # True of any artifact, so a small model's copy is still a fair point; the
    # defense has none: no example can stand for the revised artifact itself.
    examples = {
        CHALLENGE_REPORT: {
            "challenges": [
                {
                    "category": "correctness",
                    "concern": "The plan does not say what happens when its main assumption fails.",
                    "evidence": "The plan states its assumption and no fallback.",
                    "severity": "significant",
                    "recommendation": "Say what the plan does when the assumption fails.",
                }
            ],
            "verdict": "objections",
            "assessments": [],
            "convergence": "continue",
        }
    }
    negative_channels = {CHALLENGE_REPORT: ("challenges", "no_objections")}
    verifier_kinds = Protocol.verifier_kinds | {CHALLENGE_REPORT}
    statement_rules = {
        CHALLENGE_REPORT: StatementRules(
            channel=(("challenges", "concern"), ("challenges", "evidence")), answers=("verdict",)
        ),
        DEFENSE: StatementRules(channel=(("responses", "answer"),), answers=("status",)),
    }
    rule_reasons = {
        NO_OBJECTIONS: "the adversary left no objection open",
        ADVERSARY_DEADLOCK: "the adversary and the defender deadlocked",
        ADVISORY_REVIEW: "the review is advisory",
        DecisionRule.RELEASE_GATE: (
            "a release was asked for, the release gate refused it, and no round was left"
        ),
    }

    @classmethod
    def present(
        cls, kind: str, content: dict[str, Any], derived: dict[str, Any], variant: str | None
    ) -> Sequence[Section] | None:
        """A report's verdict, assessments and numbered challenges; a defense's answers."""
        if kind == CHALLENGE_REPORT:
            return _report_sections(content, derived)
        if kind == DEFENSE:
            return _defense_sections(content)
        return None

    @classmethod
    def position(cls, spec: Spec, turn: Turn) -> str | None:
        """A defense puts forward its revised artifact."""
        if turn.kind == DEFENSE:
            return str(turn.content.get("revised_artifact", ""))
        return super().position(spec, turn)

    def rubric_role(self, slot: Slot) -> RubricRole | None:
        """The one who challenges plays the rubric's adversary."""
        if slot.kind == CHALLENGE_REPORT:
            return "adversary"
        return super().rubric_role(slot)

    @classmethod
    def scripted(cls, request: TurnRequest, script: Script) -> dict[str, Any]:
        """No objections, or every challenge addressed: the ids this slot must answer."""
        ids = _ids_to_answer(request.json_schema)
        if request.slot.kind == CHALLENGE_REPORT:
            return {
                "challenges": [],
                "verdict": "no_objections",
                "assessments": [{"challenge_id": i, "status": "addressed"} for i in ids],
                "convergence": "converging",
            }
        who, n = request.debater.id, request.speaker_turn
        return {
            "responses": [
                {"challenge_id": i, "status": "addressed", "answer": f"{who} fixed {i}."}
                for i in ids
            ],
            "revised_artifact": cycled(script.stances, n, f"{who}: revised artifact {n}."),
        }

    @classmethod
    def voters(cls, spec: Spec) -> list[str]:
        return [spec.debate.adversary or ""]

    @classmethod
    def voter_count(cls, raw: RawSpec) -> int:
        return 1

    @classmethod
    def critique_pairs(cls, raw: RawSpec) -> list[tuple[Entry, Entry]]:
        return raw.pairs([raw.debate.get("adversary")], [raw.debate.get("defender")])

    @classmethod
    def spec_problems(cls, raw: RawSpec) -> list[str]:
        """Distinct defender and adversary, and an artifact to challenge."""
        problems = super().spec_problems(raw) + raw.pair_problems(cls.name, "defender", "adversary")
        if not raw.debate.get("artifact") and not raw.debate.get("artifact_file"):
            problems.append(
                "debate.artifact: required for the challenge protocol (or artifact_file)"
            )
        return problems

    def __init__(self, spec: Spec) -> None:
        super().__init__(spec)
        self.challenges: dict[str, dict[str, Any]] = {}
        self.artifact = spec.debate.artifact or ""
        self.artifact_round = 0
        self.convergence = "continue"
        self.round_verdicts: list[str] = []

    @property
    def adversary(self) -> str:
        return self.spec.debate.adversary or ""

    @property
    def defender(self) -> str:
        return self.spec.debate.defender or ""

    def view_data(self, view: str, turns: Sequence[Turn]) -> dict[str, Any]:
        """The findings panel, in this protocol's words: mode and convergence, how many
        challenges are raised and unresolved, a release that critical ones block, and each
        challenge (the unresolved first, the gravest first) with its history and answer."""
        mode = str(self.spec.debate.mode)
        unresolved = set(self.unresolved())
        critical = sorted(c for c in unresolved if self.challenges[c]["severity"] == "critical")
        counts = [[f"{len(self.challenges)} raised · {len(unresolved)} unresolved", "muted"]]
        notes = [counts + ([[f" · {len(critical)} critical", "bad"]] if critical else [])]
        blocked = mode == "blocking" and bool(critical)
        if blocked:
            notes.append([["⛔ release blocked: ", "bad"], [", ".join(critical), "bad"]])
        rows = sorted(
            self.challenges.values(),
            key=lambda c: (
                c["id"] not in unresolved,
                SEVERITY_ORDER.get(c["severity"], 3),
                c["id"],
            ),
        )
        return {
            "title": "challenges",
            "subtitle": mode,
            "alarm": blocked,
            "facts": [["mode", mode], ["convergence", self.convergence]],
            "notes": notes,
            "empty": "no challenges yet",
            "state_label": "now",
            "unanswered": "defender: no answer yet",
            "tones": FINDING_TONES,
            "items": [
                {
                    "id": c["id"],
                    "hot": c["id"] in critical,
                    "level": c["severity"],
                    "group": c.get("category", ""),
                    "state": c["status"],
                    "text": c.get("concern", ""),
                    "steps": [list(str(h).partition(":")[::2]) for h in c.get("history", [])],
                    "answer": (
                        ["defender", c["defense_status"], c.get("answer", "")]
                        if c.get("defense_status")
                        else None
                    ),
                }
                for c in rows
            ],
        }

    def unresolved(self, severity: str | None = None) -> list[str]:
        return [
            cid
            for cid, c in self.challenges.items()
            if c["status"] in UNRESOLVED and (severity is None or c["severity"] == severity)
        ]

    def awaiting_assessment(self) -> list[str]:
        """Earlier challenges the adversary must assess this round."""
        return [cid for cid, c in self.challenges.items() if c["status"] in UNRESOLVED]

    # ------------------------------------------------------------- schedule
    def phases(self, round_no: int) -> list[str]:
        return ["challenge", "defense"]

    def slots(self, state: DebateState, round_no: int, phase: str, start: int) -> list[Slot]:
        if phase == "challenge":
            return [Slot(start, round_no, phase, self.adversary, CHALLENGE_REPORT, self.defender)]
        return [Slot(start, round_no, phase, self.defender, DEFENSE, self.adversary)]

    def context(self, state: DebateState, slot: Slot) -> list[ContextItem]:
        items: list[ContextItem] = [("motion", "What the artifact is for", self.spec.debate.motion)]
        label = "artifact" if self.artifact_round == 0 else f"artifact:r{self.artifact_round}"
        items.append((label, "Artifact under review", self.artifact))
        if slot.phase == "challenge" and self.awaiting_assessment():
            lines = [self._describe(cid, with_defense=True) for cid in self.awaiting_assessment()]
            items.append(
                (
                    f"responses:r{slot.round - 1}",
                    "Earlier challenges and the defense",
                    "\n\n".join(lines),
                )
            )
        elif slot.phase == "defense":
            lines = [self._describe(cid, with_defense=False) for cid in self.unresolved()]
            items.append((f"challenges:r{slot.round}", "Challenges to answer", "\n\n".join(lines)))
        return items + self.note_items(state)

    def _describe(self, cid: str, with_defense: bool) -> str:
        c = self.challenges[cid]
        text = (
            f"[{cid}] {c['severity']} / {c['category']}: {c['concern']}\n"
            f"  evidence: {c['evidence']}\n  recommendation: {c['recommendation']}"
        )
        if with_defense and c.get("defense_status"):
            text += f"\n  defender {c['defense_status']}: {c.get('answer', '')}"
        return text

    def slot_schema(self, state: DebateState, slot: Slot, schema: dict[str, Any]) -> dict[str, Any]:
        """Exactly the challenge ids this turn must assess or answer, as an enum."""
        reports = slot.kind == CHALLENGE_REPORT
        key = "assessments" if reports else "responses"
        ids = self.awaiting_assessment() if reports else self.unresolved()
        out = inline_refs(schema)
        if reports and not _may_look_up(self.spec, slot.speaker):
            # No lookup to quote: a ``source`` a small model fills in anyway would only
            # get its challenge refused, so the field is not offered.
            _drop_source(out)
        arr = out["properties"][key]
        arr["minItems"] = arr["maxItems"] = len(ids)
        if ids:
            arr["items"]["properties"]["challenge_id"] = {"type": "string", "enum": ids}
        out["required"] = sorted(set(out.get("required", [])) | {key})
        return out

    # ----------------------------------------------------------- validation
    def check_state(self, state: DebateState, slot: Slot, content: Any) -> None:
        if slot.kind == CHALLENGE_REPORT:
            known = set(self.challenges)
            seen = {a.challenge_id for a in content.assessments}
            unknown = sorted(seen - known)
            if unknown:
                raise TurnParseError(f"assessments name unknown challenges: {', '.join(unknown)}")
            missing = [cid for cid in self.awaiting_assessment() if cid not in seen]
            if missing:
                raise TurnParseError(
                    f"assess every earlier challenge; missing {', '.join(missing)}"
                )
        elif slot.kind == DEFENSE:
            seen = {r.challenge_id for r in content.responses}
            unknown = sorted(seen - set(self.challenges))
            if unknown:
                raise TurnParseError(f"responses name unknown challenges: {', '.join(unknown)}")
            missing = [cid for cid in self.unresolved() if cid not in seen]
            if missing:
                raise TurnParseError(f"answer every challenge; missing {', '.join(missing)}")

    def annotate(self, state: DebateState, slot: Slot, turn: Turn) -> None:
        if slot.kind == CHALLENGE_REPORT:
            n = len(turn.content.get("challenges", []))
            turn.derived["challenge_ids"] = [f"C{slot.round}.{i + 1}" for i in range(n)]
            judged = _lookup_evidence(turn)
            if judged:
                turn.derived["challenge_evidence"] = judged
            if turn.content.get("verdict") == "no_objections":
                reasons = no_objections_refusal(turn.content)
                turn.derived["release_gate"] = {"pass": not reasons, "reasons": reasons}

    # ------------------------------------------------------------ decisions
    def after_phase(
        self, state: DebateState, round_no: int, phase: str, turns: list[Turn]
    ) -> Decision | None:
        turn = turns[-1]
        if turn.invalid:
            return Decision(ESCALATE, DecisionRule.INVALID_TURN)
        if phase == "defense":
            for r in turn.content.get("responses", []):
                c = self.challenges.get(r["challenge_id"])
                if c is not None:
                    c.update(defense_status=r["status"], answer=r["answer"], status="open")
            self.artifact = turn.content.get("revised_artifact", self.artifact)
            self.artifact_round = round_no
            return None
        content = turn.content
        for a in content.get("assessments", []):
            c = self.challenges.get(a["challenge_id"])
            if c is not None:
                c["status"] = a["status"]
                c["history"].append(f"r{round_no}:{a['status']}")
        ids = turn.derived.get("challenge_ids", [])
        refused = {e["id"] for e in turn.derived.get("challenge_evidence", []) if not e["admitted"]}
        for cid, ch in zip(ids, content.get("challenges", []), strict=False):
            if cid in refused:
                continue  # its lookup quote was not found verbatim: the challenge is not raised
            self.challenges[cid] = {
                **ch,
                "id": cid,
                "round": round_no,
                "status": "open",
                "history": [f"r{round_no}:raised"],
            }
        self.convergence = content.get("convergence", "continue")
        self.round_verdicts.append(content.get("verdict", ""))
        if self.convergence == "deadlock":
            return Decision(ESCALATE, ADVERSARY_DEADLOCK, extra=self._open_extra())
        rubric = turn.derived.get("rubric")
        if content.get("verdict") == "no_objections" and rubric is not None and not rubric["pass"]:
            return Decision(
                ESCALATE,
                DecisionRule.RUBRIC_FAILED,
                extra={"missing_evidence": rubric["missing_evidence"]},
            )
        if content.get("verdict") == "no_objections" and not self.unresolved():
            if self.spec.debate.mode == "advisory":
                return Decision(
                    ESCALATE,
                    ADVISORY_REVIEW,
                    extra={"adversary_recommendation": "release"},
                )
            return Decision("release", NO_OBJECTIONS)
        return None

    def _open_extra(self) -> dict[str, Any]:
        return {"unresolved_challenges": self.unresolved()}

    def exhausted(self, state: DebateState) -> Decision:
        """No round left: a last ``no_objections`` the gate refused is named as such."""
        last = next((t for t in reversed(state.turns) if t.kind == CHALLENGE_REPORT), None)
        refused = (
            last is not None
            and not last.invalid
            and last.content.get("verdict") == "no_objections"
            and bool(no_objections_refusal(last.content))
        )
        rule = DecisionRule.RELEASE_GATE if refused else DecisionRule.MAX_ROUNDS_EXHAUSTED
        return Decision(ESCALATE, rule, extra=self._open_extra())

    def operator_veto(self, state: DebateState, vote: str) -> str | None:
        critical = self.unresolved("critical")
        if self.spec.debate.mode == "blocking" and vote == "release" and critical:
            return (
                "blocking mode: unresolved critical challenges keep the artifact from release "
                f"({', '.join(critical)})"
            )
        return None

    @classmethod
    def arguments(
        cls, result: dict[str, Any], turns: Sequence[Turn]
    ) -> tuple[list[str], list[str]]:
        """Each challenge addressed speaks for the decision; each other one against it."""
        good, bad = [], []
        for c in each(result.get("challenges")):
            if not isinstance(c, dict):
                continue
            cid, severity = c.get("id"), c.get("severity")
            if c.get("status") == "addressed":
                good.append(
                    f"{cid} ({severity}) was addressed: {c.get('answer') or c.get('concern')}"
                )
                continue
            said = c.get("answer")
            how = str(c.get("status")) + (f": {said}" if said else "")
            bad.append(f"{cid} ({severity}, {c.get('category', '')}): {c.get('concern')} ({how})")
        return good, bad

    @classmethod
    def dissent(cls, result: dict[str, Any], turns: Sequence[Turn]) -> list[str]:
        return [f"{cid} is still unresolved" for cid in each(result.get("unresolved_challenges"))]

    @classmethod
    def quoted(cls, turn: Turn) -> list[Quoted]:
        """Challenges whose evidence quotes a lookup, admitted by code."""
        ids = each(turn.derived.get("challenge_ids"))
        said = dict(zip(ids, each(turn.content.get("challenges")), strict=False))
        out = []
        for e in each(turn.derived.get("challenge_evidence")):
            if not isinstance(e, dict) or not e.get("admitted"):
                continue
            challenge = said.get(e.get("id"))
            quote = challenge.get("evidence") if isinstance(challenge, dict) else None
            span = tuple(each(e.get("lines")))
            out.append(
                Quoted("challenge", str(e.get("id")), str(e.get("source")), span, str(quote))
            )
        return out

    @classmethod
    def result_sections(cls, result: dict[str, Any], turns: Sequence[Turn]) -> list[Section]:
        """The last verdict, the mode, and every challenge with its history."""
        rows = [
            Item(
                str(c.get("concern", "")),
                tag=str(c.get("id", "")),
                status=str(c.get("status", "")),
                tone=STATUS_TONE.get(str(c.get("status")), Tone.PLAIN),
                details=(
                    Fact("severity", str(c.get("severity", ""))),
                    Fact("history", " → ".join(map(str, each(c.get("history"))))),
                ),
            )
            for c in each(result.get("challenges"))
        ]
        names = {"verdict": "verdict", "mode": "mode", "convergence_status": "convergence"}
        return recorded("review", result, names) + listed("challenges", rows)

    @classmethod
    def result_summary(cls, key: str, value: Any) -> str | None:
        """Each challenge's id, severity and status; the final artifact cut short."""
        if key == "challenges":
            return "; ".join(f"{c['id']} {c['severity']} {c['status']}" for c in value)
        return clipped(str(value)) if key == "final_artifact" else None

    def report(self, state: DebateState) -> dict[str, Any]:
        rows = []
        for c in self.challenges.values():
            rows.append(
                {
                    k: c[k]
                    for k in (
                        "id",
                        "round",
                        "category",
                        "severity",
                        "concern",
                        "evidence",
                        "recommendation",
                        "status",
                        "defense_status",
                        "answer",
                        "history",
                    )
                    if k in c
                }
            )
        by_sev = {s: 0 for s in ("critical", "significant", "minor")}
        for c in self.challenges.values():
            by_sev[c["severity"]] = by_sev.get(c["severity"], 0) + 1
        last = next((t for t in reversed(state.turns) if t.kind == CHALLENGE_REPORT), None)
        out: dict[str, Any] = {
            "defender_id": self.defender,
            "adversary_id": self.adversary,
            "mode": self.spec.debate.mode,
            "convergence_status": self.convergence,
            "challenge_count": len(rows),
            "challenges_by_severity": by_sev,
            "unresolved_challenges": self.unresolved(),
            "unresolved_critical": self.unresolved("critical"),
            "challenges": rows,
            "final_artifact": self.artifact,
        }
        if last is not None and last.cross_family_held is not None:
            out["cross_family_held"] = last.cross_family_held
            out["weak_adversarial_pass"] = not last.cross_family_held
        return out


def _drop_source(node: Any) -> None:
    """Take ``source`` out of every challenge item of a report schema, wherever it sits."""
    if isinstance(node, dict):
        challenges = node.get("properties", {}).get("challenges")
        item = challenges.get("items") if isinstance(challenges, dict) else None
        if isinstance(item, dict) and isinstance(item.get("properties"), dict):
            item["properties"].pop("source", None)
            if isinstance(item.get("required"), list):
                item["required"] = [k for k in item["required"] if k != "source"]
        for value in node.values():
            _drop_source(value)
    elif isinstance(node, list):
        for value in node:
            _drop_source(value)


def _may_look_up(spec: Spec, speaker: str) -> bool:
    return bool(tools_of(spec, speaker))


def _lookup_evidence(turn: Turn) -> list[dict[str, Any]]:
    """Each challenge quoting a lookup (``source``), judged against the recorded result."""
    found = lookup_results(turn.lookups)
    return [
        {
            "id": cid,
            "source": str(ch["source"]),
            **lookup_evidence(ch["evidence"], ch["source"], found),
        }
        for cid, ch in zip(
            turn.derived["challenge_ids"], turn.content.get("challenges", []), strict=True
        )
        if ch.get("source")
    ]
