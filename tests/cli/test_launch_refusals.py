"""The console refuses what it cannot do well, with the way round, before it starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import sequential_raw
from tui.cli import main
from tui.exitcodes import ExitCode


def _spec(tmp_path: Path) -> Path:
    import tomli_w

    path = tmp_path / "spec.toml"
    path.write_text(
        tomli_w.dumps(sequential_raw(consensus_threshold=3, turn_delay_ms=0)), encoding="utf-8"
    )
    return path


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["run", "{spec}"], "moot run {spec} --headless"),
        ([], "moot run SPEC --headless"),
    ],
)
def test_term_dumb_refuses_the_console_and_names_headless(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    hint: str,
) -> None:
    spec = str(_spec(tmp_path))
    monkeypatch.setenv("TERM", "dumb")
    assert main([a.format(spec=spec) for a in argv]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "TERM=dumb" in err and hint.format(spec=spec) in err
    assert not list(tmp_path.glob("sessions/*.toml"))


@pytest.mark.parametrize("where", ["before", "after"])
def test_an_unknown_theme_is_refused_listing_the_themes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    spec = str(_spec(tmp_path))
    argv = ["--theme", "nonsense", "run", spec]
    if where == "after":
        argv = ["run", spec, "--theme", "nonsense"]
    assert main(argv) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "unknown theme 'nonsense'" in err
    for name in ("dark", "light", "high-contrast", "textual-dark"):
        assert name in err


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "{spec}", "--headless", "--theme", "nope", "--out", "{out}"],
        ["--theme", "nope", "run", "{spec}", "--headless", "--out", "{out}"],
        ["--theme", "nope", "validate", "{spec}"],
    ],
)
def test_an_unknown_theme_is_refused_where_no_console_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """--headless and validate took --theme nope silently: a typo in a script went unseen."""
    spec, out = str(_spec(tmp_path)), str(tmp_path / "out.toml")
    assert main([a.format(spec=spec, out=out) for a in argv]) == ExitCode.BAD_INPUT
    assert "unknown theme 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "out.toml").exists()
