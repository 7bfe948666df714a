"""Preflight: a run that cannot reach a model fails before a session file exists.

The reported cases: ``model = "gpt-4o"``-style strings LiteLLM cannot route, a
missing key and a refused ``api_base`` each created a session file and failed
after retries; a sessions folder that could not be created was an internal error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.fake_openai import FakeOpenAI
from tui.cli import main
from tui.engine.specs.spec import validate_spec
from tui.exitcodes import ExitCode
from tui.providers.preflight import preflight

# One worker loads LiteLLM (7 s of CPU a process), the one running this group:
# tests/conftest.py fails a test outside it that uses LiteLLM.
pytestmark = pytest.mark.xdist_group("litellm")

KEY_ENV = "MOOT_PREFLIGHT_TEST_KEY"


def spec_file(tmp_path: Path, *debaters: dict[str, Any]) -> Path:
    raw = {
        "debate": {
            "title": "Preflight",
            "motion": "Ship it.",
            "phases": ["proposal"],
            "max_rounds": 1,
        },
        "debaters": [
            {"id": f"d{i}", "role": "Decides.", "timeout_s": 60, **d}
            for i, d in enumerate(debaters, 1)
        ],
    }
    path = tmp_path / "spec.toml"
    path.write_bytes(tomli_w.dumps(raw).encode())
    return path


def run(tmp_path: Path, spec: Path, *extra: str) -> int:
    return main(["run", str(spec), "--headless", "--sessions-dir", str(tmp_path / "s"), *extra])


def sessions(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "s"
    return sorted(folder.glob("*.toml")) if folder.exists() else []


@pytest.fixture
def closed_port_base(refused_base: str) -> str:
    return f"{refused_base}/v1"


def test_each_failing_debater_gets_one_line_and_no_session_is_written(
    tmp_path: Path,
    closed_port_base: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = spec_file(
        tmp_path,
        {"model": "scripted"},
        {"model": "llama3", "api_base": closed_port_base},
        {"model": "openai/fake", "api_key_env": KEY_ENV},
        {"model": "gpt-4o"},
        {"model": "openai/fake", "api_base": closed_port_base},
    )
    started = time.monotonic()
    assert run(tmp_path, spec) == ExitCode.BAD_INPUT
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    lines = [line.strip() for line in err.splitlines() if line.startswith("  - ")]
    assert [line.split(":")[0] for line in lines] == ["- d2", "- d3", "- d4", "- d5"]
    assert 'cannot route model "llama3"' in lines[0] and '"openai/llama3"' in lines[0]
    assert f"{KEY_ENV} (api_key_env) is not set" in lines[1]
    assert "OPENAI_API_KEY is not set" in lines[2]
    assert "does not accept a connection" in lines[3] and closed_port_base in lines[3]
    assert "--no-preflight" in err and "internal error" not in err
    assert sessions(tmp_path) == []
    print(f"preflight of 5 debaters took {elapsed:.2f} s")


def test_a_reachable_server_with_its_key_set_passes(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-key")
    spec = validate_spec(
        {
            "debate": {"title": "t", "motion": "m"},
            "debaters": [
                {"id": "a", "model": "openai/fake", "api_base": fake.base_url},
                {
                    "id": "b",
                    "model": "openai/fake",
                    "api_base": [fake.base_url],
                    "api_key_env": KEY_ENV,
                },
                {"id": "c", "model": "scripted"},
            ],
        }
    )
    assert preflight(spec) == []
    assert fake.calls == 0  # a connection is opened, no request is sent


def test_no_preflight_skips_the_checks(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    spec = spec_file(
        tmp_path, {"model": "openai/fake", "api_base": fake.base_url, "api_key_env": KEY_ENV}
    )
    assert run(tmp_path, spec) == ExitCode.BAD_INPUT and sessions(tmp_path) == []
    # Skipped: the session starts, and the missing key ends it unresolved on record.
    assert run(tmp_path, spec, "--no-preflight") == ExitCode.UNRESOLVED
    assert len(sessions(tmp_path)) == 1


def test_local_needs_its_model_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere.gguf"
    monkeypatch.setenv("MOOT_LOCAL_GGUF", str(missing))
    spec = validate_spec(
        {
            "debate": {"title": "t", "motion": "m"},
            "debaters": [{"id": "a", "model": "local"}, {"id": "b", "model": "scripted"}],
        }
    )
    problems = preflight(spec)
    assert len(problems) == 1 and problems[0].startswith("a: ") and str(missing) in problems[0]


@pytest.mark.parametrize(
    "case",
    [
        "sessions-dir is a file",
        "under a file",
        "out is a folder",
        "out exists",
        "sessions-dir is a dangling symlink",
        "out under a dangling symlink",
    ],
)
def test_an_unusable_session_path_is_named_with_its_reason(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = spec_file(tmp_path, {"model": "scripted"}, {"model": "scripted"})
    blocker = tmp_path / "plain-file"
    blocker.write_text("not a folder")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    dangling = tmp_path / "gone-link"
    dangling.symlink_to(tmp_path / "gone")
    args, named, reason = {
        "sessions-dir is a file": (["--sessions-dir", str(blocker)], blocker, "not a folder"),
        "under a file": (["--out", str(blocker / "x.toml")], blocker, "not a folder"),
        "out is a folder": (["--out", str(folder)], folder, "is a folder"),
        "out exists": (["--out", str(blocker)], blocker, "already exists"),
        "sessions-dir is a dangling symlink": (
            ["--sessions-dir", str(dangling)],
            dangling,
            "is a symlink to a missing folder",
        ),
        "out under a dangling symlink": (
            ["--out", str(dangling / "x.toml")],
            dangling,
            "is a symlink to a missing folder",
        ),
    }[case]
    code = main(["run", str(spec), "--headless", *args])
    err = capsys.readouterr().err
    assert code == ExitCode.BAD_INPUT
    assert str(named) in err and reason in err and "internal error" not in err
    assert blocker.read_text() == "not a folder" and list(folder.iterdir()) == []
    assert not (tmp_path / "gone").exists()


def test_ollama_without_api_base_is_refused_when_its_server_does_not_answer(
    tmp_path: Path,
    refused_base: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No api_base: LiteLLM calls ollama at OLLAMA_API_BASE (else localhost:11434), so
    that server is the one to reach before the session starts."""
    base = refused_base
    monkeypatch.setenv("OLLAMA_API_BASE", base)
    spec = spec_file(tmp_path, {"model": "ollama/llama3"}, {"model": "scripted"})
    assert run(tmp_path, spec) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    lines = [line.strip() for line in err.splitlines() if line.startswith("  - ")]
    assert len(lines) == 1 and lines[0].startswith("- d1: ")
    assert base in lines[0] and "does not accept a connection" in lines[0]
    assert "api_base" in lines[0] and "OLLAMA_API_BASE" in lines[0]
    assert sessions(tmp_path) == []


