#!/usr/bin/env bash
# The test command (README): the whole suite, every backend, emulators included.
# Uses the active virtualenv, else .venv-ci (made by .ci/run), else .venv.
#
# Runs on pytest-xdist workers (FSSEAM_TEST_WORKERS, default: the CPU count,
# at most 4); tests/conftest.py keeps the tests that share a costly server on
# one worker. Extra arguments go to pytest and win: `-n 0` runs serially.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${PYTHON:-}" ]; then py=$PYTHON
elif [ -n "${VIRTUAL_ENV:-}" ]; then py=python
elif [ -x .venv-ci/bin/python ]; then py=.venv-ci/bin/python
elif [ -x .venv/bin/python ]; then py=.venv/bin/python
else py=python3
fi
workers=${FSSEAM_TEST_WORKERS:-$(( $(nproc 2>/dev/null || echo 2) < 4 ? $(nproc 2>/dev/null || echo 2) : 4 ))}
# The suite starts hundreds of Python subprocesses (CLI, MCP servers, workers):
# compile src/ and tests/ once, so that with PYTHONDONTWRITEBYTECODE set (as on
# CI) each of them does not compile fsseam from source again.
PYTHONDONTWRITEBYTECODE='' "$py" -m compileall -q -j 0 src tests >/dev/null
exec "$py" -m pytest -q -p no:cacheprovider -n "$workers" --dist loadgroup "$@"
