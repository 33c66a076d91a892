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

    async def body() -> None:
        target = await s3_fs.resolve("index.html")
        _, seen = await read_versioned(s3_fs, target)
        first = await s3_fs.edit_text(target, FsEditRequest("one", "1"), seen)
        await s3_fs.edit_text(target, FsEditRequest("two", "2"), first.version)

    run(body())
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

    async def body() -> None:
        target = await gcs_fs.resolve("page.html")
        _, seen = await read_versioned(gcs_fs, target)
        first = await gcs_fs.edit_text(target, FsEditRequest("one", "1"), seen)
        await gcs_fs.edit_text(target, FsEditRequest("two", "2"), first.version)

    run(body())
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

    async def body() -> None:
        target = await azure_fs.resolve("page.html")
        _, seen = await read_versioned(azure_fs, target)
        first = await azure_fs.edit_text(target, FsEditRequest("one", "1"), seen)
        await azure_fs.edit_text(target, FsEditRequest("two", "2"), first.version)

    run(body())
    props = blob.get_blob_properties()
    assert blob.download_blob().readall() == b"<p>1 2</p>\n"
    assert props.content_settings.content_type == "text/plain; charset=utf-8"
    assert props.content_settings.cache_control == "no-store"
    assert props.metadata["owner"] == "web"
