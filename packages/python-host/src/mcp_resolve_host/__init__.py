"""The host side of MCP tool resolution, for Python hosts: the counterpart
of the Rust crate ``mcp-resolve-host`` and of ``@mcp-resolve/host``.

- :class:`Signature`: a signature document read, verified (its fingerprint)
  or pinned, and evaluated locally (``expect``), as the Rust host does;
- :func:`verify_tools_list`, :func:`verify_resolution`: a server's answers
  checked against its signature, with the Rust host's violation kinds;
- :func:`decide`: the annotations to decide a call on — from the server's
  ``tools/resolve`` (checked), else the signature, else the static ones —
  and which it used and why.
"""

from .decide import Decision, Source, decide, outside_bound
from .signature import (
    CORE_HINTS,
    Expected,
    Hints,
    Signature,
    SignatureError,
    SignedTool,
    SignedVariant,
    fingerprint,
)
from .verify import verify_resolution, verify_tools_list
from .violation import Violation, ViolationKind, Violations

__all__ = [
    "CORE_HINTS",
    "Decision",
    "Expected",
    "Hints",
    "Signature",
    "SignatureError",
    "SignedTool",
    "SignedVariant",
    "Source",
    "Violation",
    "ViolationKind",
    "Violations",
    "decide",
    "fingerprint",
    "outside_bound",
    "verify_resolution",
    "verify_tools_list",
]
