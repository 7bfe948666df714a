"""Context documents through the CLI: read once, stored and hashed, shown by role, quoted."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.helpers import SCRIPTED
from tui.cli import main
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.grounding.context import FILE_BYTES
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.specs.spec import read_spec_file
from tui.exitcodes import ExitCode

REVIEW = "scripted-architecture-review.toml"


def review_copy(tmp_path: Path) -> Path:
    """The architecture-review example and its documents, copied where a test may delete them."""
    shutil.copytree(EXAMPLES / "architecture", tmp_path / "architecture")
    spec = tmp_path / REVIEW
    shutil.copyfile(EXAMPLES / REVIEW, spec)
    return spec


def run_review(tmp_path: Path) -> Path:
    out = tmp_path / "review.toml"
    assert main(["run", str(review_copy(tmp_path)), "--headless", "--out", str(out)]) == 0
    return out


def test_documents_are_stored_hashed_and_outlive_their_files(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = run_review(tmp_path)
    folder = tmp_path / "architecture"
    originals = {p.name: p.read_bytes() for p in folder.iterdir()}
    shutil.rmtree(folder)  # replay, export and verify must not need the originals
    data = load_session(out)
    docs = {d.label: d for d in data.spec.documents}
    assert set(docs) == {"artifact", "slo", "incident"}
    design = originals["orders-outbox-design.md"]
    assert docs["artifact"].text.encode() == design
    assert docs["artifact"].sha256 == hashlib.sha256(design).hexdigest()
    assert docs["artifact"].size == len(design)
    assert docs["artifact"].path == "architecture/orders-outbox-design.md"
    assert docs["slo"].roles == ("adversary",)
    assert data.spec.debate.artifact == design.decode()  # the artifact the protocol shows
    capsys.readouterr()
    assert main(["verify", str(out)]) == ExitCode.DECIDED
    assert "all" in capsys.readouterr().out
    assert main(["export", str(out), "--format", "markdown"]) == ExitCode.DECIDED
    slo = docs["slo"]
    assert (
        f"- slo: architecture/orders-slo.md, {slo.size} bytes, sha256 `{slo.sha256}`, "
        "seen by adversary" in capsys.readouterr().out
    )
    assert main(["export", str(out), "--format", "json"]) == ExitCode.DECIDED
    exported = json.loads(capsys.readouterr().out)["documents"]
    assert exported[1] == {k: v for k, v in slo.record().items() if k != "text"}


def test_role_visibility_is_recorded_in_saw(tmp_path: Path) -> None:
    data = load_session(run_review(tmp_path))
    reviewer, owner = data.turns[0], data.turns[1]
    assert reviewer.speaker == "reviewer" and owner.speaker == "owner"
    assert {"context:slo", "context:incident"} <= set(reviewer.saw)
    assert "context:incident" in owner.saw and "context:slo" not in owner.saw


def test_quotes_are_admitted_with_lines_or_refused(tmp_path: Path) -> None:
    data = load_session(run_review(tmp_path))
    rubric = {p["property"]: p for p in data.turns[0].derived["rubric"]["properties"]}
    design_quote, incident_quote = rubric["idempotent-capture"]["evidence"]
    design = (EXAMPLES / "architecture" / "orders-outbox-design.md").read_text().splitlines()
    line = next(i for i, t in enumerate(design, 1) if "deduplicates on the event id" in t)
    assert design_quote["admitted"] and design_quote["source"] == "artifact"
    assert design_quote["lines"] == [line, line]
    assert incident_quote["admitted"] and incident_quote["source"] == "incident"
    found, invented = rubric["payment-slo"]["evidence"]
    assert found["admitted"] and found["lines"] == [5, 5]
    assert not invented["admitted"] and invented["why"] == "not found verbatim in slo"
    later = {p["property"]: p for p in data.turns[2].derived["rubric"]["properties"]}
    revised = later["idempotent-capture"]["evidence"][0]
    assert revised["admitted"] and revised["source"] == "artifact:r1"  # the revised artifact
    spanning = later["payment-slo"]["evidence"][0]
    assert spanning["admitted"] and spanning["lines"] == [5, 6]  # across a line break


def test_a_document_the_role_did_not_see_is_not_evidence(tmp_path: Path) -> None:
    spec = review_copy(tmp_path)
    text = spec.read_text().replace('roles = ["adversary"]', 'roles = ["owner"]')
    spec.write_text(text)
    out = tmp_path / "hidden.toml"
    main(["run", str(spec), "--headless", "--out", str(out)])
    data = load_session(out)
    assert "context:slo" not in data.turns[0].saw and "context:slo" in data.turns[1].saw
    evidence = data.turns[0].derived["rubric"]["properties"][1]["evidence"][0]
    assert not evidence["admitted"]
    assert evidence["why"] == "no document 'slo' was shown to this role"


def test_verify_names_a_changed_document(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = run_review(tmp_path)
    text = out.read_text()
    out.write_text(text.replace("p99 under 800 ms", "p99 under 900 ms"))
    capsys.readouterr()
    assert main(["verify", str(out)]) == ExitCode.VERIFY_FAILED
    report = capsys.readouterr().out
    assert "document slo: sha256" in report and "document slo: size" not in report


def _spec(tmp_path: Path, context: str, artifact: str = 'artifact = "Plan."') -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        f"""[debate]
title = "T"
motion = "M"
protocol = "challenge"
defender = "a"
adversary = "b"
{artifact}
{context}
[[debaters]]
id = "a"
model = "scripted"
[[debaters]]
id = "b"
model = "scripted"
"""
    )
    return path


@pytest.mark.parametrize(
    ("context", "artifact", "named"),
    [
        ('[[context]]\nlabel = "big"\nfile = "big.txt"', None, "context[0].file"),
        ('[[context]]\nlabel = "bin"\nfile = "bin.txt"', None, "context[0].file"),
        ('[[context]]\nlabel = "g"\nglob = "nothing/*.md"', None, "context[0].glob"),
        ('[[context]]\nlabel = "x"\nfile = "a.md"\ntext = "t"', None, "context[0]"),
        ('[[context]]\nlabel = "artifact"\ntext = "t"', None, "context[0].label"),
        ('[[context]]\nlabel = "x"\ntext = "t"\nroles = ["judge"]', None, "context[0].roles[0]"),
        ("", 'artifact = "P."\nartifact_file = "a.md"', "debate.artifact_file"),
        ("", 'artifact_file = "missing.md"', "debate.artifact_file"),
        # Found by the fuzzer: a NUL in a path was "internal error: embedded null byte".
        ('[[context]]\nlabel = "n"\nfile = "a\\u0000.md"', None, "context[0].file"),
        ("", 'artifact_file = "\\u0000\\u001b[31m"', "debate.artifact_file"),
    ],
)
def test_bad_documents_exit_2_naming_the_key(
    tmp_path: Path,
    capsys,  # noqa: ANN001
    context: str,
    artifact: str | None,
    named: str,
) -> None:
    (tmp_path / "big.txt").write_bytes(b"x" * (FILE_BYTES + 1))
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe not utf-8")
    (tmp_path / "a.md").write_text("A plan.")
    spec = _spec(tmp_path, context, artifact or 'artifact = "Plan."')
    out = tmp_path / "never.toml"
    assert main(["run", str(spec), "--headless", "--out", str(out)]) == ExitCode.BAD_INPUT
    assert f"  - {named}:" in capsys.readouterr().err
    assert not out.exists()


def test_a_glob_stores_one_document_per_file(tmp_path: Path) -> None:
    (tmp_path / "adr").mkdir()
    (tmp_path / "adr" / "0001-outbox.md").write_text("Use an outbox.")
    (tmp_path / "adr" / "0002-keys.md").write_text("Key captures on the order id.")
    spec = tmp_path / "g.toml"
    spec.write_text(
        """[debate]
