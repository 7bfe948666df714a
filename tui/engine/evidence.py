"""Evidence rubrics (the adversarial frame): default no, admitted evidence only.

The model claims verdicts; the engine decides them. Evidence of a kind the rubric
forbids or does not admit is not admitted; a quote is admitted only when it is
found verbatim where its kind says it must be. A property without admitted
evidence is ``no`` whatever the model said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from tui.engine.records import inline_refs
from tui.engine.spec import Rubric

MIN_QUOTE_CHARS = 8
_SPACE = re.compile(r"\s+")


class EvidenceItem(BaseModel):
    kind: str = Field(description="artifact_quote, transcript_quote, test_result, ...")
    quote: str = Field(description="The exact words quoted, or the result cited.")


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
    artifact_texts: Iterable[str],
    transcript_contents: Iterable[Any],
) -> dict[str, Any]:
    """Per property: evidence with admitted/why, rationale, claimed and final verdict."""
    artifact = _norm("\n".join(artifact_texts))
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
            admitted, why = _admit(
                prop.admissible, prop.forbidden, kind, quote, artifact, transcript
            )
            admitted_any |= admitted
            evidence.append({"kind": kind, "quote": quote, "admitted": admitted, "why": why})
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


def _admit(
    admissible: Sequence[str],
    forbidden: Sequence[str],
    kind: str,
    quote: str,
    artifact: str,
    transcript: str,
) -> tuple[bool, str]:
    if kind in forbidden:
        return False, f"{kind} is forbidden evidence for this property"
    if kind not in admissible:
        return False, f"{kind} is not admissible for this property"
    if kind in ("artifact_quote", "transcript_quote"):
        q = _norm(quote)
        if len(q) < MIN_QUOTE_CHARS:
            return False, f"quote shorter than {MIN_QUOTE_CHARS} characters"
        where = artifact if kind == "artifact_quote" else transcript
        if q not in where:
            place = "the artifact" if kind == "artifact_quote" else "an earlier turn"
            return False, f"not found verbatim in {place}"
        return True, "found verbatim"
    if not quote.strip():
        return False, "empty"
    return True, "admissible by the rubric (not checkable by the engine)"
