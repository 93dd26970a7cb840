"""The documentation matches the code: validation tables are current, links resolve."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_validation_doc_is_current():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_validation", ROOT / "docs" / "tools" / "build_validation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "docs" / "validation.md").read_text() == mod.build(), "run `make docs`"


def test_relative_links_resolve():
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    broken = []
    for f in files:
        for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", f.read_text()):
            if not (f.parent / target).exists():
                broken.append(f"{f.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_readme_starts_with_the_two_commands():
    lines = [l for l in (ROOT / "README.md").read_text().splitlines() if l.strip()]
    block = lines[lines.index("```sh") + 1: lines.index("```sh") + 3]
    assert block[0].startswith("make demo") and block[1].startswith("make test")
    assert lines.index("```sh") <= 2


def test_technology_doc_is_current():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_technology", ROOT / "docs" / "tools" / "build_technology.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "docs" / "technology.md").read_text() == mod.build(), "run `make docs`"
