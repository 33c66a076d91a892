#!/usr/bin/env bash
# The test command (README): the whole suite, every backend, emulators included.
# Uses the active virtualenv, else .venv-ci (made by .ci/run), else .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${PYTHON:-}" ]; then py=$PYTHON
elif [ -n "${VIRTUAL_ENV:-}" ]; then py=python
elif [ -x .venv-ci/bin/python ]; then py=.venv-ci/bin/python
elif [ -x .venv/bin/python ]; then py=.venv/bin/python
else py=python3
fi
exec "$py" -m pytest -q -p no:cacheprovider "$@"
