"""A signature document (docs/signature.md), read and compiled for
evaluation: the Python counterpart of the Rust host library's ``Signature``,
with the same host-side evaluation recipe and the same answers (the
project's differential test holds them equal).

- every tool's ``inputSchema`` is compiled with the runtime's validator
  (jsonschema-rs, the ``jsonschema`` crate the Rust host uses), so an invalid
  call is refused with the same message as in Rust;
- each ``resolvedVariants`` entry's ``argumentPatterns`` become one object
  schema whose listed arguments are required, except those whose pattern is
  ``false`` (absent), compiled with the ``regex`` crate for patterns under
  the Rust host's limits; the first entry that matches gives the variant.

The two validators are the Rust host's own, so no pattern needs refusing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import jsonschema_rs
import rfc8785
from mcp_resolve_runtime import RpcError, Tool, json_equal

from .violation import Violation

CORE_HINTS: Final[tuple[tuple[str, bool], ...]] = (
    ("readOnlyHint", False),
    ("destructiveHint", True),
    ("idempotentHint", False),
    ("openWorldHint", True),
)
"""The four core hints, in wire order, with their MCP defaults."""

_CORE_NAMES: Final = frozenset(name for name, _ in CORE_HINTS)
_NOT_FINGERPRINTED: Final = frozenset({"fingerprint", "resultType", "_meta"})
_REGEX_SIZE_LIMIT: Final = 1 << 20

Hints = Mapping[str, bool]
"""A hint set, every hint explicit: the four core hints in wire order (their
MCP defaults where left out), then the other boolean hints in document
order."""


class SignatureError(ValueError):
    """A signature document that cannot be used."""


def _read_hints(value: object, where: str) -> tuple[dict[str, bool], str | None]:
    if not isinstance(value, dict):
        raise SignatureError(f"{where}: `annotations` must be an object")
    hints: dict[str, bool] = {}
    for hint, fallback in CORE_HINTS:
        v = value.get(hint)
        hints[hint] = v if type(v) is bool else fallback
    title: str | None = None
    for hint, v in value.items():
        if hint == "title":
            if not isinstance(v, str):
                raise SignatureError(f"{where}: annotation `title` must be a string")
            title = v
        elif type(v) is not bool:
            raise SignatureError(f"{where}: annotation `{hint}` must be a boolean")
        elif hint not in _CORE_NAMES:
            hints[hint] = v
    return hints, title


def _read_scopes(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise SignatureError(f"{where}: `requiredScopes` must be an array of strings")
    return tuple(value)


def fingerprint(document: Mapping[str, Any]) -> str:
    """The ``sha256:`` fingerprint of a document (RFC 8785 + SHA-256;
    ``fingerprint``, ``resultType`` and ``_meta`` left out)."""
    body = {k: v for k, v in document.items() if k not in _NOT_FINGERPRINTED}
    try:
        text = rfc8785.dumps(body)
    except Exception as e:  # rfc8785's errors share no base
        raise SignatureError(f"the document has no canonical form: {e}") from None
    return "sha256:" + hashlib.sha256(text).hexdigest()


def _scalar_key(value: object) -> tuple[str, object] | None:
    """A dict key under which JSON scalars equal by JSON Schema's equality
    meet (``1`` and ``1.0`` alike, ``true`` apart from ``1``); ``None`` for
    values the table cannot hold exactly."""
    if value is None:
        return ("null", None)
    if type(value) is bool:
        return ("bool", value)
    if type(value) is str:
        return ("str", value)
    if type(value) is float:
        return ("num", value)
    if type(value) is int and abs(value) <= 2**53:
        return ("num", value)
    return None


def _direct_test(patterns: Mapping[str, object]) -> Callable[[object], bool] | None:
    """The patterns as direct tests on an arguments object, when each is
    ``false`` (absent), ``{const}`` or ``{enum}``; ``None`` otherwise (the
    compiled schema decides then)."""
    tests: list[tuple[str, bool, Sequence[object]]] = []
    for key, pattern in patterns.items():
        if pattern is False:
            tests.append((key, True, ()))
            continue
        if not isinstance(pattern, dict) or len(pattern) != 1:
            return None
        if "const" in pattern:
            tests.append((key, False, (pattern["const"],)))
        elif isinstance(pattern.get("enum"), list):
            tests.append((key, False, tuple(pattern["enum"])))
        else:
            return None

    def test(args: object) -> bool:
        if not isinstance(args, dict):
            return False
        for key, absent, values in tests:
            present = key in args
            if absent:
                if present:
                    return False
                continue
            if not present:
                return False
            value = args[key]
            if not any(json_equal(value, want) for want in values):
                return False
        return True

    return test


class SignedVariant:
    """One entry of a tool's ``resolvedVariants``, compiled."""

    def __init__(self, entry: object, where: str) -> None:
        if not isinstance(entry, dict):
            raise SignatureError(f"{where}: must be an object")
        name = entry.get("name")
        if not isinstance(name, str):
            raise SignatureError(f"{where}: `name` must be a string")
        self.name: Final = name
        when = entry.get("when")
        patterns = when.get("argumentPatterns") if isinstance(when, dict) else None
        if not isinstance(patterns, dict):
            raise SignatureError(f"{where}: `when.argumentPatterns` must be an object")
        self.argument_patterns: Final[Mapping[str, object]] = patterns
        self.annotations: Final[Hints] = _read_hints(entry.get("annotations"), where)[0]
        self.required_scopes: Final = _read_scopes(entry.get("requiredScopes"), where)
        required = [key for key, pattern in patterns.items() if pattern is not False]
        schema = {"type": "object", "properties": patterns, "required": required}
        try:
            validator = jsonschema_rs.validator_for(
                schema,
                validate_formats=False,
                pattern_options=jsonschema_rs.RegexOptions(
                    size_limit=_REGEX_SIZE_LIMIT, dfa_size_limit=_REGEX_SIZE_LIMIT
                ),
            )
        except Exception as e:  # the validator's errors share no base
            raise SignatureError(
                f"variant `{name}`: `argumentPatterns` do not compile: {e}"
            ) from None

        def by_schema(args: object) -> bool:
            try:
                return bool(validator.is_valid(args))
            except (ValueError, TypeError, OverflowError):
                return False

        self._matches = _direct_test(patterns) or by_schema

    def matches(self, args: object) -> bool:
        """Whether ``args`` satisfy the entry's ``argumentPatterns``."""
        return self._matches(args)


