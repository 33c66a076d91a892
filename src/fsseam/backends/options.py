"""Storage options: refuse an unknown or misspelt one when the store is opened.

fsspec passes keyword arguments it does not know along the constructor chain:
to its listings cache, which ignores them; to aiobotocore's session (s3fs),
which fails on the first request with an error about something else; to
azure-identity (adlfs), which ignores them. So ``-o endpoint_ur=…`` surfaced
late, as an I/O error, or never (local disk ignored every option).
:func:`check_storage_options` names the option and the closest valid one
instead, before anything is opened.

The valid names of a store are read from its fsspec class: every named
parameter of every ``__init__`` on its MRO, plus the names the known
forwarding targets take (fsspec's listings cache, aiobotocore's session,
gcsfs' ``retry_*`` settings, azure-identity's ``DefaultAzureCredential``). A
third-party class that takes ``**kwargs`` and hands them somewhere fsseam does
not know is not checked: refusing an option it may use would be worse.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any

import fsspec

__all__ = ["UnknownStorageOption", "check_storage_options", "valid_storage_options"]


class UnknownStorageOption(TypeError):
    """A storage option the store does not take (a ``TypeError``, as for any bad keyword)."""

    def __init__(self, message: str, option: str, suggestion: str | None) -> None:
        super().__init__(message)
        self.option = option
        """The option given."""
        self.suggestion = suggestion
        """The closest valid option, if one is close."""


def _dircache_names() -> set[str]:
    from fsspec.dircache import DirCache

    # skip_instance_cache is popped by fsspec's instance-caching metaclass.
    return _named_parameters(DirCache.__init__) | {"skip_instance_cache"}


def _aiobotocore_session_names() -> set[str]:
    # s3fs hands its leftover keyword arguments to AioSession(**kwargs).
    session = importlib.import_module("aiobotocore.session")
    return _named_parameters(session.AioSession.__init__)


def _gcsfs_retry_names() -> set[str]:
    retry = importlib.import_module("gcsfs.retry")
    config: Mapping[str, Any] = getattr(retry, "DEFAULT_RETRY_CONFIG", {})
    return {f"retry_{key}" for key in config} | {"memmove_max_workers"}


def _azure_credential_names() -> set[str]:
    # adlfs hands its leftover keyword arguments to DefaultAzureCredential(**kwargs),
    # whose options are documented only as ":keyword type name:" docstring lines.
    identity = importlib.import_module("azure.identity")
    credential = identity.DefaultAzureCredential
    doc = (credential.__doc__ or "") + (credential.__init__.__doc__ or "")
    return set(re.findall(r":keyword (?:[^:\n]*? )?(\w+):", doc))


def _nothing() -> set[str]:
    return set()


# Where the ``**kwargs`` of each known ``__init__`` end up: the names they may hold.
_FORWARDS: dict[str, Callable[[], set[str]]] = {
    "fsspec.spec.AbstractFileSystem": _dircache_names,
    "fsspec.asyn.AsyncFileSystem": _nothing,
    "fsspec.implementations.local.LocalFileSystem": _nothing,
    "fsspec.implementations.memory.MemoryFileSystem": _nothing,
    "s3fs.core.S3FileSystem": _aiobotocore_session_names,
    "gcsfs.core.GCSFileSystem": _nothing,
    "gcsfs.extended_gcsfs.ExtendedGcsFileSystem": _gcsfs_retry_names,
    "adlfs.spec.AzureBlobFileSystem": _azure_credential_names,
}


def _named_parameters(function: Callable[..., Any]) -> set[str]:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return set()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name for p in parameters if p.kind in named and p.name != "self"}


def _takes_var_keyword(function: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _class_options(cls: type) -> frozenset[str] | None:
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        names |= _named_parameters(init)
        if not _takes_var_keyword(init):
            continue
        forward = _FORWARDS.get(f"{klass.__module__}.{klass.__qualname__}")
        if forward is None:
            return None
        # A forwarding target that is not installed cannot take anything either.
        with contextlib.suppress(ImportError):
            names |= forward()
    return frozenset(names)


@cache
def valid_storage_options(protocol: str | None) -> frozenset[str] | None:
    """The storage option names ``protocol``'s store takes (``None``: local disk).

    Local disk takes none (:func:`~fsseam.backends.open_fs` mounts it without
    options). Returns ``None`` when the names cannot be known: the protocol's
    package is missing, or its class hands ``**kwargs`` somewhere unknown.
    """
    if protocol is None:
        return frozenset()
    try:
        cls = fsspec.get_filesystem_class(protocol)
    except (ImportError, ValueError):
        return None
    return _class_options(cls)


def _protocol(url_or_path: str) -> str | None:
    if "://" not in url_or_path or url_or_path.startswith("file://"):
        return None
    return url_or_path.split("://", 1)[0]


def _store_name(protocol: str | None) -> str:
    return "local disk" if protocol is None else f"{protocol}://"


def _closest(option: str, valid: Iterable[str]) -> str | None:
    candidates = sorted(valid)
    lowered = {name.lower(): name for name in candidates}
    if option.lower() in lowered:  # Endpoint_URL
        return lowered[option.lower()]
    matches = difflib.get_close_matches(option, candidates, n=1, cutoff=0.6)
    return matches[0] if matches else None


def check_storage_options(url_or_path: str, options: Mapping[str, Any]) -> None:
    """Raise :class:`UnknownStorageOption` for the first option the store does not take.

    The message names the option, the store and the closest valid option (or,
    when none is close, every valid one). Stores whose options cannot be known
    (see :func:`valid_storage_options`) are not checked.
    """
    if not options:
        return
    protocol = _protocol(url_or_path)
    valid = valid_storage_options(protocol)
    if valid is None:
        return
    store = _store_name(protocol)
    for option in options:
        if option in valid:
            continue
        if not valid:  # local disk: open_fs mounts it without options
            raise UnknownStorageOption(
                f"unknown storage option {option!r}: local disk takes no storage options",
                option,
                None,
            )
        suggestion = _closest(option, valid)
        hint = (
            f"did you mean {suggestion!r}?"
            if suggestion is not None
            else "valid options: " + ", ".join(sorted(valid))
        )
        raise UnknownStorageOption(
            f"unknown storage option {option!r} for {store} ({hint})", option, suggestion
        )
