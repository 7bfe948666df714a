"""Reading a debate spec: every problem at once, by key path, and the file checks.

Validation reports every problem at once, each prefixed by its key path
(``debaters[1].model``), so an operator fixes a spec in one pass: pydantic for the
shapes (the models are ``tui.engine.terms.spec``'s, named here too), then the rules
that need the protocol the spec names, its documents and its tools.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from pydantic import ValidationError

from tui.engine.basics.bounded import SPEC_BYTES, TomlRefused, toml_document
from tui.engine.basics.errors import SpecError
from tui.engine.basics.redact import MIN_SECRET, SECRET_SHAPES, Redactor, key_env_names
from tui.engine.basics.safeio import FileRefused, read_regular
from tui.engine.basics.vocab import DEFAULT_PROTOCOL
from tui.engine.grounding.context import context_problems, read_documents
from tui.engine.grounding.lookups import root_problems, tool_problems
from tui.engine.grounding.readroots import ReadRoots
from tui.engine.protocols import PROTOCOLS, REFUSED, protocol_class
from tui.engine.protocols.base import Protocol
from tui.engine.protocols.raw import RawSpec, family
from tui.engine.specs.sizing import outgrow_warning
from tui.engine.terms.openvotes import OPEN
from tui.engine.terms.spec import (
    CHECKABLE,
    DEFAULT_MIN_WORDS,
    DEFAULT_VOTES,
    ENV_NAME,
    ID_PATTERN,
    MAX_DEBATERS,
    MAX_PHASES,
    MAX_ROUND_SEATS,
    RUBRIC_ROLES,
    SECRET_NAME,
    UNCHECKABLE,
    Budget,
    CallName,
    ContextEntry,
    Debater,
    DebateSection,
    EvidenceKind,
    Rubric,
    RubricProperty,
    RubricRole,
    Script,
    Spec,
    Structured,
    ToolEntry,
)

__all__ = [  # the models, named from here as from tui.engine.terms.spec
    "DEFAULT_MIN_WORDS",
    "EvidenceKind",
    "CHECKABLE",
    "UNCHECKABLE",
    "RubricRole",
    "Structured",
    "RUBRIC_ROLES",
    "DEFAULT_VOTES",
    "ID_PATTERN",
    "CallName",
    "MAX_DEBATERS",
    "MAX_PHASES",
    "MAX_ROUND_SEATS",
    "ENV_NAME",
    "SECRET_NAME",
    "Script",
    "Budget",
    "ContextEntry",
    "ToolEntry",
    "Debater",
    "DebateSection",
    "RubricProperty",
    "Rubric",
    "Spec",
]


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _pydantic_problems(err: ValidationError) -> list[str]:
    problems = []
    for e in err.errors():
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        elif e["type"] == "missing":
            msg = "required key is missing"
        problems.append(f"{_path(loc)}: {msg}")
    return problems


def _secret_problems(node: Any, loc: tuple[Any, ...] = ()) -> list[str]:
    """Literal credentials anywhere in the spec: refused, never stored."""
    problems: list[str] = []
    if isinstance(node, dict):
        for k, v in node.items():
            here = (*loc, k)
            if isinstance(k, str) and SECRET_NAME.search(k) and isinstance(v, str):
                problems.append(
                    f"{_path(here)}: literal API keys are refused; put the key in an "
                    "environment variable and name it in api_key_env"
                )
            else:
                problems.extend(_secret_problems(v, here))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            problems.extend(_secret_problems(v, (*loc, i)))
    elif isinstance(node, str) and SECRET_SHAPES.search(node):
        problems.append(
            f"{_path(loc)}: looks like a literal API key; name an environment variable "
            "in api_key_env instead"
        )
    return problems


def _rule_problems(raw: dict[str, Any]) -> list[str]:
    """Cross-key rules, checked on the raw data so they report alongside type errors.

    The generic rules live here; each protocol's own rules come from its class,
    found by name in the registry.
    """
    rs = RawSpec.of(raw)
    name = rs.debate.get("protocol", DEFAULT_PROTOCOL)
    protocol = PROTOCOLS.get(name) if isinstance(name, str) else None
    problems: list[str] = []
    if isinstance(name, str) and name in REFUSED:
        problems.append(
            f"debate.protocol: the installed protocol {name!r} is refused: {REFUSED[name]}"
        )
    elif isinstance(name, str) and protocol is None:
        problems.append(
            f"debate.protocol: unknown protocol {name!r}; expected one of " + ", ".join(PROTOCOLS)
        )
    problems += _debater_problems(raw.get("debaters"), rs.debate.get("votes", DEFAULT_VOTES))

    votes = rs.debate.get("votes")
    if isinstance(votes, list) and len(set(map(str, votes))) != len(votes):
        problems.append("debate.votes: duplicate vote names")
    if votes == OPEN and protocol is not None and not protocol.open_votes:
        takes = ", ".join(n for n, p in PROTOCOLS.items() if p.open_votes)
        problems.append(f'debate.votes: "open" votes are for the {takes} protocol only')
    if "normalise" in rs.debate and votes != OPEN:
        problems.append('debate.normalise: only used with votes = "open"')

    problems += _length_problems(rs, protocol)

    if isinstance(name, str):
        role_keys = frozenset().union(*(p.role_keys for p in PROTOCOLS.values()))
        used = protocol.role_keys if protocol is not None else frozenset()
        for key in sorted(set(rs.debate) & role_keys - used):
            problems.append(f"debate.{key}: not used by the {name} protocol")
    if protocol is not None:
        problems += protocol.spec_problems(rs)
    problems += _rubric_problems(raw.get("rubric"))
    problems += context_problems(raw, protocol.debater_keys if protocol is not None else ())
    problems += tool_problems(raw, protocol.debater_keys if protocol is not None else ())

    threshold = rs.debate.get("consensus_threshold")
    voters = protocol.voter_count(rs) if protocol is not None else len(rs.entries)
    if isinstance(threshold, int) and not isinstance(threshold, bool) and threshold > voters:
        problems.append(
            f"debate.consensus_threshold: {threshold} is larger than the number of voters ({voters})"
        )

    if rs.debate.get("cross_family", "warn") == "require" and protocol is not None:
        for critic, proposer in protocol.critique_pairs(rs):
            fc = family(critic)
            if fc is not None and fc == family(proposer):
                problems.append(
                    f"debate.cross_family: require, but critic {critic.get('id')!r} and "
                    f"proposer {proposer.get('id')!r} are both family {fc!r}"
                )
    return problems


def _length_problems(rs: RawSpec, protocol: type[Protocol] | None) -> list[str]:
    """A debate's length is bounded, so a valid spec's session stays one moot can read."""
    problems = []
    phases = rs.debate.get("phases")
    if isinstance(phases, list) and len(phases) > MAX_PHASES:
        problems.append(f"debate.phases: {len(phases)} phases; a round holds at most {MAX_PHASES}")
    rounds = rs.debate.get("max_rounds")
    if rounds is None and protocol is not None:
        rounds = protocol.default_rounds
    if isinstance(rounds, int) and not isinstance(rounds, bool):
        seats = rounds * len(rs.entries)
        if seats > MAX_ROUND_SEATS:
            problems.append(
                f"debate.max_rounds: {rounds} rounds of {len(rs.entries)} debaters is "
                f"{seats:,} places to speak; at most {MAX_ROUND_SEATS:,} fit one session "
                f"(fewer rounds or debaters; the operator may extend a debate that needs more)"
            )
    return problems


def _debater_problems(debaters: Any, votes: Any) -> list[str]:
    """Per-debater rules: unique ids, scripts only when scripted, no credentials."""
    problems: list[str] = []
    if isinstance(debaters, list) and len(debaters) > MAX_DEBATERS:
        problems.append(
            f"debaters: {len(debaters)} debaters; at most {MAX_DEBATERS} take part in one debate"
        )
    seen: dict[str, int] = {}
    for i, d in enumerate(debaters if isinstance(debaters, list) else []):
        if not isinstance(d, dict):
            continue
        did = d.get("id")
        if isinstance(did, str):
            if did in seen:
                problems.append(
                    f"debaters[{i}].id: duplicate id {did!r} (also debaters[{seen[did]}])"
                )
            else:
                seen[did] = i
        model = d.get("model")
        if "script" in d and model != "scripted":
            problems.append(f'debaters[{i}].script: only allowed with model = "scripted"')
        base = d.get("api_base")
        bases = list(enumerate(base)) if isinstance(base, list) else [(None, base)]
        if isinstance(base, list) and (not base or len(set(map(str, base))) != len(base)):
            problems.append(f"debaters[{i}].api_base: a list needs one or more distinct servers")
        for j, one in bases:
            part = _url_credential(one) if isinstance(one, str) else None
            if part:
                where = f"debaters[{i}].api_base" + (f"[{j}]" if j is not None else "")
                problems.append(
                    f"{where}: holds a credential ({part}); put the key in an "
                    "environment variable named in api_key_env"
                )
        env = d.get("api_key_env")
        if isinstance(env, str) and (not ENV_NAME.match(env) or _key_like(env)):
            problems.append(
                f"debaters[{i}].api_key_env: must name an environment variable "
                "(letters, digits, underscores, like OPENAI_API_KEY), not hold a key"
            )
        script = d.get("script")
        scripted = script.get("votes") if isinstance(script, dict) else None
        if isinstance(scripted, list) and isinstance(votes, list | tuple):
            for j, v in enumerate(scripted):
                if isinstance(v, str) and v not in votes:
                    problems.append(
                        f"debaters[{i}].script.votes[{j}]: {v!r} is not one of debate.votes"
                    )
    return problems


def _key_like(value: str, *, hex_ids: bool = True) -> bool:
    """A key rather than a name: a known shape, or long and random (mixed case and digits, or hex).

    ``hex_ids=False`` lets a long hex string pass: in a URL's path it is more often
    an account or resource id (Cloudflare's AI Gateway) than a key.
    """
    if SECRET_SHAPES.search(value):
        return True
    if len(value) < 20:
        return False
    mixed = all(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    return mixed or (hex_ids and re.fullmatch(r"[0-9a-f]{32,}", value) is not None)


def _token_like(value: str) -> bool:
    """A query value no person would type: long, random lowercase letters and digits."""
    if _key_like(value):
        return True
    if not re.fullmatch(r"[a-z0-9]{20,}", value):
        return False
    return sum(c.isdigit() for c in value) >= 3 and sum(c.isalpha() for c in value) >= 3


def _url_credential(base: str) -> str | None:
    """Which part of a URL carries a credential: user info, host, path, parameters, fragment."""
    try:
        url = urlsplit(base)
    except ValueError:  # unparsable (a broken IPv6 host): judge the text as a whole
        return "user info" if re.search(r"//[^/]*@", base) else None
    if "@" in url.netloc:
        return "user info before the host"
    host = url.netloc.rsplit(":", 1)[0] if "]" not in url.netloc else ""  # case kept
    if any(_key_like(unquote(label)) for label in host.split(".")):
        return "a key-like host name label"
    for segment in url.path.split("/"):
        name, *params = unquote(segment).split(";")
        if _key_like(name, hex_ids=False):
            return "a key-like path segment"
        for param in params:  # ;name=value, or a bare ;value
            pname, _, pvalue = param.partition("=")
            if SECRET_NAME.search(pname):
                return f"path parameter {pname!r}"
            if _token_like(pname) or _token_like(pvalue):
                return "a key-like ;parameter"
    for name, value in parse_qsl(url.query, keep_blank_values=True):
        if SECRET_NAME.search(name):
            return f"query parameter {name!r}"
        if _token_like(name) or _token_like(value):  # named without repeating it
            return "a key-like query parameter"
    if url.fragment:  # never sent to the server: a fragment in an API base only hides things
        return "a #fragment"
    return None


def _rubric_problems(rubric: Any) -> list[str]:
    if not isinstance(rubric, dict):
        return []
    problems = []
    props = rubric.get("properties")
    seen: set[str] = set()
    for i, prop in enumerate(props if isinstance(props, list) else []):
        if not isinstance(prop, dict):
            continue
        pid = prop.get("id")
        if isinstance(pid, str):
            if pid in seen:
                problems.append(f"rubric.properties[{i}].id: duplicate property {pid!r}")
            seen.add(pid)
        adm, forb = prop.get("admissible"), prop.get("forbidden")
        if isinstance(adm, list) and isinstance(forb, list):
            both = sorted(set(map(str, adm)) & set(map(str, forb)))
            if both:
                problems.append(
                    f"rubric.properties[{i}].forbidden: {', '.join(both)} also listed as admissible"
                )
    return problems


def _key_value_problems(raw: dict[str, Any]) -> list[str]:
    """Where the value of one of the spec's own key variables was typed into it.

    Such a field would be stored in the session file, its name and every export.
    The caller redacts the value out of the paths and messages.
    """
    problems: list[str] = []
    for name in dict.fromkeys(key_env_names(raw)):
        value = os.environ.get(name, "")
        if len(value) < MIN_SECRET:
            continue
        problems += [
            f"{_path(loc)}: holds the value of ${name} (an api_key_env variable); "
            "a key never goes in a spec"
            for loc in _strings_holding(raw, value)
        ]
    return problems


def _strings_holding(node: Any, value: str, loc: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Key paths of every string (table keys included) that contains ``value``."""
    if isinstance(node, str):
        return [loc] if value in node else []
    found: list[tuple[Any, ...]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            found += _strings_holding(k, value, (*loc, k)) + _strings_holding(v, value, (*loc, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += _strings_holding(v, value, (*loc, i))
    return found


def validate_spec(raw: dict[str, Any], source: str = "spec", *, key_values: bool = True) -> Spec:
    """Validate a spec dict; raise SpecError listing every problem by key path.

    ``key_values`` refuses a spec holding the value of one of its key variables
    (off for a stored spec, whose writer redacted them). No message repeats a key.
    """
    # Unknown top-level keys are named here and kept from the deep checks below: a file of
    # 100,000 stray tables costs a lookup each, not pydantic's errors and the scans.
    known = {k: v for k, v in raw.items() if k in Spec.model_fields}
    problems = [f"{_path((k,))}: unknown key" for k in raw if k not in known]
    problems += _secret_problems(known) + (_key_value_problems(known) if key_values else [])
    spec: Spec | None = None
    try:
        spec = Spec.model_validate(known)
    except ValidationError as err:
        problems = _pydantic_problems(err) + problems
    try:
        problems += _rule_problems(known)
    except (TypeError, ValueError, KeyError, AttributeError):
        if spec is not None:  # well-typed input: a bug in a rule, not bad input
            raise
        # A list or table where a rule expected an id: the type errors above name it.
    if problems or spec is None:
        raise SpecError(source, redacted_problems(raw, _dedupe(problems)))
    return spec


def redacted_problems(raw: Any, problems: list[str]) -> list[str]:
    """``problems`` with every secret the spec or environment names taken out."""
    redact = Redactor.for_spec(raw if isinstance(raw, dict) else {})
    return [redact(p) for p in problems]


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def read_spec_file(
    path: str | Path, allow_read: Sequence[str | Path] = ()
) -> tuple[Spec, dict[str, Any]]:
    """Read and validate a spec file; returns the model and the raw table.

    Its documents are read from its own folder tree, and from ``allow_read`` (paths
    the person running moot named on the command line, never the spec).
    """
    p = Path(path)
    try:  # a regular file within the size, depth and number limits, or exit 2
        raw = toml_document(read_regular(p, SPEC_BYTES))
    except (FileRefused, TomlRefused) as err:
        raise SpecError(str(p), [str(err)]) from None
    spec = validate_spec(raw, str(p))
    documents, problems = read_documents(spec, p.parent, allow_read)
    problems += root_problems(spec, ReadRoots.of(p.parent, allow_read))
    if problems:
        raise SpecError(str(p), redacted_problems(raw, problems))
    return spec.with_documents(documents), raw


def spec_warnings(spec: Spec) -> list[str]:
    """Things that run but weaken the result: same-family critics under ``warn``, and a
    debate long enough to fill its session file."""
    outgrow = outgrow_warning(spec)
    out = [outgrow] if outgrow else []
    if spec.debate.cross_family != "warn":
        return out
    for critic, proposer in protocol_class(spec).critique_pairs(RawSpec.of(spec.model_dump())):
        fam = family(critic)
        if fam is not None and fam == family(proposer):
            out.append(
                f"{critic['id']!r} judges the work of {proposer['id']!r} and both are family "
                f'{fam!r}: a weak adversarial pass (cross_family = "warn")'
            )
    return out