def _landing_table(variants: Sequence[SignedVariant]) -> tuple[str, dict[tuple[str, object], int]] | None:
    """When every variant tests one argument, the same one, for equality
    with JSON scalars: the argument and the index of the first variant each
    value lands in."""
    key: str | None = None
    table: dict[tuple[str, object], int] = {}
    for index, variant in enumerate(variants):
        entries = list(variant.argument_patterns.items())
        if len(entries) != 1:
            return None
        name, pattern = entries[0]
        if key is not None and name != key:
            return None
        key = name
        if not isinstance(pattern, dict) or len(pattern) != 1:
            return None
        if "const" in pattern:
            values: list[object] = [pattern["const"]]
        elif isinstance(pattern.get("enum"), list):
            values = pattern["enum"]
        else:
            return None
        for value in values:
            k = _scalar_key(value)
            if k is None:
                return None
            table.setdefault(k, index)
    return None if key is None else (key, table)


class SignedTool:
    """One tool of a signature, compiled."""

    def __init__(self, definition: object, index: int) -> None:
        at = f"tools[{index}]"
        if not isinstance(definition, dict):
            raise SignatureError(f"{at}: a tool must be an object")
        name = definition.get("name")
        if not isinstance(name, str):
            raise SignatureError(f"{at}: `name` must be a string")
        self.name: Final = name
        where = f"{at} (tool `{name}`)"
        self.definition: Final[Mapping[str, Any]] = definition
        schema = definition.get("inputSchema")
        if not isinstance(schema, dict):
            raise SignatureError(f"{where}: `inputSchema` must be an object")
        self.input_schema: Final[Mapping[str, Any]] = schema
        for key in ("title", "description"):
            if definition.get(key) is not None and not isinstance(definition[key], str):
                raise SignatureError(f"{where}: `{key}` must be a string")
        hints, title = _read_hints(definition.get("annotations"), where)
        self.annotations: Final[Hints] = hints
        """The static (worst-case) annotations, every hint explicit."""
        self.title: Final = title
        self.required_scopes: Final = _read_scopes(definition.get("requiredScopes"), where)
        entries = definition.get("resolvedVariants")
        self.resolvable: Final = entries is not None
        if self.resolvable and not isinstance(entries, list):
            raise SignatureError(f"{where}: `resolvedVariants` must be an array")
        self.variants: Final[tuple[SignedVariant, ...]] = tuple(
            SignedVariant(entry, f"{where}: resolvedVariants[{i}]")
            for i, entry in enumerate(entries or [])
        )
        self._table = _landing_table(self.variants)
        self._validator = Tool(name, json.dumps(schema), False, "", (), lambda _args: 0)

    def validate(self, args: object) -> Mapping[str, object]:
        """The arguments as an object the ``inputSchema`` accepts; raises the
        runtime's :class:`RpcError` otherwise."""
        return self._validator.validate(args)

    def land(self, args: object) -> int:
        """The index of the first entry whose ``argumentPatterns`` match, or
        -1. Does not validate."""
        if self._table is not None and isinstance(args, dict):
            key, table = self._table
            if key not in args:
                return -1
            k = _scalar_key(args[key])
            if k is not None:
                return table.get(k, -1)
            if not (type(args[key]) is int):
                # Not a scalar: no `const`/`enum` of scalars equals it.
                return -1
        for i, variant in enumerate(self.variants):
            if variant.matches(args):
                return i
        return -1

    def expect(self, args: object) -> Expected:
        """The host-side evaluation recipe for this tool. Raises a
        :class:`Violation`."""
        try:
            self.validate(args)
        except RpcError as e:
            raise Violation(
                "invalid-arguments",
                self.name,
                f"the signature declares no resolution for arguments its inputSchema refuses ({e.message})",
            ) from None
        index = self.land(args)
        return Expected(self, None if index < 0 else self.variants[index])