@pytest.mark.parametrize("debater", ["default variable", "api_key_env"])
def test_a_key_variable_set_but_empty_is_refused_like_a_missing_one(
    tmp_path: Path,
    debater: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    variable = "OPENAI_API_KEY" if debater == "default variable" else KEY_ENV
    monkeypatch.setenv(variable, "")
    fields = {"model": "gpt-4o"} if debater == "default variable" else {"api_key_env": KEY_ENV}
    spec = spec_file(tmp_path, {"model": "openai/gpt-4o", **fields})
    assert run(tmp_path, spec) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    lines = [line.strip() for line in err.splitlines() if line.startswith("  - ")]
    assert len(lines) == 1 and variable in lines[0] and "empty" in lines[0]
    assert sessions(tmp_path) == []


def test_a_bad_key_variable_is_refused_before_litellm_is_imported(tmp_path: Path) -> None:
    """Importing LiteLLM takes seconds: a refusal the environment alone decides needs none."""
    spec = spec_file(
        tmp_path,
        {"model": "openai/gpt-4o", "api_key_env": KEY_ENV},
        {"model": "anthropic/claude-3-5-sonnet", "api_key_env": KEY_ENV + "_EMPTY"},
        {"model": "openai/gpt-4o"},  # the provider's own variable, known without LiteLLM
    )
    probe = (
        "import json, sys\n"
        "from tui.cli import main\n"
        f"code = main(['run', {str(spec)!r}, '--headless', '--sessions-dir', "
        f"{str(tmp_path / 's')!r}])\n"
        "print(json.dumps([int(code), 'litellm' in sys.modules]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, "OPENAI_API_KEY")}
    env[KEY_ENV + "_EMPTY"] = ""
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env
    )
    code, imported = json.loads(out.stdout.strip().splitlines()[-1])
    assert code == ExitCode.BAD_INPUT and KEY_ENV in out.stderr
    assert "d3: OPENAI_API_KEY is not set" in out.stderr
    assert imported is False
    assert sessions(tmp_path) == []
