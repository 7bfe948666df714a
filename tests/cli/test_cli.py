"""The command line: exit codes, messages by key path, exports, new, resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.helpers import moot_in_process as moot
from tui.cli import main
from tui.engine.record.session import load_session
from tui.exitcodes import ExitCode


def test_validate_ok_and_bad(tmp_path: Path) -> None:
    ok = moot("validate", str(EXAMPLES / "scripted-consensus.toml"))
    assert ok.returncode == 0 and "ok" in ok.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('[debate]\ntitle = "t"\nprotocol = "x"\n[[debaters]]\nid = "a"\n')
    r = moot("validate", str(bad))
    assert r.returncode == 2
    assert "debate.motion" in r.stderr and "debate.protocol" in r.stderr
    assert "debaters[0].model" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ("not = [toml", "not valid TOML"),
        (
            '[debate]\ntitle="t"\nmotion="m"\n[[debaters]]\nid="a"\nmodel="x"\napi_key="sk-aaaaaaaaaaaaaaaaaaaaaaaa"\n',
            "debaters[0].api_key",
        ),
        (
            '[debate]\ntitle="t"\nmotion="m"\nconsensus_threshold=5\n[[debaters]]\nid="a"\nmodel="scripted"\n'
            '[[debaters]]\nid="b"\nmodel="scripted"\n',
            "debate.consensus_threshold",
        ),
    ],
)
def test_bad_spec_exit_2_for_run(tmp_path: Path, content: str, key: str) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(content)
    r = moot("run", str(spec), "--headless", "--sessions-dir", str(tmp_path / "out"))
    assert r.returncode == 2 and key in r.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_missing_file_exit_2(tmp_path: Path) -> None:
    r = moot("export", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and "file not found" in r.stderr


def test_headless_consensus_exit_0_and_exports(tmp_path: Path) -> None:
    out = tmp_path / "run.toml"
    r = moot("run", str(EXAMPLES / "scripted-consensus.toml"), "--headless", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "decision: revise" in r.stdout
    data = load_session(out)
    assert data.result is not None
    assert data.result["decision_rule"] == "threshold_vote"
    md = moot("export", str(out), "--format", "markdown")
    assert (
        md.returncode == 0
        and "# Release the migration" in md.stdout
        and "threshold_vote" in md.stdout
    )
    js = moot("export", str(out), "--format", "json")
    doc = json.loads(js.stdout)
    assert doc["result"]["decision"] == "revise" and len(doc["turns"]) == len(data.turns)


def test_headless_exhausted_exit_3(tmp_path: Path) -> None:
    out = tmp_path / "x.toml"
    r = moot("run", str(EXAMPLES / "scripted-exhausted.toml"), "--headless", "--out", str(out))
    assert r.returncode == 3
    result = load_session(out).result
    assert result is not None and result["decision_rule"] == "max_rounds_exhausted"


def test_headless_prompt_on_unresolved(tmp_path: Path) -> None:
    out = tmp_path / "p.toml"
    r = moot(
        "run",
        str(EXAMPLES / "scripted-exhausted.toml"),
        "--headless",
        "--out",
        str(out),
        "--on-unresolved",
        "prompt",
        stdin="extend\nadopt\nBuild times were measured.\n",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    result = load_session(out).result
    assert result is not None
    assert result["decided_by"] == "operator" and result["decision"] == "adopt"
    assert result["max_rounds"] == 3 and result["rounds_run"] == 3


def test_headless_adversary_example(tmp_path: Path) -> None:
    out = tmp_path / "a.toml"
    r = moot("run", str(EXAMPLES / "scripted-adversary.toml"), "--headless", "--out", str(out))
    assert r.returncode == 0
    res = load_session(out).result
    assert res is not None
    assert (res["decision_rule"], res["revisions"], res["routing_decision"]) == (
        "critic_release",
        1,
        "release",
    )


def test_new_writes_a_valid_commented_spec(tmp_path: Path) -> None:
    for proto in ("debate", "adversary", "challenge", "refine"):
        p = tmp_path / f"{proto}.toml"
        assert moot("new", str(p), "--protocol", proto).returncode == 0
        assert "#" in p.read_text()
        assert moot("validate", str(p)).returncode == 0
    again = moot("new", str(tmp_path / "debate.toml"))
    assert again.returncode == 2 and "not overwriting" in again.stderr
    assert moot("new", str(tmp_path / "z.toml"), "--protocol", "nope").returncode == 2


def test_resume_damaged_session_exit_2_untouched(tmp_path: Path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text('schema = "moot.session/1"\n[spec]\nx = 1\n# moot:commit\n')
    before = p.read_bytes()
    r = moot("resume", str(p), "--headless")
    assert r.returncode == 2 and "spec." in r.stderr
    assert p.read_bytes() == before


def test_resume_of_decided_session_repeats_nothing(tmp_path: Path) -> None:
    out = tmp_path / "d.toml"
    moot("run", str(EXAMPLES / "scripted-adversary.toml"), "--headless", "--out", str(out))
    before = load_session(out)
    r = moot("resume", str(out), "--headless")
    assert r.returncode == 0 and "already decided" in r.stdout
    assert len(load_session(out).turns) == len(before.turns)


BASE = """[debate]
title = "t"
motion = "m"
{debate}
[[debaters]]
id = "a"
model = "scripted"
{a}
[[debaters]]
id = "b"
model = "scripted"
"""

BAD_SPECS = {
    "unknown key": (dict(debate='colour = "red"', a=""), "debate.colour: unknown key"),
    "wrong type": (dict(debate='max_rounds = "two"', a=""), "debate.max_rounds"),
    "duplicate id": (
        dict(debate="", a='[[debaters]]\nid = "a"\nmodel = "scripted"'),
        "debaters[1].id: duplicate id 'a'",
    ),
    "self critique": (
        dict(debate='protocol = "adversary"\nproposer = "a"\ncritic = "a"', a=""),
        "debate.critic: 'a' is also the proposer",
    ),
    "threshold": (dict(debate="consensus_threshold = 3", a=""), "debate.consensus_threshold"),
    "unknown protocol": (dict(debate='protocol = "vibes"', a=""), "debate.protocol"),
    "literal key": (
        dict(debate="", a='api_key = "sk-live-aaaaaaaaaaaaaaaaaaaa"'),
        "debaters[0].api_key",
    ),
    "env name": (dict(debate="", a='api_key_env = "not a name"'), "debaters[0].api_key_env"),
    "missing role": (
        dict(debate='protocol = "challenge"\ndefender = "a"\nadversary = "b"', a=""),
        "debate.artifact: required",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_each_class_of_bad_spec(tmp_path: Path, case: str) -> None:
    fields, key = BAD_SPECS[case]
    spec = tmp_path / "s.toml"
    spec.write_text(BASE.format(**fields))
    before = spec.read_bytes()
    for args in (
        ("validate", str(spec)),
        ("run", str(spec), "--headless", "--sessions-dir", str(tmp_path / "o")),
    ):
        r = moot(*args)
        assert r.returncode == 2 and key in r.stderr, (case, r.stderr)
        assert "Traceback" not in r.stderr
    assert spec.read_bytes() == before
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


@pytest.mark.parametrize(
    "kind",
    [
        "not toml",
        "wrong schema",
        "turn missing speaker",
        "turn wrong type",
        "bad spec copy",
        "unknown speaker",
        "no marker",
    ],
)
def test_each_class_of_damaged_session_exit_2(tmp_path: Path, kind: str) -> None:
    from tests.engine.test_session import DAMAGE

    spec = tmp_path / "spec.toml"
    spec.write_text(BASE.format(debate='phases = ["proposal"]', a=""))
    out = tmp_path / "s.toml"
    assert moot("run", str(spec), "--headless", "--out", str(out)).returncode == 0
    damaged = DAMAGE[kind](out.read_text())
    out.write_text(damaged)
    for args in (("resume", str(out), "--headless"), ("export", str(out))):
        r = moot(*args)
        assert r.returncode == 2, (kind, r.stdout, r.stderr)
        assert "problem" in r.stderr and "Traceback" not in r.stderr
    assert out.read_text() == damaged


def test_headless_provider_failure_exit_3_no_traceback(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = tmp_path / "s.toml"
    spec.write_text(
        BASE.format(
            debate='phases = ["proposal"]',
            a=f'api_base = "http://127.0.0.1:{port}/v1"\napi_key_env = "MOOT_TEST_KEY"',
        ).replace('model = "scripted"', 'model = "openai/fake-model"', 1)
    )
    out = tmp_path / "o.toml"
    env_run = subprocess.run(
        # Past preflight (which refuses this port up front), as a server that dies mid-run.
        [sys.executable, "-m", "tui", "run", str(spec), "--headless", "--out", str(out)]
        + ["--no-preflight"],
        capture_output=True,
        text=True,
        timeout=180,
        env={**__import__("os").environ, "MOOT_TEST_KEY": "k-test-key"},
    )
    assert env_run.returncode == 3, env_run.stdout + env_run.stderr
    assert "Traceback" not in env_run.stdout + env_run.stderr
    assert "provider failure" in env_run.stdout
    result = load_session(out).result
    assert result is not None
    assert (result["decision"], result["decision_rule"]) == ("escalate", "provider_failure")


def test_headless_prints_hostile_text_literally(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    hostile = (
        "[bold red]boom[/] [link=http://x]y \\u001b[31mred\\u001b[0m \\u001b]8;;http://x\\u0007z"
    )
    spec.write_text(
        BASE.format(debate='phases = ["proposal"]', a="").replace(
            'id = "a"\nmodel = "scripted"\n',
            f'id = "a"\nmodel = "scripted"\n[debaters.script]\nstances = ["{hostile}"]\n',
            1,
        )
    )
    r = moot("run", str(spec), "--headless", "--out", str(tmp_path / "o.toml"))
    assert r.returncode == 0, r.stderr
    assert "[bold red]boom[/] [link=http://x]y" in r.stdout  # markup shown, not applied
    assert "\x1b" not in r.stdout  # no escape reaches the terminal
    assert "␛[31mred" in r.stdout  # the escape is made visible


EXPECTED = {
    "scripted-consensus.toml": (0, "threshold_vote"),
    "scripted-exhausted.toml": (3, "max_rounds_exhausted"),
    "scripted-adversary.toml": (0, "critic_release"),
    "scripted-challenge.toml": (0, "no_objections"),
    "scripted-refine.toml": (0, "judge_convergence"),
    "scripted-rubric.toml": (0, "critic_release"),
    "scripted-architecture-review.toml": (0, "no_objections"),
    "scripted-delphi.toml": (0, "converged"),
    "scripted-grounded-review.toml": (0, "no_objections"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scripted_examples_end_as_documented(tmp_path: Path, name: str) -> None:
    code, rule = EXPECTED[name]
    out = tmp_path / "s.toml"
    r = moot("run", str(EXAMPLES / name), "--headless", "--out", str(out))
    assert r.returncode == code, r.stdout + r.stderr
    result = load_session(out).result
    assert result is not None
    assert result["decision_rule"] == rule
    assert result["invalid_turns"] == 0


def test_every_scripted_example_is_covered() -> None:
    assert {p.name for p in EXAMPLES.glob("scripted-*.toml")} == set(EXPECTED)


def test_prompt_refuses_a_vetoed_release_and_asks_again(tmp_path: Path) -> None:
    spec = tmp_path / "c.toml"
    spec.write_text(
        """[debate]
