"""Shared test configuration.

The conformance suite's modules register themselves for assertion rewriting
when ``fsseam.testing`` is imported; nothing else is needed here yet.
"""
