"""Helpers for tests that drive real agent programs (the model they talk to is
profiler_core.fakemodel)."""
