"""The seam's error classes: codes, keyword details and pickling (fsseam.seam.errors)."""

from __future__ import annotations

import pickle

import pytest

from fsseam.seam import (
    FsError,
    FsErrorCode,
    FsMoveIncomplete,
    FsNotFound,
    FsStaleVersion,
    FsVersion,
    errors,
)


def test_every_code_builds_its_own_subclass_with_that_default_code() -> None:
    for code in FsErrorCode:
        made = FsError("x", code)
        assert type(made) is not FsError
        assert type(made).default_code is code
        assert type(made)("y").code is code


def test_error_details_default_to_none_and_are_set_by_keyword() -> None:
    assert FsStaleVersion("plain").change is None
    assert FsStaleVersion("plain").current_version is None
    moved = FsMoveIncomplete("half", "FS_IO_ERROR", version=FsVersion("v2"))
    assert (moved.code, moved.version, moved.replaced_version) == (
        FsErrorCode.FS_IO_ERROR,
        FsVersion("v2"),
        None,
    )


def test_error_refuses_a_detail_its_class_does_not_carry() -> None:
    with pytest.raises(TypeError, match=r"FsStaleVersion.*\['version'\].*change, current_version"):
        FsStaleVersion("x", version=FsVersion("v"))
    with pytest.raises(TypeError, match=r"FsNotFound.*allowed: none"):
        FsNotFound("x", change="diff")


def test_move_incomplete_needs_the_code_of_what_stopped_it() -> None:
    with pytest.raises(TypeError, match="needs a code"):
        FsMoveIncomplete("half")


@pytest.mark.parametrize(
    "exc",
    [
        FsNotFound("gone"),
        FsError("no", FsErrorCode.FS_SANDBOX_DENIED),
        FsStaleVersion("moved", change="@@ -1 +1 @@\n-a\n+b\n", current_version=FsVersion("v2")),
        FsMoveIncomplete(
            "half", "FS_STALE_VERSION", version=FsVersion("d1"), replaced_version=FsVersion("d0")
        ),
    ],
    ids=["not-found", "by-code", "stale", "move-incomplete"],
)
def test_errors_pickle_with_class_code_message_and_details(exc: FsError) -> None:
    exc.add_note("while testing")
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is type(exc)
    assert (back.message, back.code, str(back)) == (exc.message, exc.code, str(exc))
    assert back.__notes__ == ["while testing"]
    for name in type(exc)._details:
        assert getattr(back, name) == getattr(exc, name)


def test_public_error_classes_are_documented() -> None:
    for name in errors.__all__:
        assert (getattr(errors, name).__doc__ or "").strip(), name
