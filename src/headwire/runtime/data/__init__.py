"""The package's data files: the scripted model's built-in scripts, the price table, the
settings schema.  :func:`read_data` reads one as a plain file next to this module (no
``importlib.resources``, which would bring ``tempfile``, ``bz2`` and ``lzma`` into every run)."""

from pathlib import Path

_HERE = Path(__file__).parent


def read_data(name: str) -> str:
    """The text (UTF-8) of the data file ``name`` of this folder."""
    return (_HERE / name).read_text(encoding="utf-8")


__all__ = ["read_data"]
