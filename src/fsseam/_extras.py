"""The error for an optional dependency that is not installed, worded the same everywhere."""

from __future__ import annotations

__all__ = ["missing_extra"]


def missing_extra(what: str, package: str, extra: str, cause: ImportError) -> ImportError:
    """``{what} needs {package}: pip install "fsseam[{extra}]" ({cause})``, to raise from ``cause``.

    Each SDK is imported in its own module only; that module raises this
    when the import fails, so the user sees which extra installs it.
    """
    return ImportError(f'{what} needs {package}: pip install "fsseam[{extra}]" ({cause})')