title = "T"
motion = "Adopt the outbox."
max_rounds = 1
[[context]]
label = "adrs"
glob = "adr/*.md"
roles = ["a"]
[[debaters]]
id = "a"
model = "scripted"
[[debaters]]
id = "b"
model = "scripted"
"""
    )
    out = tmp_path / "g-session.toml"
    main(["run", str(spec), "--headless", "--out", str(out)])
    data = load_session(out)
    labels = [d.label for d in data.spec.documents]
    assert labels == ["adrs/adr/0001-outbox.md", "adrs/adr/0002-keys.md"]
    for turn in data.turns:
        shown = "context:adrs/adr/0002-keys.md" in turn.saw
        assert shown == (turn.speaker == "a")


class Recording:
    """The scripted provider, keeping every prompt it was sent."""

    def __init__(self) -> None:
        self.prompts: dict[str, list[str]] = {}

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        text = "\n".join(m["content"] for m in request.messages)
        self.prompts.setdefault(request.debater.id, []).append(text)
        return await SCRIPTED.complete(request, on_token)

    async def aclose(self) -> None:
        return None


def test_prompts_show_each_role_its_documents(tmp_path: Path) -> None:
    spec, raw = read_spec_file(review_copy(tmp_path))
    recording = Recording()
    session = LiveSession.start(spec, raw, lambda d: recording, out=tmp_path / "p.toml")
    try:
        asyncio.run(session.engine.run())
    finally:
        session.close()
    slo = (EXAMPLES / "architecture" / "orders-slo.md").read_text()
    incident = (EXAMPLES / "architecture" / "incident-2026-03.md").read_text()
    reviewer, owner = recording.prompts["reviewer"][0], recording.prompts["owner"][0]
    assert "## Document slo (architecture/orders-slo.md)\n" + slo in reviewer
    assert incident in reviewer and incident in owner
    assert "Checkout latency: p99 under 800 ms" not in owner  # the SLOs are the adversary's
    assert "A context_quote gives the label of the document" in reviewer


def test_a_key_in_a_document_reaches_no_model_and_no_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,  # noqa: ANN001
) -> None:
    """A debater's key value and a key shape in a document are redacted as it is read."""
    secret = "plaintext-secret-in-a-doc-4242"
    shaped = "sk-" + "A1b2C3d4E5f6G7h8I9j0"
    monkeypatch.setenv("MOOT_DOC_TEST_KEY", secret)
    (tmp_path / "notes.md").write_text(f"Deploy with {secret}.\nOld key: {shaped}\n")
    spec_path = _spec(tmp_path, '[[context]]\nlabel = "notes"\nfile = "notes.md"')
    spec_path.write_text(
        spec_path.read_text().replace('id = "a"\n', 'id = "a"\napi_key_env = "MOOT_DOC_TEST_KEY"\n')
    )
    spec, raw = read_spec_file(spec_path)
    recording = Recording()
    out = tmp_path / "doc.toml"
    session = LiveSession.start(spec, raw, lambda d: recording, out=out)
    try:
        asyncio.run(session.engine.run())
    finally:
        session.close()
    prompts = "\n".join(p for ps in recording.prompts.values() for p in ps)
    assert "Deploy with [redacted]." in prompts
    assert secret not in prompts and shaped not in prompts
    stored = out.read_text()
    assert secret not in stored and shaped not in stored
    (doc,) = load_session(out).spec.documents
    assert doc.redacted == 2 and doc.text == "Deploy with [redacted].\nOld key: [redacted]\n"
    assert doc.sha256 == hashlib.sha256(doc.text.encode()).hexdigest()
    capsys.readouterr()
    assert main(["verify", str(out), "--json"]) != ExitCode.VERIFY_FAILED
    claims = json.loads(capsys.readouterr().out)["claims"]
    names = {(c["where"], c["field"]): c["ok"] for c in claims}
    assert names[("document notes", "no key")] and names[("document notes", "redacted")]


def test_verify_names_a_key_stored_in_a_document(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = run_review(tmp_path)
    text = out.read_text()
    out.write_text(text.replace("p99 under 800 ms", "p99 under 800 ms sk-" + "Z" * 24, 1))
    capsys.readouterr()
    assert main(["verify", str(out)]) == ExitCode.VERIFY_FAILED
    assert "document slo: no key" in capsys.readouterr().out
