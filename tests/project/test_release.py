"""Release hygiene: the licence a scanner finds, the version written in one place and
shown by ``moot --version``, and a CHANGELOG with one section for what is not released."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.version import Version

from tests.conftest import REPO

MOOT = Path(sys.executable).parent / "moot"


def _project() -> dict[str, str]:
    with (REPO / "pyproject.toml").open("rb") as f:
        project: dict[str, str] = tomllib.load(f)["project"]
    return project


def _changelog_headings() -> list[str]:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.findall(r"^## (.+)$", text, flags=re.MULTILINE)


def test_the_licence_file_is_the_mit_licence_pyproject_declares() -> None:
    assert _project()["license"] == "MIT"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) " in text and "the moot developers" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_moot_version_prints_the_version_pyproject_declares() -> None:
    done = subprocess.run(
        [str(MOOT), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == f"moot {_project()['version']}\n"


def test_the_version_is_written_only_in_pyproject() -> None:
    """No module of the package spells a version: it is read from the installed metadata."""
    literal = re.compile(r"""__version__\s*=\s*["']""")
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "tui").rglob("*.py")
        if literal.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_changelog_has_one_unreleased_section_above_the_releases() -> None:
    headings = _changelog_headings()
    assert headings[0] == "Unreleased"
    assert [h for h in headings if "unreleased" in h.lower()] == ["Unreleased"]
    released = [Version(h) for h in headings[1:]]  # each release heading is its version
    assert released == sorted(released, reverse=True)
    version = Version(_project()["version"])
    assert version.is_prerelease, "what is not released yet is a development version"
    assert version > released[0], "the version in progress is newer than the last release"
