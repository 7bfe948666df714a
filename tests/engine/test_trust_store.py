"""The keys you trust: a trust store others can write is not used, and no other key reads
as your own (names that say "you" are refused, and your key is marked by fingerprint)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui.cli import main
from tui.engine.record.keys import owner, trust_path, trusted_keys, user_signer
from tui.exitcodes import ExitCode

EXAMPLE = Path(__file__).resolve().parents[2] / "sessions" / "examples" / "scripted-consensus.toml"


@pytest.fixture
def stranger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """Another user's public key file, and a session file they signed."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOOT_CONFIG_DIR", str(tmp_path / "stranger"))
        assert main(["keys", "show"]) == ExitCode.DECIDED
        public = tmp_path / "att.pub"
        public.write_text(capsys.readouterr().out, "utf-8")
        session = tmp_path / "theirs.toml"
        assert main(["run", str(EXAMPLE), "--headless", "--out", str(session)]) == 0
    capsys.readouterr()
    return public, session


def test_a_trust_store_others_can_write_is_not_used(
    stranger: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    public, _ = stranger
    user_signer()
    assert main(["keys", "trust", str(public), "--name", "att"]) == ExitCode.DECIDED
    assert [k.name for k in trusted_keys()[0]] == ["you", "att"]
    os.chmod(trust_path(), 0o666)
    keys, problems = trusted_keys()
    assert [k.name for k in keys] == ["you"]  # the file's keys are not trusted
    assert len(problems) == 1 and "chmod 644" in problems[0] and "0666" in problems[0]
    capsys.readouterr()
    assert main(["keys", "list"]) == ExitCode.DECIDED
    shown = capsys.readouterr()
    assert "att" not in shown.out and "chmod 644" in shown.err
    assert main(["keys", "untrust", "att"]) == ExitCode.BAD_INPUT  # nor rewritten
    assert "chmod 644" in capsys.readouterr().err
    os.chmod(trust_path(), 0o644)
    assert [k.name for k in trusted_keys()[0]] == ["you", "att"]


@pytest.mark.parametrize("name", ["you", "YOU", "your key", "(your key)", "Yours", "me", "owner"])
def test_a_name_that_reads_as_your_own_key_is_refused(
    name: str, stranger: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    public, _ = stranger
    name = owner() if name == "owner" else name
    assert main(["keys", "trust", str(public), "--name", name]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "your own key" in err and "--name" in err and "Traceback" not in err
    assert not trust_path().exists()


def test_a_key_file_naming_itself_you_needs_another_name(
    stranger: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    public, _ = stranger
    line = public.read_text("utf-8").split()
    public.write_text(f"{line[0]} {line[1]} you\n", "utf-8")
    assert main(["keys", "trust", str(public)]) == ExitCode.BAD_INPUT
    assert "your own key" in capsys.readouterr().err
    assert main(["keys", "trust", str(public), "--name", "att"]) == ExitCode.DECIDED


def test_only_your_own_signing_key_shows_as_yours(
    stranger: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A trust file edited by hand to name a stranger "you": still not your key."""
    public, session = stranger
    mine = user_signer()
    line = public.read_text("utf-8").split()
    trust_path().write_text(f"{line[0]} {line[1]} you\n", "utf-8")
    os.chmod(trust_path(), 0o600)
    assert main(["verify", str(session)]) == ExitCode.DECIDED
    shown = capsys.readouterr()
    assert "(your key)" not in shown.out and "a key you trust" in shown.out
    assert main(["keys", "list"]) == ExitCode.DECIDED
    listed = capsys.readouterr()
    yours = [x for x in listed.out.splitlines() if "(your key)" in x]
    assert len(yours) == 1 and yours[0].startswith(mine.fingerprint)
    assert "reads as your own key" in listed.err


def test_trusting_a_trusted_key_again_with_another_name_renames_it(
    stranger: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    public, _ = stranger
    user_signer()
    assert main(["keys", "trust", str(public), "--name", "alice"]) == ExitCode.DECIDED
    capsys.readouterr()
    assert main(["keys", "trust", str(public), "--name", "alice2"]) == ExitCode.DECIDED
    assert "as 'alice2' (was 'alice')" in capsys.readouterr().out
    assert [k.name for k in trusted_keys()[0]] == ["you", "alice2"]
    assert main(["keys", "trust", str(public)]) == ExitCode.DECIDED  # no name: kept
    assert "already trusted as 'alice2'" in capsys.readouterr().out
    assert [k.name for k in trusted_keys()[0]] == ["you", "alice2"]
