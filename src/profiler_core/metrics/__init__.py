"""Measuring a session: the built-in collectors, token usage normalised across APIs, and prices."""
