"""Evidence rubrics (the adversarial frame): default no, admitted evidence only.

The model claims verdicts; the engine decides them. Evidence of a kind the rubric
forbids or does not admit is not admitted; a quote is admitted only when it is
found verbatim where its kind says it must be. A property without admitted
evidence is ``no`` whatever the model said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, create_model

from tui.engine.core.records import SourceWhenGiven, inline_refs

if TYPE_CHECKING:
    from tui.engine.terms.spec import Rubric

MIN_QUOTE_CHARS = 8
_SPACE = re.compile(r"\s+")


class EvidenceItem(SourceWhenGiven):
    kind: str = Field(description="artifact_quote, context_quote, transcript_quote, ...")
    quote: str = Field(description="The exact words quoted, or the result cited.")
    source: str = Field(
        default="",
        description="For context_quote: the document's label; for tool_quote: the lookup's id.",
    )


class RubricAnswer(BaseModel):
    """Evidence first, then rationale, then verdict: the order the frame requires."""

    property: str = Field(description="The rubric property id.")
    evidence: list[EvidenceItem] = Field(default_factory=list)
    rationale: str = ""
    verdict: Literal["yes", "no"] = "no"


def with_rubric(model: type[BaseModel], rubric: Rubric) -> type[BaseModel]:
    """The same content model with a required ``rubric`` answer list."""
    ids = ", ".join(p.id for p in rubric.properties)
    return create_model(
        model.__name__ + "WithRubric",
        __base__=model,
        rubric=(
            list[RubricAnswer],
            Field(description=f"One answer per rubric property: {ids}."),
        ),
    )


def rubric_schema(schema: dict[str, Any], rubric: Rubric | None) -> dict[str, Any]:
    """Tighten the rubric list to one answer per property, property ids as an enum."""
    if rubric is None:
        return schema
    out = inline_refs(schema)
    ids = [p.id for p in rubric.properties]
    arr = out["properties"]["rubric"]
    arr["minItems"] = arr["maxItems"] = len(ids)
    arr["items"]["properties"]["property"] = {"type": "string", "enum": ids}
    return out


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def locate(quote: str, text: str) -> tuple[int, int] | None:
    """The first and last line (1-based) of ``text`` holding ``quote``, spaces aside."""
    q = _norm(quote)
    if not q:
        return None
    flat: list[str] = []
    where: list[int] = []  # offset in ``text`` of each character of ``flat``
    gap = False
    for i, ch in enumerate(text):
        if ch.isspace():
            gap = bool(flat)
            continue
        if gap:
            flat.append(" ")
            where.append(i - 1)
            gap = False
        flat.append(ch)
        where.append(i)
    at = "".join(flat).find(q)
    if at < 0:
        return None
    first, last = where[at], where[at + len(q) - 1]
    return text.count("\n", 0, first) + 1, text.count("\n", 0, last) + 1


def _texts(content: Any) -> Iterable[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, dict):
        for v in content.values():
            yield from _texts(v)
    elif isinstance(content, list):
        for v in content:
            yield from _texts(v)


def assess(
    rubric: Rubric,
    answers: list[dict[str, Any]],
    artifacts: Sequence[tuple[str, str]],
    transcript_contents: Iterable[Any],
    documents: Mapping[str, str] | None = None,
    lookups: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Per property: evidence with admitted/why, rationale, claimed and final verdict.

    ``artifacts`` are (label, text) of the work under assessment as the role saw
    it; ``documents`` the context documents it saw, by label; ``lookups`` the results
    of this turn's lookups, by id. An admitted quote of any of them records where
    it was found: its source and line numbers.
    """
    places = _Places(artifacts, documents or {}, lookups or {})
    transcript = _norm("\n".join(t for c in transcript_contents for t in _texts(c)))
    by_id: dict[str, dict[str, Any]] = {}
    for ans in answers:
        by_id.setdefault(str(ans.get("property", "")), ans)
    report = []
    for prop in rubric.properties:
        ans = by_id.get(prop.id, {})
        evidence = []
        admitted_any = False
        for item in ans.get("evidence", []) or []:
            kind, quote = str(item.get("kind", "")), str(item.get("quote", ""))
            source = str(item.get("source", "") or "")
            admitted, why = _admit(prop.admissible, prop.forbidden, kind, quote, transcript)
            record: dict[str, Any] = {"kind": kind, "quote": quote}
            if source:
                record["source"] = source
            if admitted and kind in _LOCATED:
                admitted, why, found = places.find(kind, quote, source)
                if found is not None:
                    record["source"], record["lines"] = found[0], list(found[1])
            admitted_any |= admitted
            evidence.append({**record, "admitted": admitted, "why": why})
        claimed = ans.get("verdict", "no") if ans else "missing"
        verdict = "yes" if claimed == "yes" and admitted_any else "no"
        report.append(
            {
                "property": prop.id,
                "evidence": evidence,
                "rationale": str(ans.get("rationale", "")),
                "claimed": claimed,
                "verdict": verdict,
                "admitted_evidence": sum(1 for e in evidence if e["admitted"]),
            }
        )
    missing = sum(1 for r in report if r["admitted_evidence"] == 0)
    return {
        "properties": report,
        "pass": all(r["verdict"] == "yes" for r in report),
        "missing_evidence": missing,
    }


