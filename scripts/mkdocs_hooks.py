"""MkDocs hooks (mkdocs.yml): SPEC.md, kept at the root of the repository, becomes the
site's page ``spec.md``, its links to ``docs/...`` made relative to the site."""

from __future__ import annotations

import pathlib
from typing import Any

from mkdocs.structure.files import File, Files

SPEC = pathlib.Path(__file__).resolve().parent.parent / "SPEC.md"


def on_files(files: Files, config: Any) -> Files:
    text = SPEC.read_text(encoding="utf-8").replace("](docs/", "](")
    files.append(File.generated(config, "spec.md", content=text))
    return files
