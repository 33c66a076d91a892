"""The conformance suite (``fsseam.testing``) run against each backend, one file per store."""
