"""Build docs/fitting.md from the registry of fitted constants (archmodels/fitted.py); runs every fit."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

if __name__ == "__main__":
    from archmodels import fitted

    (ROOT / "docs" / "fitting.md").write_text(fitted.markdown() + "\n")
    print("wrote docs/fitting.md")
