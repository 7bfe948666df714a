"""MkDocs hook: the pages written from the code at every build (the spec reference from
the spec's models, the command reference from the argparse definitions), so they cannot
drift. MkDocs puts this folder on the path while it loads the hook."""

from __future__ import annotations

from typing import Any

from command_reference import command_reference
from mkdocs.structure.files import File, Files
from spec_reference import spec_reference

GENERATED = {"reference/spec.md": spec_reference, "reference/commands.md": command_reference}


def on_files(files: Files, config: Any) -> Files:
    for uri, page in GENERATED.items():
        files.append(File.generated(config, uri, content=page()))
    return files
