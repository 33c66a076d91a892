#!/usr/bin/env bash
# The test command (README): the whole suite, every backend, emulators included.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python -m pytest -q -p no:cacheprovider "$@"