title = "Blocked"
motion = "Plan."
protocol = "challenge"
defender = "owner"
adversary = "red"
artifact = "Restore last night's backup to roll back."
max_rounds = 1

[[debaters]]
id = "owner"
model = "scripted"

[[debaters]]
id = "red"
model = "scripted"
[[debaters.script.turns]]
verdict = "objections"
challenges = [{ category = "data", concern = "Loses a day of writes.", evidence = "Restore last night's backup", severity = "critical", recommendation = "Make it reversible." }]
"""
    )
    out = tmp_path / "o.toml"
    r = moot(
        "run",
        str(spec),
        "--headless",
        "--out",
        str(out),
        "--on-unresolved",
        "prompt",
        stdin="release\nship it anyway\nrevise\nMake the migration reversible first.\n",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "blocking mode" in r.stdout and "Traceback" not in r.stdout + r.stderr
    result = load_session(out).result
    assert result is not None
    assert (result["decision"], result["decided_by"]) == ("revise", "operator")


@pytest.mark.parametrize(
    ("name", "must"),
    [
        (
            "scripted-challenge.toml",
            [
                "- **C1.1** addressed — Restoring a backup loses every write since last night.\n"
                "  - severity: critical\n  - history: r1:raised → r2:addressed",
                "- **C1.1** critical — reliability:",
                "  - recommendation: Make the migration reversible.",
                "- **C1.1** addressed — ",
                "> **Revised artifact:** ",
            ],
        ),
        (
            "scripted-refine.toml",
            [
                "> **Winning candidate:** ",
                "- **round 1** — challenger (agreement ",
                "Key arguments:",
                "Pick: **X = challenger**",
                "> **Reason:** ",
            ],
        ),
        (
            "scripted-rubric.toml",
            [
                "Rubric: **fail** · Missing evidence: **2**",
                "(refused: not found verbatim in the artifact)",
                "  - verdict: no (claimed yes)",
                "Rubric (last assessed turn):",
            ],
        ),
    ],
)
def test_markdown_export_shows_every_turn_kind(tmp_path: Path, name: str, must: list[str]) -> None:
    out = tmp_path / "s.toml"
    moot("run", str(EXAMPLES / name), "--headless", "--out", str(out))
    md = moot("export", str(out), "--format", "markdown").stdout
    for text in must:
        assert text in md, text
    assert "Verdict: ****" not in md


def test_a_spec_with_100000_unknown_tables_lists_50_problems_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    debaters = "".join(f'[[debaters]]\nid = "{d}"\nmodel = "scripted"\n' for d in "ab")
    head = '[debate]\ntitle = "t"\nmotion = "m"\n' + debaters
    spec = tmp_path / "many.toml"
    spec.write_text(head + "".join(f"[x{i}]\n" for i in range(100_000)), "utf-8")
    assert main(["validate", str(spec)]) == ExitCode.BAD_INPUT
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"moot: {spec}: 100000 problems"
    assert lines[1:51] == [f"  - x{i}: unknown key" for i in range(50)]
    assert lines[51:] == ["  … and 99950 more problems"]


def test_main_builds_its_command_line_once_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second call in the same process (the tests, a batch of calls) parses with the
    parser the first built: none is made again, and each call still parses afresh."""
    import argparse

    spec = str(EXAMPLES / "scripted-consensus.toml")
    assert moot("validate", spec).returncode == ExitCode.DECIDED
    made: list[str] = []
    real = argparse.ArgumentParser.__init__

    def counted(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        made.append(str(kwargs.get("prog")))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", counted)
    again = moot("validate", spec)
    missing = moot("validate", str(EXAMPLES / "no-such-spec.toml"))
    assert made == []
    assert again.returncode == ExitCode.DECIDED and again.stdout
    assert missing.returncode == ExitCode.BAD_INPUT and "no-such-spec.toml" in missing.stderr
