"""Hardening suite: containment, hostile input, store faults, crash safety, properties."""
