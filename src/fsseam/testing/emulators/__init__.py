"""Store emulators started on free 127.0.0.1 ports, for tests and benchmarks.

Each module starts one emulator once per process and hands out fresh buckets;
``fixtures`` modules expose them to pytest. Requests can be counted and faults
injected at the emulator's HTTP layer, so the real dialect code runs.
"""