_LOCATED = ("artifact_quote", "context_quote", "tool_quote")


def in_lookup(
    quote: str, source: str, lookups: Mapping[str, str]
) -> tuple[bool, str, tuple[int, int] | None]:
    """Whether ``quote`` is verbatim (spaces aside) in the result of lookup ``source``:
    (admitted, why, the lines it spans)."""
    if not source:
        return False, "a tool_quote names its lookup in source (L1, L2, ...)", None
    if source not in lookups:
        return False, f"no lookup {source!r} of this turn returned a result", None
    lines = locate(quote, lookups[source])
    if lines is None:
        return False, f"not found verbatim in the result of {source}", None
    return True, "found verbatim", lines


def lookup_evidence(quote: str, source: str, lookups: Mapping[str, str]) -> dict[str, Any]:
    """A quote of a lookup's result outside the rubric (a challenge's evidence), judged."""
    if len(_norm(quote)) < MIN_QUOTE_CHARS:
        return {"admitted": False, "why": f"quote shorter than {MIN_QUOTE_CHARS} characters"}
    ok, why, lines = in_lookup(quote, source, lookups)
    return {"admitted": ok, "why": why, **({"lines": list(lines)} if lines else {})}


class _Places:
    """Where located quotes must be found: the artifact as shown, or one named document."""

    def __init__(
        self,
        artifacts: Sequence[tuple[str, str]],
        documents: Mapping[str, str],
        lookups: Mapping[str, str],
    ) -> None:
        self.artifacts = artifacts
        self.documents = documents
        self.lookups = lookups

    def find(
        self, kind: str, quote: str, source: str
    ) -> tuple[bool, str, tuple[str, tuple[int, int]] | None]:
        """(admitted, why, (source, lines) where found)."""
        if kind == "tool_quote":
            ok, why, lines = in_lookup(quote, source, self.lookups)
            return ok, why, (source, lines) if lines is not None else None
        if kind == "context_quote":
            if not source:
                return False, "a context_quote names its document in source", None
            if source not in self.documents:
                return False, f"no document {source!r} was shown to this role", None
            lines = locate(quote, self.documents[source])
            if lines is None:
                return False, f"not found verbatim in {source}", None
            return True, "found verbatim", (source, lines)
        for label, text in self.artifacts:
            lines = locate(quote, text)
            if lines is not None:
                return True, "found verbatim", (label, lines)
        return False, "not found verbatim in the artifact", None


def _admit(
    admissible: Sequence[str],
    forbidden: Sequence[str],
    kind: str,
    quote: str,
    transcript: str,
) -> tuple[bool, str]:
    """The kind's admission and the checks on the quote itself; located kinds are found later."""
    if kind in forbidden:
        return False, f"{kind} is forbidden evidence for this property"
    if kind not in admissible:
        return False, f"{kind} is not admissible for this property"
    if kind in (*_LOCATED, "transcript_quote"):
        q = _norm(quote)
        if len(q) < MIN_QUOTE_CHARS:
            return False, f"quote shorter than {MIN_QUOTE_CHARS} characters"
        if kind == "transcript_quote" and q not in transcript:
            return False, "not found verbatim in an earlier turn"
        return True, "found verbatim"
    if not quote.strip():
        return False, "empty"
    return True, "admissible by the rubric (not checkable by the engine)"