class Expected:
    """What the signature declares for one call."""

    def __init__(self, tool: SignedTool, variant: SignedVariant | None) -> None:
        self.tool: Final = tool
        self.variant: Final = variant
        """The entry that matched; ``None`` when the static annotations apply."""

    @property
    def annotations(self) -> Hints:
        """The annotations the call resolves to, every hint explicit."""
        return self.variant.annotations if self.variant is not None else self.tool.annotations

    @property
    def required_scopes(self) -> tuple[str, ...]:
        """The scopes the call needs."""
        return self.variant.required_scopes if self.variant is not None else self.tool.required_scopes

    def extension_result(self) -> dict[str, Any]:
        """The extension's result for the call: ``{resultType, name,
        annotations}`` with the four core hints."""
        all_hints = self.annotations
        return {
            "resultType": "complete",
            "name": self.tool.name,
            "annotations": {hint: all_hints[hint] for hint, _ in CORE_HINTS},
        }


class Signature:
    """A signature document, checked and compiled for evaluation."""

    def __init__(self, document: object) -> None:
        """Reads the document and compiles every schema in it. The
        fingerprint is not recomputed: see :meth:`verified`."""
        if not isinstance(document, dict):
            raise SignatureError("a signature document must be a JSON object")
        tools = document.get("tools")
        if not isinstance(tools, list):
            raise SignatureError("a signature document needs a `tools` array")
        self.document: Final[Mapping[str, Any]] = document
        by_name: dict[str, SignedTool] = {}
        for index, tool in enumerate(tools):
            signed = SignedTool(tool, index)
            if signed.name in by_name:
                raise SignatureError(f"tool `{signed.name}` is listed twice")
            by_name[signed.name] = signed
        self.tools: Final = tuple(by_name.values())
        self._by_name = by_name

    @classmethod
    def from_json(cls, text: str) -> Signature:
        """Parses JSON text."""
        try:
            document = json.loads(text)
        except ValueError as e:
            raise SignatureError(f"a signature document must be JSON: {e}") from None
        return cls(document)

    @classmethod
    def verified(cls, document: object) -> Signature:
        """Like the constructor, and the document's ``fingerprint`` must be
        present and equal the recomputed one."""
        signature = cls(document)
        declared = signature.fingerprint
        if declared is None:
            raise SignatureError("the signature document has no `fingerprint`")
        actual = fingerprint(signature.document)
        if declared != actual:
            raise SignatureError(
                f"the document's fingerprint does not verify: claims {declared}, content hashes to {actual}"
            )
        return signature

    @classmethod
    def pinned(cls, document: object, pin: str) -> Signature:
        """Like :meth:`verified`, and the fingerprint must be ``pin``, the one
        the host stored when the user approved the server."""
        signature = cls.verified(document)
        if signature.fingerprint != pin:
            raise SignatureError(
                f"the signature's fingerprint is {signature.fingerprint or 'missing'} but {pin} is pinned"
            )
        return signature

    @property
    def fingerprint(self) -> str | None:
        """The document's ``fingerprint`` member, as written."""
        value = self.document.get("fingerprint")
        return value if isinstance(value, str) else None

    def tool(self, name: str) -> SignedTool | None:
        """The tool called ``name``."""
        return self._by_name.get(name)

    def expect(self, name: str, args: object) -> Expected:
        """The host-side evaluation recipe: what the signature declares for
        the call. Raises a :class:`Violation` for a tool the signature lacks
        (``unknown-tool``) and for arguments its ``inputSchema`` refuses
        (``invalid-arguments``)."""
        tool = self._by_name.get(name)
        if tool is None:
            raise Violation("unknown-tool", name, f"the signature has no tool `{name}`")
        return tool.expect(args)
