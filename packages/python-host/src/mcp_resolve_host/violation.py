"""Verdicts: how a server's word disagrees with its signature. The same
kinds, names and "less conservative" rule as the Rust host library
(``mcp_resolve_host::ViolationKind``) and the TypeScript one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

ViolationKind = Literal[
    "unknown-tool",
    "duplicate-tool",
    "tool-changed",
    "not-resolvable",
    "invalid-arguments",
    "annotation",
    "undeclared-hint",
    "scopes",
    "malformed",
]
"""What kind of disagreement a :class:`Violation` is (the Rust host's names):
a tool the signature does not have, a tool listed twice, a tool's members
changed, a resolvable marker without variants, a resolution for arguments
the ``inputSchema`` refuses, a hint's value, a hint the signature does not
declare, the scopes, or a result of no dialect."""


class Violation(Exception):
    """One way a server's answer disagrees with its signature (or its bound)."""

    def __init__(self, kind: ViolationKind, tool: str, message: str) -> None:
        super().__init__(message)
        self.kind: ViolationKind = kind
        self.tool = tool
        self.message = message
        self.less_conservative = kind in (
            "unknown-tool",
            "invalid-arguments",
            "undeclared-hint",
            "not-resolvable",
        )
        """Whether the server's word is less conservative than the signature,
        so a host acting on it would under-prompt."""

    def __str__(self) -> str:
        if self.tool == "":
            return f"[{self.kind}] {self.message}"
        return f"[{self.kind}] tool `{self.tool}`: {self.message}"

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "tool": self.tool,
            "message": self.message,
            "lessConservative": self.less_conservative,
        }


class Violations(Exception):
    """Every disagreement found in one result (never empty)."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        n = len(violations)
        super().__init__(
            f"{n} disagreement{'' if n == 1 else 's'} with the signature"
            + "".join(f"\n  {v}" for v in violations)
        )
        self.violations = tuple(violations)

    def any_less_conservative(self) -> bool:
        return any(v.less_conservative for v in self.violations)


def finish(out: list[Violation]) -> None:
    """Raises the violations found, if any."""
    if out:
        raise Violations(out)
