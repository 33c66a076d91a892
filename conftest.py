"""Root conftest: loads the emulator fixtures that exist (one plugin per store)."""

import importlib.util

_PLUGINS = (
    "fsseam.testing.emulators.s3_fixtures",
    "fsseam.testing.emulators.gcs_fixtures",
    "fsseam.testing.emulators.azure_fixtures",
    "fsseam.testing.emulators.rgw",
)

pytest_plugins = [name for name in _PLUGINS if importlib.util.find_spec(name) is not None]
