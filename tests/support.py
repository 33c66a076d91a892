"""The tool-level tests' helpers, which now ship in :mod:`fsseam.testing.harness`."""

from fsseam.testing.harness import DelegatingFileSystem, Harness, Session, make_context

__all__ = ["DelegatingFileSystem", "Harness", "Session", "make_context"]
