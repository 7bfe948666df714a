"""No secret moot knows is written, printed or exported; literal keys in a spec are refused."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import EchoAuth, FakeOpenAI, Reply
from tests.helpers import SCRIPTED
from tui.engine import Engine, SpecError, validate_spec
from tui.engine.basics.redact import Redactor, key_env_names
from tui.engine.basics.vocab import TurnKind
from tui.engine.core.records import Turn
from tui.engine.record.live import session_target
from tui.engine.record.session import SessionStore, load_session
from tui.exitcodes import ExitCode
from tui.render.adr import to_adr
from tui.render.export import to_json, to_markdown

GOOD: dict[str, Any] = {
    "debate": {"title": "T", "motion": "M", "max_rounds": 1, "consensus_threshold": 2},
    "debaters": [{"id": "a", "model": "scripted"}, {"id": "b", "model": "scripted"}],
}
SHAPED = "sk-proj-Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3"


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    return info.value.problems


def spec_with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    raw = copy.deepcopy(GOOD)
    node: Any = raw
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    node[path[-1]] = value
    return raw


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("debaters", 0, "role"), f"You argue for it. Key: {SHAPED}", "debaters[0].role"),
        (("debaters", 0, "persona"), f"Bearer {SHAPED}", "debaters[0].persona"),
        (("debate", "motion"), f"Should we rotate {SHAPED}?", "debate.motion"),
        (("debate", "artifact"), f"OPENAI_API_KEY={SHAPED}\n", "debate.artifact"),
        (("debaters", 0, "script"), {"stances": [f"I leak {SHAPED}"]}, "debaters[0].script"),
        (("debaters", 0, "api_key_env"), SHAPED, "debaters[0].api_key_env"),
        (("debaters", 0, "api_key_env"), "Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3Pq", "debaters[0].api_key_env"),
        (("debaters", 0, "api_key_env"), "3f9a" * 10, "debaters[0].api_key_env"),
    ],
)
def test_a_literal_key_in_any_text_field_is_refused_by_key_path(
    path: tuple[Any, ...], value: Any, where: str
) -> None:
    found = problems(spec_with(path, value))
    assert any(p.startswith(where) for p in found), found
    assert not any(SHAPED in p for p in found)  # the message never repeats the key


@pytest.mark.parametrize(
    ("base", "part"),
    [
        ("http://bob:hunter2pw@127.0.0.1:1/v1", "user info"),
        ("http://Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3@host/v1", "user info"),
        ("http://h/v1?api_key=abc123", "query parameter 'api_key'"),
        ("http://h/v1?api-version=2024-01-01&auth_token=x", "query parameter 'auth_token'"),
        ("http://h/v1?x=Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3", "key-like query parameter"),
        ("http://h/v1?Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3", "key-like query parameter"),
        ("http://h/v1#key=abc123", "#fragment"),
        ("http://h/v1#Zx8Qm2Lk9Vb4", "#fragment"),
        ("http://Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3.h.example/v1", "key-like host name label"),
        ("https://sk-proj-Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3.h.example:8443/v1", "key-like host name"),
        ("http://h/v1/Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3/chat", "key-like path segment"),
        ("http://h/v1/Zx8Qm2Lk9Vb4%4Ec7Rt1Yh6Wd3", "key-like path segment"),
        ("http://h/v1;key=abc123", "path parameter 'key'"),
        ("http://h/v1;Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3/chat", "key-like ;parameter"),
        ("http://h/v1;x=zx8qm2lk9vb4nc7rt1yh6wd3", "key-like ;parameter"),
        ("http://h/v1?x=zx8qm2lk9vb4nc7rt1yh6wd3", "key-like query parameter"),
        ("http://h/v1?zx8qm2lk9vb4nc7rt1yh6wd3", "key-like query parameter"),
    ],
)
def test_credentials_in_any_part_of_api_base_are_refused(base: str, part: str) -> None:
    found = problems(spec_with(("debaters", 0, "api_base"), base))
    assert any(
        p.startswith("debaters[0].api_base: holds a credential") and part in p for p in found
    )
    assert not any("Zx8Qm2" in p or "hunter2" in p or "abc123" in p for p in found)


def test_ordinary_specs_are_not_mistaken_for_keys() -> None:
    raw = spec_with(("debaters", 0, "role"), "Favour a risk-management-and-mitigation-first plan.")
    raw["debaters"][0]["api_key_env"] = "OPENAI_API_KEY"
    raw["debaters"][1]["api_base"] = "https://example.openai.azure.com/v1?api-version=2024-06-01"
    validate_spec(raw)
    for base in (  # real servers' URLs: ids, versions, ports and model names are not keys
        "http://localhost:11434/v1",
        "http://[::1]:8080/v1",
        "https://api.runpod.ai/v2/abc123xyz456/openai/v1",
        "https://gateway.ai.cloudflare.com/v1/0123456789abcdef0123456789abcdef/my-gw/openai",
        "https://x1y2z3abcdefghij.us-east-1.aws.endpoints.huggingface.cloud/v1/",
        "https://example.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18"
        "?api-version=2024-06-01",
        "https://generativelanguage.googleapis.com/v1beta/openai/",
        "https://h.example/v1;version=2",
    ):
        raw["debaters"][1]["api_base"] = base
        validate_spec(raw)


def test_more_than_64_debaters_is_refused_with_the_limit() -> None:
    raw = copy.deepcopy(GOOD)
    raw["debaters"] = [{"id": f"d{i}", "model": "scripted"} for i in range(65)]
    assert "debaters: 65 debaters; at most 64 take part in one debate" in problems(raw)
    raw["debaters"] = raw["debaters"][:64]
    validate_spec(raw)


def test_redactor_replaces_known_values_shapes_and_url_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MOOT_CRED_FOR_A", "plain-looking-value-42")  # no KEY/TOKEN in its name
    raw = spec_with(("debaters", 0, "api_key_env"), "MOOT_CRED_FOR_A")
    assert key_env_names(raw) == ["MOOT_CRED_FOR_A"]
    redact = Redactor.for_spec(validate_spec(raw))
    text = redact(
        f"value plain-looking-value-42, shape {SHAPED}, url http://u:p@h/x?token=zz#sig=yy"
    )
    for secret in ("plain-looking-value-42", SHAPED, "u:p@", "zz", "yy"):
        assert secret not in text
    assert redact.tree({"a": [SHAPED, 3], SHAPED: None}) == {
        "a": ["[redacted]", 3],
        "[redacted]": None,
    }
    assert redact("risk-management-and-mitigation-first") == "risk-management-and-mitigation-first"


# ------------------------------------------------------- the whole path, over HTTP
CRED_ENV = "MOOT_FAKE_PROVIDER_CRED"  # no KEY or TOKEN in the name: known only from the spec
CRED = "fake-provider-credential-8472"


def _moot(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **env},
    )


def test_a_reply_echoing_the_key_reaches_no_file_output_or_export(tmp_path: Path) -> None:
    server = FakeOpenAI().start()
    echoed = {
        "stance": f"Ship it; my key is {CRED}.",
        "rationale": f"Also {SHAPED}.",
        "vote": "release",
    }
    server.push(Reply(json.dumps(echoed)), Reply(f"Not JSON, but here is {CRED} again"))
    try:
        spec = tmp_path / "spec.toml"
        debater = (
            f'model = "openai/fake"\napi_base = "{server.base_url}"\n'
            f'api_key_env = "{CRED_ENV}"\ntimeout_s = 10\n'
        )
        spec.write_text(
            '[debate]\ntitle = "Leak"\nmotion = "Ship?"\nphases = ["proposal"]\n'
            "max_rounds = 1\nretries = 0\nparallel = false\n\n"
            f'[[debaters]]\nid = "a"\n{debater}\n[[debaters]]\nid = "b"\n{debater}'
        )
        out = tmp_path / "s.toml"
        run = _moot("run", str(spec), "--headless", "--out", str(out), env={CRED_ENV: CRED})
    finally:
        server.stop()
    assert server.requests[0]["authorization"] == f"Bearer {CRED}"  # the key was really used
    assert "Traceback" not in run.stderr, run.stderr
    data = out.read_bytes()
    assert b"[redacted]" in data  # the echo was stored, with the key taken out
    texts = {"session file": data.decode(), "stdout": run.stdout, "stderr": run.stderr}
    for fmt in ("markdown", "json"):
        export = _moot("export", str(out), "--format", fmt, env={CRED_ENV: CRED})
        assert export.returncode == 0, export.stderr
        texts[fmt] = export.stdout + export.stderr
    for where, text in texts.items():
        assert CRED not in text and SHAPED not in text, where
    turns = load_session(out).turns
    assert any(t.invalid and t.raw and "[redacted]" in t.raw for t in turns)


def test_operator_notes_actions_and_results_are_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CRED_ENV, CRED)
    raw = spec_with(("debaters", 0, "api_key_env"), CRED_ENV)
    engine = Engine(validate_spec(raw), lambda d: SCRIPTED)
    engine.operator.note(f"try the key {CRED}")
    assert CRED not in engine.state.notes[-1] and CRED not in str(engine.operator.actions)
    store = SessionStore.create(tmp_path / "s.toml", raw)  # the writer's own guard
    store.append_action({"at": "t", "action": "note", "after_turn": 0, "text": CRED})
    store.set_result({"decision": "escalate", "rationale": f"pasted {CRED}"})
    store.close()
    assert CRED.encode() not in (tmp_path / "s.toml").read_bytes()
    assert load_session(tmp_path / "s.toml").chain == []  # sealed after redaction: chain holds


def test_exports_of_a_file_written_before_redaction_show_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CRED_ENV, CRED)
    raw = spec_with(("debaters", 0, "api_key_env"), CRED_ENV)
    store = SessionStore.create(tmp_path / "s.toml", raw)
    store.close()
    data = load_session(tmp_path / "s.toml")
    leaked = Turn(1, 1, "proposal", "a", TurnKind.POSITION, "scripted", "scripted")
    leaked.content = {"stance": f"key {CRED}", "rationale": f"and {SHAPED}", "vote": "release"}
    leaked.raw, leaked.error = CRED, f"bad: {CRED}"
    old = dataclasses.replace(
        data, turns=[leaked], actions=[{"at": "t", "action": "note", "after_turn": 1, "text": CRED}]
    )
    for text in (to_json(old), to_markdown(old), to_adr(old)):
        assert CRED not in text and SHAPED not in text and "redacted" in text


# ------------------------------------------- a key's value typed into the spec itself
def _spec_file(tmp_path: Path, title: str, extra: str = "") -> Path:
    spec = tmp_path / "spec.toml"
    debater = f'model = "scripted"\napi_key_env = "{CRED_ENV}"\n'
    spec.write_text(
        f'[debate]\ntitle = "{title}"\nmotion = "Ship?"\nmax_rounds = 1\n{extra}\n'
        f'[[debaters]]\nid = "a"\n{debater}\n[[debaters]]\nid = "b"\n{debater}'
    )
    return spec


def test_a_key_value_typed_into_a_spec_field_is_refused_and_never_written(
    tmp_path: Path,
) -> None:
    spec = _spec_file(tmp_path, f"Plan {CRED}")
    env = {CRED_ENV: CRED}
    checked = _moot("validate", str(spec), env=env)
    assert checked.returncode == 2
    assert f"debate.title: holds the value of ${CRED_ENV}" in checked.stderr
    run = _moot("run", str(spec), "--headless", "--sessions-dir", str(tmp_path / "s"), env=env)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())
    for done in (checked, run):
        assert CRED not in done.stdout + done.stderr


def test_fork_set_with_a_key_value_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    env = {CRED_ENV: CRED}
    out = tmp_path / "s.toml"
    ran = _moot("run", str(_spec_file(tmp_path, "Plan")), "--headless", "--out", str(out), env=env)
    assert ran.returncode == 0, ran.stderr
    before = sorted(tmp_path.iterdir())
    for key in ("debate.title", "debaters.a.role"):
        fork = _moot("fork", str(out), "--at", "1", "--set", f"{key}=x {CRED}", env=env)
        assert fork.returncode == 2, fork.stderr
        assert "holds the value of" in fork.stderr and CRED not in fork.stdout + fork.stderr
    for bad in (f"x{CRED}", f"debaters.{CRED}.model=x"):  # refused for their shape alone
        fork = _moot("fork", str(out), "--at", "1", "--set", bad, env=env)
        assert fork.returncode == 2 and "--set" in fork.stderr, fork.stderr
        assert CRED not in fork.stdout + fork.stderr
    assert sorted(tmp_path.iterdir()) == before


def test_the_writer_keeps_a_key_value_out_of_the_header_and_the_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_TEST_TOKEN", CRED)  # a secret-named variable no spec names
    raw = spec_with(("debate", "title"), f"Plan {CRED}")
    path = session_target(raw["debate"]["title"], directory=tmp_path)
    assert CRED not in path.name and "redacted" in path.name
    SessionStore.create(path, raw, forked_from={"set": [f"debate.title=Plan {CRED}"]}).close()
    assert CRED.encode() not in path.read_bytes()
    assert load_session(path).chain == []  # sealed after redaction


def test_exports_of_a_file_whose_spec_holds_a_key_value_show_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CRED_ENV, CRED)
    raw = spec_with(("debaters", 0, "api_key_env"), CRED_ENV)
    store = SessionStore.create(tmp_path / "s.toml", raw)
    store.close()
    data = load_session(tmp_path / "s.toml")
    leaked = copy.deepcopy(raw)
    leaked["debate"].update(title=f"Plan {CRED}", motion=f"Rotate {CRED}?")
    old = dataclasses.replace(  # as a file written before the writer redacted its header
        data,
        path=tmp_path / f"20260101-plan-{CRED}.toml",
        meta={**data.meta, "id": f"20260101-plan-{CRED}"},
        spec_raw=leaked,
        spec=validate_spec(leaked, key_values=False),
    )
    for text in (to_json(old), to_markdown(old), to_adr(old)):
        assert CRED not in text and "redacted" in text


# --------------------------------------------------- a key spelled in JSON escapes
def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def test_redaction_sees_through_json_unicode_escapes() -> None:
    redact = Redactor([CRED])
    reply = '{"stance": "k ' + _escaped(CRED) + ' \\" \\\\u0041", "s": "' + _escaped(SHAPED) + '"}'
    out = redact(reply)
    assert json.loads(out) == {"stance": 'k [redacted] " \\u0041', "s": "[redacted]"}
    plain = '{"a": "\\u00e9t\\u00e9 \\n ok"}'  # no secret: left exactly as it was
    assert redact(plain) == plain


def test_a_reply_spelling_the_key_in_escapes_reaches_no_file_output_or_export(
    tmp_path: Path,
) -> None:
    server = FakeOpenAI().start()
    hidden = '{"stance": "my key is ' + _escaped(CRED) + '", "rationale": "see"}'  # no vote
    server.push(Reply(hidden), Reply(hidden))
    try:
        spec = tmp_path / "spec.toml"
        debater = (
            f'model = "openai/fake"\napi_base = "{server.base_url}"\n'
            f'api_key_env = "{CRED_ENV}"\ntimeout_s = 10\n'
        )
        spec.write_text(
            '[debate]\ntitle = "Leak"\nmotion = "Ship?"\nphases = ["proposal"]\n'
            "max_rounds = 1\nretries = 0\nparallel = false\n\n"
            f'[[debaters]]\nid = "a"\n{debater}\n[[debaters]]\nid = "b"\n{debater}'
        )
        out = tmp_path / "s.toml"
        run = _moot("run", str(spec), "--headless", "--out", str(out), env={CRED_ENV: CRED})
    finally:
        server.stop()
    assert "Traceback" not in run.stderr, run.stderr
    turns = load_session(out).turns
    assert any(t.invalid and t.raw and "[redacted]" in t.raw for t in turns)
    texts = {"session file": out.read_text(), "output": run.stdout + run.stderr}
    for fmt in ("markdown", "json"):
        export = _moot("export", str(out), "--format", fmt, env={CRED_ENV: CRED})
        texts[fmt] = export.stdout + export.stderr
    for where, text in texts.items():
        assert _escaped(CRED) not in text and CRED not in text, where
        assert _escaped(CRED).replace("\\", "\\\\") not in text, where  # escaped again in TOML


# ------------------------------------------- a server that echoes the key it was sent
SHORT_KEY = "hunter2"  # shorter than any value the redactor replaces
ECHO = EchoAuth(json.dumps({"stance": "I was sent {authorization}.", "rationale": "Echo."}))


def _echo_run(
    tmp_path: Path, key_line: str, env: dict[str, str], *extra: str
) -> tuple[subprocess.CompletedProcess[str], FakeOpenAI, Path]:
    """``moot run --headless`` of two debaters at a server answering with their key."""
    server = FakeOpenAI().start()
    server.default = ECHO
    try:
        spec = tmp_path / "spec.toml"
        debater = (
            f'model = "openai/fake"\napi_base = "{server.base_url}"\n{key_line}timeout_s = 10\n'
        )
        spec.write_text(
            '[debate]\ntitle = "Echo"\nmotion = "Ship?"\nphases = ["proposal"]\n'
            "max_rounds = 1\nretries = 0\nparallel = false\n\n"
            f'[[debaters]]\nid = "a"\n{debater}\n[[debaters]]\nid = "b"\n{debater}'
        )
        out = tmp_path / "s.toml"
        run = _moot("run", str(spec), "--headless", "--out", str(out), *extra, env=env)
    finally:
        server.stop()
    assert "Traceback" not in run.stderr, run.stderr
    return run, server, out


@pytest.mark.parametrize(
    ("key_line", "variable"),
    [(f'api_key_env = "{CRED_ENV}"\n', CRED_ENV), ("", "OPENAI_API_KEY")],
    ids=["api_key_env", "provider variable"],
)
def test_a_key_too_short_to_redact_is_refused_before_any_call_or_file(
    tmp_path: Path, key_line: str, variable: str
) -> None:
    run, server, out = _echo_run(tmp_path, key_line, {variable: SHORT_KEY})
    assert run.returncode == ExitCode.BAD_INPUT
    problem = [line for line in run.stderr.splitlines() if line.startswith("  - a:")]
    assert len(problem) == 1 and variable in problem[0] and "too short" in problem[0]
    assert SHORT_KEY not in run.stdout + run.stderr
    assert server.calls == 0 and not out.exists()


def test_without_the_preflight_a_key_too_short_to_redact_is_never_sent(tmp_path: Path) -> None:
    key_line = f'api_key_env = "{CRED_ENV}"\n'
    run, server, out = _echo_run(tmp_path, key_line, {CRED_ENV: SHORT_KEY}, "--no-preflight")
    assert run.returncode == ExitCode.UNRESOLVED
    assert server.calls == 0  # the provider refused to send it
    text = out.read_text()
    assert CRED_ENV in text and "too short" in text  # the turn's error says why, by name
    for where in (text, run.stdout, run.stderr):
        assert SHORT_KEY not in where


def test_a_long_key_a_server_echoes_reaches_no_output_or_file(tmp_path: Path) -> None:
    run, server, out = _echo_run(tmp_path, f'api_key_env = "{CRED_ENV}"\n', {CRED_ENV: CRED})
    assert server.requests[0]["authorization"] == f"Bearer {CRED}"  # the key was really sent
    text = out.read_text()
    assert "I was sent Bearer [redacted]." in text
    for where in (text, run.stdout, run.stderr):
        assert CRED not in where


# ---------------------------------------------- problem lines never quote a key
def test_validate_and_batch_summary_never_print_a_literal_key(tmp_path: Path) -> None:
    spec = _spec_file(
        tmp_path,
        "Plan",
        f'protocol = "{SHAPED}"\nphases = ["{SHAPED}"]\n"{CRED}" = 1\n',
    )
    env = {CRED_ENV: CRED}
    checked = _moot("validate", str(spec), env=env)
    summary = tmp_path / "summary.json"
    batch = _moot("batch", str(spec), "--summary", str(summary), "--no-preflight", env=env)
    assert checked.returncode == 2 and batch.returncode == 2
    assert "debate.protocol" in checked.stderr and "unknown key" in checked.stderr
    for text in (checked.stdout + checked.stderr, batch.stdout + batch.stderr, summary.read_text()):
        assert SHAPED not in text and CRED not in text


def test_a_defender_named_by_key_is_refused_without_quoting_it() -> None:
    raw = spec_with(("debate", "protocol"), "challenge")
    raw["debate"].update(defender=SHAPED, adversary="b", artifact="x")
    found = problems(raw)
    assert any(p.startswith("debate.defender") for p in found)
    assert not any(SHAPED in p for p in found), found
