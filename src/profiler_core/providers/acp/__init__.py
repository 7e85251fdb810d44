"""The ``acp`` session provider: any agent speaking the Agent Client Protocol
(docs/providers/acp.md)."""

from .protocol import AcpError
from .provider import AcpOptions, AcpProvider

__all__ = ["AcpError", "AcpOptions", "AcpProvider"]
