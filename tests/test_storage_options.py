"""Storage options: a misspelt or unknown one is refused when the store is opened, naming the
closest valid one, on every store; the options the stores really take still pass."""

from __future__ import annotations

from typing import Any

import fsspec
import pytest

from fsseam import open_fs
from fsseam.backends.options import (
    UnknownStorageOption,
    check_storage_options,
    valid_storage_options,
)

STORES = {
    "memory": "memory://options-ws",
    "s3": "s3://bucket/ws",
    "gs": "gs://bucket/ws",
    "az": "az://container/ws",
}


@pytest.mark.parametrize(
    ("url", "typo", "meant"),
    [
        ("s3://bucket/ws", "endpoint_ur", "endpoint_url"),
        ("s3://bucket/ws", "Endpoint_URL", "endpoint_url"),
        ("s3://bucket/ws", "profil", "profile"),  # aiobotocore's session takes it
        ("gs://bucket/ws", "projcet", "project"),
        ("gs://bucket/ws", "tokne", "token"),
        ("az://container/ws", "conection_string", "connection_string"),
        ("az://container/ws", "account_nmae", "account_name"),
        ("memory://options-ws", "use_listing_cache", "use_listings_cache"),
    ],
)
def test_misspelt_option_names_the_closest_valid_one(url: str, typo: str, meant: str) -> None:
    with pytest.raises(UnknownStorageOption) as caught:
        open_fs(url, **{typo: "x"})
    assert caught.value.option == typo
    assert caught.value.suggestion == meant
    assert f"unknown storage option {typo!r}" in str(caught.value)
    assert f"did you mean {meant!r}?" in str(caught.value)
    assert isinstance(caught.value, TypeError)  # like any unexpected keyword argument


@pytest.mark.parametrize("url", [".", "file:///tmp", "/tmp"])
def test_local_disk_takes_no_storage_options(url: str) -> None:
    with pytest.raises(UnknownStorageOption, match="local disk takes no storage options"):
        open_fs(url, anon=True)
    open_fs(url)  # and nothing at all is fine


def test_an_option_far_from_every_valid_one_lists_them_all() -> None:
    with pytest.raises(UnknownStorageOption) as caught:
        open_fs("memory://options-ws", zzzz=1)
    assert caught.value.suggestion is None
    assert "valid options: global_store, listings_expiry_time, max_paths" in str(caught.value)


@pytest.mark.parametrize(
    ("url", "options"),
    [
        ("s3://bucket/ws", {"endpoint_url": "http://127.0.0.1:1", "key": "k", "secret": "s",
                            "anon": False, "client_kwargs": {}, "profile": "default",
                            "use_listings_cache": False, "skip_instance_cache": True}),
        ("gs://bucket/ws", {"endpoint_url": "http://127.0.0.1:1", "token": "anon",
                            "project": "test", "requests_timeout": 5}),
        ("az://container/ws", {"connection_string": "x", "account_name": "a",
                               "exclude_cli_credential": True, "timeout": 5}),
        ("memory://options-ws", {"use_listings_cache": False}),
    ],
)  # fmt: skip
def test_options_the_store_takes_pass(url: str, options: dict[str, Any]) -> None:
    check_storage_options(url, options)


@pytest.mark.parametrize("protocol", sorted(STORES))
def test_every_named_constructor_parameter_is_valid(protocol: str) -> None:
    cls = fsspec.get_filesystem_class(protocol)
    valid = valid_storage_options(protocol)
    assert valid is not None
    import inspect

    named = {
        name
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name != "self"
    }
    assert named <= valid


class _ForwardsSomewhereUnknown(fsspec.AbstractFileSystem):
    protocol = "fsseam-options-test"

    def __init__(self, *args: Any, **client_options: Any) -> None:
        super().__init__()
        self.client_options = client_options


def test_a_store_forwarding_options_somewhere_unknown_is_not_checked() -> None:
    fsspec.register_implementation("fsseam-options-test", _ForwardsSomewhereUnknown, clobber=True)
    assert valid_storage_options("fsseam-options-test") is None
    check_storage_options("fsseam-options-test://x", {"anything": 1})
