"""Where things are, for tests anywhere in the tree."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SRC = ROOT / "src"
PACKAGE = SRC / "headwire"
DATA = TESTS / "data"
VECTORS = TESTS / "vectors"
FAKES = TESTS / "fakes"
