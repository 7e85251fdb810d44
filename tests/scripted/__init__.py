"""Scripted model servers on 127.0.0.1 for driving real agent programs in tests (no real model, no network)."""
