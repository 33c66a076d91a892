"""How one store request failed, read once per SDK and mapped once for every store.

A cloud dialect's error boundary (:func:`boundary`) reads its SDK's exception
into a :class:`Failure` (what kind of failure, the cause, the HTTP status);
:func:`translate` turns that into what the caller sees, the same way for S3,
GCS and Azure:

- in a *guarded* request (a conditional write or delete, a pinned read): a
  refused precondition, or a missing object where the request names a
  version (*pinned*: ``If-Match``, ``ifGenerationMatch=N``), is
  :class:`GuardRefused`; a failure after which the request may have been
  applied (no answer, a 5xx, 408, 429) is :class:`OutcomeUnknown`;
- otherwise, and for every other kind: ``FS_NOT_FOUND`` (object or bucket),
  ``FS_PERMISSION_DENIED`` or ``FS_IO_ERROR``, worded by :mod:`.messages`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from fsseam.backends.dialects import messages
from fsseam.seam import FsError

__all__ = [
    "Failure",
    "GuardRefused",
    "Outcome",
    "OutcomeUnknown",
    "Wording",
    "boundary",
    "translate",
]


class GuardRefused(Exception):
    """Outcome of ``_send``, ``_send_delete``: the store refused the precondition (no change...

    ...unless an SDK retry of a request that had landed met its own precondition:
    :func:`~.base.settle` tells by the token, :func:`~.base.settle_delete` by ``retried``).
    """

    def __init__(
        self,
        *args: object,
        retried: bool = False,
        status: int | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(*args)
        self.retried = retried
        """True when the refusal answered a retry: an earlier attempt may have been applied."""
        self.status = status
        """The HTTP status of the refusal (412; 404 for a version that is gone)."""
        self.retryable = retryable
        """The store asks for the request again (S3's 409 ConditionalRequestConflict)."""


class OutcomeUnknown(Exception):
    """Outcome of ``_send``: the write may or may not have landed (5xx, timeout, reset).

    ``error`` is what the caller gets when the token shows it did not land
    while the guard still holds.
    """

    def __init__(self, error: FsError, *, status: int | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.status = status
        """The HTTP status, when the store answered one (5xx)."""


Outcome = GuardRefused | OutcomeUnknown
"""What a refused or unknown request ended in, for ``settle`` and ``settle_delete``."""

Kind = Literal["refused", "conflict", "missing", "no_bucket", "denied", "unreachable", "failed"]


@dataclass(frozen=True, slots=True)
class Failure:
    """What a failed store request said, as a dialect reads it from its SDK's exception."""

    kind: Kind
    """``refused`` (a precondition failed), ``conflict`` (a precondition to retry),
    ``missing`` (the object), ``no_bucket``, ``denied``, ``unreachable`` (no
    answer) or ``failed`` (any other)."""
    cause: str
    """What the store said, for the message (``NoSuchKey (404): ...``, ``HTTP 503``)."""
    status: int | None = None
    """The HTTP status; ``None`` when no answer was read."""


@dataclass(frozen=True, slots=True)
class Wording:
    """How one store is named in its failures.

    ``store`` (``S3``, ``Azure Blob Storage``), what to check when access is
    denied (``credentials``), where it was reached (``endpoint``), what it
    calls a bucket, and the request's ``action`` (``write``), if it says one.
    """

    store: str
    credentials: str
    endpoint: str
    bucket: str = "bucket"
    action: str = ""


def translate(
    url: str, wording: Wording, failure: Failure, *, guarded: bool, pinned: bool = False
) -> BaseException:
    """The one mapping from a failed request on ``url`` to the exception to raise."""
    store = f"{wording.store} {wording.action}".rstrip()
    if guarded and (
        failure.kind in ("refused", "conflict") or (pinned and failure.kind == "missing")
    ):
        return GuardRefused(
            failure.cause, status=failure.status, retryable=failure.kind == "conflict"
        )
    if failure.kind == "no_bucket":
        return messages.missing_bucket(url, wording.bucket)
    if failure.kind == "missing":
        return messages.not_found(url)
    if failure.kind == "denied":
        return messages.denied(url, store, failure.cause, wording.credentials)
    if failure.kind == "unreachable":
        where = f"{wording.store} at {wording.endpoint}"
        error = messages.unreachable(url, where, failure.cause, "the network and the endpoint")
    else:
        error = messages.failed(url, store, failure.cause)
    status = failure.status
    if guarded and (status is None or status >= 500 or status in (408, 429)):
        return OutcomeUnknown(error, status=status)  # the request may have been applied
    return error


@contextmanager
def boundary(
    url: str,
    wording: Wording,
    read: Callable[[Exception], Failure],
    *,
    guarded: bool = False,
    pinned: bool = False,
) -> Iterator[None]:
    """A dialect's single error boundary: foreign exceptions inside become :func:`translate`'s.

    ``read`` is the dialect's reading of its SDK's exceptions.
    """
    try:
        yield
    except (FsError, GuardRefused, OutcomeUnknown):
        raise
    except Exception as exc:  # SDKs also raise ValueError / TypeError on odd answers
        raise translate(url, wording, read(exc), guarded=guarded, pinned=pinned) from exc
