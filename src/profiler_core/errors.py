"""One hierarchy of errors; the CLI turns each into a single line."""

from __future__ import annotations


class ProfilerError(Exception):
    """Base class of every error agent-profiler raises on purpose."""


class ConfigError(ProfilerError):
    """A profile, scenario file or option is wrong."""


class ValidationError(ProfilerError):
    """Data does not match the expected shape (names the field path)."""


class PluginLoadError(ProfilerError):
    """A plugin could not be imported or registered."""


class DuplicateComponentError(ProfilerError):
    """Two plugins registered a component of one contract under the same id."""


class UnknownComponentError(ProfilerError):
    """A profile names a provider, scorer, collector... that no plugin provides."""


class UnknownModeError(ProfilerError):
    """A mode resolver was asked for a mode it does not know."""


class HookError(ProfilerError):
    """A lifecycle hook failed where failure is fatal (``profiler_before_run``)."""


class StoreError(ProfilerError):
    """A results file or manifest cannot be read or written."""


class JudgeError(ProfilerError):
    """A judge call failed (HTTP error, retries exhausted, unusable response)."""


class RateLimitedError(ProfilerError):
    """The agent's model API refused for now (HTTP 429/529): the runner waits
    ``retry_after`` seconds and retries.

    A provider raises it; a rate-limited session is retried without counting against
    ``allowed_retries``, and with ``execution.concurrency: auto`` fewer sessions run at once.
    """

    def __init__(
        self, message: str = "rate limited", *, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SandboxError(ProfilerError):
    """A sandbox cannot be set up or started (bwrap missing, docker daemon down, a bad
    sandbox setting)."""
