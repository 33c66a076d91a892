"""An edit that starts from the content cache keeps the object's attributes, as one that reads.

A replace is a whole-object PUT / upload: the dialect carries over
Content-Type, Cache-Control and user metadata from the version the write is
based on. After the session's own edit, the next edit sends no GET (its
basis is cached), so the dialect must know the attributes of the version it
just wrote, not only of versions it read.
"""

from __future__ import annotations

import pytest

from fsseam.backends import FsspecFileSystem
from fsseam.seam import FsEditRequest
from fsseam.testing._support import run
from fsseam.testing._worker import read_versioned
from fsseam.testing.emulators.azure import AzuriteServer


async def edit_twice(fs: FsspecFileSystem, name: str) -> None:
    """Read ``name``, then two edits in a row: the second starts from the content cache."""
    target = await fs.resolve(name)
    _, seen = await read_versioned(fs, target)
    first = await fs.edit_text(target, FsEditRequest("one", "1"), seen)
    await fs.edit_text(target, FsEditRequest("two", "2"), first.version)


@pytest.mark.s3
def test_s3_two_cached_edits_keep_content_type_and_user_metadata(
    s3_fs: FsspecFileSystem,
) -> None:
    bucket = s3_fs.root.removeprefix("s3://")
    s3_fs.fs.call_s3(
        "put_object",
        Bucket=bucket,
        Key="index.html",
        Body=b"<p>one two</p>\n",
        ContentType="text/plain; charset=utf-8",
        Metadata={"owner": "web"},
    )

    run(edit_twice(s3_fs, "index.html"))
    stored = s3_fs.fs.call_s3("head_object", Bucket=bucket, Key="index.html")
    assert stored["ContentType"] == "text/plain; charset=utf-8"
    assert stored["Metadata"]["owner"] == "web"


@pytest.mark.gcs
def test_gcs_two_cached_edits_keep_the_attributes(gcs_fs: FsspecFileSystem) -> None:
    path = gcs_fs.root.removeprefix("gs://").rstrip("/") + "/page.html"
    gcs_fs.fs.pipe_file(
        path,
        b"<p>one two</p>\n",
        content_type="text/plain; charset=utf-8",
        fixed_key_metadata={"cache_control": "no-store"},
    )

    run(edit_twice(gcs_fs, "page.html"))
    info = gcs_fs.fs.info(path)
    assert info["contentType"] == "text/plain; charset=utf-8"
    assert info["cacheControl"] == "no-store"


@pytest.mark.azure
def test_azure_two_cached_edits_keep_content_settings_and_metadata(
    azure_server: AzuriteServer, azure_fs: FsspecFileSystem
) -> None:
    from azure.storage.blob import BlobServiceClient, ContentSettings

    container = azure_fs.root.removeprefix("az://").strip("/")
    service = BlobServiceClient.from_connection_string(azure_server.direct_connection_string)
    blob = service.get_blob_client(container, "page.html")
    blob.upload_blob(
        b"<p>one two</p>\n",
        content_settings=ContentSettings(
            content_type="text/plain; charset=utf-8", cache_control="no-store"
        ),
        metadata={"owner": "web"},
    )

    run(edit_twice(azure_fs, "page.html"))
    props = blob.get_blob_properties()
    assert blob.download_blob().readall() == b"<p>1 2</p>\n"
    assert props.content_settings.content_type == "text/plain; charset=utf-8"
    assert props.content_settings.cache_control == "no-store"
    assert props.metadata["owner"] == "web"
