"""One dialect per store family; :func:`dialect_for` picks it from an fsspec instance.

Cloud dialects are imported lazily so their SDKs stay optional.
"""

from __future__ import annotations

import importlib
from typing import Any

from fsseam.backends.dialects.base import Dialect, GuardedDialect, protocols
from fsseam.backends.dialects.generic import GenericDialect
from fsseam.backends.dialects.local import LocalDialect
from fsseam.backends.dialects.objects import ObjectStoreDialect

__all__ = [
    "Dialect",
    "GenericDialect",
    "GuardedDialect",
    "LocalDialect",
    "ObjectStoreDialect",
    "dialect_class",
    "dialect_for",
    "dialect_type",
    "protocols",
]

# protocol -> (module, class); modules import their SDK at top level.
_CLOUD: dict[str, tuple[str, str]] = {
    "s3": ("fsseam.backends.dialects.s3", "S3Dialect"),
    "s3a": ("fsseam.backends.dialects.s3", "S3Dialect"),
    "gs": ("fsseam.backends.dialects.gcs", "GCSDialect"),
    "gcs": ("fsseam.backends.dialects.gcs", "GCSDialect"),
    "az": ("fsseam.backends.dialects.azure", "AzureDialect"),
    "abfs": ("fsseam.backends.dialects.azure", "AzureDialect"),
    "abfss": ("fsseam.backends.dialects.azure", "AzureDialect"),
}


def dialect_class(protocol: str) -> type[Dialect] | None:
    """The cloud dialect class for ``protocol``, or ``None``."""
    spec = _CLOUD.get(protocol)
    if spec is None:
        return None
    try:
        module = importlib.import_module(spec[0])
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.startswith("fsseam"):
            return None  # dialect not built for this store: the generic one serves
        raise
    cls: type[Dialect] = getattr(module, spec[1])
    return cls


def dialect_type(fs: Any) -> type[Dialect]:
    """The dialect class serving ``fs``: local, a cloud one, or generic."""
    names = protocols(fs)
    if "file" in names or "local" in names:
        return LocalDialect
    for name in names:
        cls = dialect_class(name)
        if cls is not None:
            return cls
    return GenericDialect


def dialect_for(fs: Any, root: str | None = None) -> Dialect:
    """The dialect serving ``fs``: local, a cloud one, or generic.

    ``root`` is the workspace root as a store path (``Dialect.root``).
    """
    return dialect_type(fs)(fs, root)
