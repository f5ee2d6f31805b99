"""What every generated Python resolver shares, so that none repeats it.

The counterpart of the Rust crate ``mcp-resolve-runtime`` and of the
TypeScript package ``@mcp-resolve/runtime``, held to the same answers by the
project's differential tests:

- :class:`Tool`: a tool's ``inputSchema`` (compiled on first use with
  jsonschema-rs, the Python face of the ``jsonschema`` crate the Rust
  resolvers validate with), its outcomes and its matching function;
- :class:`Resolved`: an outcome, with each dialect's JSON-RPC result text;
- :class:`RpcError`: the JSON-RPC error a call is refused with;
- the JSON Schema value semantics the matching functions use
  (:data:`ABSENT`, :func:`member`, :func:`json_equal`, the number
  comparisons).

Arguments are what a JSON reader gives: ``dict`` with ``str`` keys,
``list``, ``str``, ``int``, ``float``, ``bool`` and ``None``. Anything else
is refused as invalid arguments, never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Final, Literal, NamedTuple, TypeGuard

import jsonschema_rs

CODEGEN_VERSION: Final = 2
"""The version of the contract between generated modules and this runtime.

A module generated for another refuses to load
(:func:`check_codegen_version`)."""

Dialect = Literal["extension", "sep1862", "annotations"]
"""The wire shape of a ``tools/resolve`` answer."""

DIALECTS: Final[tuple[Dialect, ...]] = ("extension", "sep1862", "annotations")
"""Every dialect, in documentation order."""

Args = Mapping[str, object]
"""A call's arguments: a JSON object."""

MAX_ARGUMENT_DEPTH: Final = 64
"""The deepest argument nesting a resolver accepts."""

_MAX_REPORTED_ERRORS: Final = 16
_MESSAGE_LIMIT: Final = 512

# Integers the Rust engines hold as `i64` or `u64`; beyond, as a double.
_I64_MIN: Final = -(2**63)
_U64_END: Final = 2**64


def check_codegen_version(version: int) -> None:
    """Raises when a generated module was written for another version of
    this runtime: regenerate it with an mcp-resolve of the same release."""
    if version != CODEGEN_VERSION:
        raise ImportError(
            f"this resolver was generated for version {version} of mcp_resolve_runtime's "
            f"contract, and this runtime has version {CODEGEN_VERSION}: regenerate it "
            "with a matching mcp-resolve"
        )


class RpcError(Exception):
    """A JSON-RPC error: the code, the message and, for invalid arguments,
    ``data``."""

    PARSE_ERROR: Final = -32700
    INVALID_REQUEST: Final = -32600
    METHOD_NOT_FOUND: Final = -32601
    INVALID_PARAMS: Final = -32602
    INTERNAL_ERROR: Final = -32603

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, object]:
        """The JSON-RPC ``error`` object."""
        if self.data is None:
            return {"code": self.code, "message": self.message}
        return {"code": self.code, "message": self.message, "data": self.data}

    def __repr__(self) -> str:
        return f"RpcError({self.code}, {self.message!r})"


def unresolvable(name: str, tools: frozenset[str]) -> RpcError:
    """``-32602`` for a name no resolvable tool has: "tool is not
    resolvable" when it is one of the server's tools, else "unknown tool"."""
    if name in tools:
        return RpcError(RpcError.INVALID_PARAMS, f"tool is not resolvable: {name}")
    return RpcError(RpcError.INVALID_PARAMS, f"unknown tool: {name}")


def dialect_of(dialect: str) -> Dialect:
    """``dialect`` when it is one; otherwise ``-32602``."""
    if dialect == "extension":
        return "extension"
    if dialect == "sep1862":
        return "sep1862"
    if dialect == "annotations":
        return "annotations"
    raise RpcError(RpcError.INVALID_PARAMS, f"unknown dialect: {dialect}")


class _Absent:
    """The value of an argument that is not there."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
"""What :func:`member` gives for a member that is not there; equal to no
JSON value."""


def member(value: object, key: str) -> object:
    """The member ``key`` of ``value`` when it is an object that has it;
    :data:`ABSENT` otherwise."""
    if isinstance(value, dict):
        return value.get(key, ABSENT)
    return ABSENT


def is_number(value: object) -> TypeGuard[int | float]:
    """JSON Schema's ``number`` (booleans are not numbers)."""
    t = type(value)
    return t is int or t is float


def is_integer(value: object) -> TypeGuard[int | float]:
    """JSON Schema's ``integer``: any number with a zero fraction."""
    return type(value) is int or (type(value) is float and value.is_integer())


def _as_rust(n: int | float) -> int | float:
    """``n`` as the Rust engines hold it: an integer in ``i64`` or ``u64``
    exactly, any other number as a double. (An integer too large for a
    double stays exact: it compares above every double there is.)"""
    if type(n) is int and not (_I64_MIN <= n < _U64_END):
        try:
            return float(n)
        except OverflowError:
            return n
    return n


def compare(a: int | float, b: int | float) -> int:
    """How two numbers compare by value, as the Rust engines compare them:
    two integers exactly, anything else as doubles. -1, 0 or 1 (NaN is not
    JSON, and compares as unordered: 2)."""
    a, b = _as_rust(a), _as_rust(b)
    if type(a) is int and type(b) is int:
        return (a > b) - (a < b)
    if type(a) is int and not (-(2**53) <= a <= 2**53):
        a = float(a)
    if type(b) is int and not (-(2**53) <= b <= 2**53):
        b = float(b)
    if a < b:
        return -1
    if a > b:
        return 1
    if a == b:
        return 0
    return 2


def minimum(value: object, bound: int | float) -> bool:
    """``minimum``: numbers at least ``bound``; other values pass."""
    return not is_number(value) or compare(value, bound) in (0, 1)


def maximum(value: object, bound: int | float) -> bool:
    """``maximum``: numbers at most ``bound``; other values pass."""
    return not is_number(value) or compare(value, bound) in (-1, 0)


def exclusive_minimum(value: object, bound: int | float) -> bool:
    """``exclusiveMinimum``: numbers above ``bound``; other values pass."""
    return not is_number(value) or compare(value, bound) == 1


def exclusive_maximum(value: object, bound: int | float) -> bool:
    """``exclusiveMaximum``: numbers below ``bound``; other values pass."""
    return not is_number(value) or compare(value, bound) == -1


def number_equals(value: object, n: int | float) -> bool:
    """Whether ``value`` is a number equal to ``n`` by value (``1 == 1.0``)."""
    return is_number(value) and compare(value, n) == 0


def json_equal(a: object, b: object) -> bool:
    """JSON Schema equality: numbers by value, arrays element-wise, objects
    by key set and values; a boolean is never a number."""
    if is_number(a) and is_number(b):
        return compare(a, b) == 0
    ta, tb = type(a), type(b)
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and len(a) == len(b)
            and all(k in b and json_equal(v, b[k]) for k, v in a.items())
        )
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if a is None or b is None:
        return a is b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return False


def property_holds(value: Mapping[str, object], key: str, test: Callable[[object], bool]) -> bool:
    """JSON Schema's ``properties`` for one key: holds unless the key is
    present and fails."""
    return key not in value or test(value[key])


def nests_too_deep(args: Mapping[str, object]) -> bool:
    """Whether an arguments object (itself one level) nests deeper than
    :data:`MAX_ARGUMENT_DEPTH`, read as the Rust runtime reads it (a scalar
    is one level). A walk without recursion, bounded by the limit rather
    than by the input or the interpreter's recursion limit."""
    # Arguments of JSON scalars only, the common case, told in C (a value of
    # any other type, a container or not, is walked).
    if JSON_SCALAR_TYPES.issuperset(map(type, args.values())):
        return False
    return _walk_too_deep(args)


JSON_SCALAR_TYPES: Final = frozenset((str, int, float, bool, type(None)))
"""The types of the scalars ``json.loads`` gives: arguments whose members
are all of these nest one level (``JSON_SCALAR_TYPES.issuperset(map(type,
args.values()))``, the test generated modules make before
:func:`nests_too_deep`, without its frame)."""


def _walk_too_deep(args: Mapping[str, object]) -> bool:
    stack: list[tuple[list[object] | dict[str, object], int]] = [
        (v, MAX_ARGUMENT_DEPTH - 1) for v in args.values() if isinstance(v, (list, dict))
    ]
    while stack:
        value, limit = stack.pop()
        if limit == 1:
            # Every member would be one level too many.
            if value:
                return True
            continue
        for member in value if isinstance(value, list) else value.values():
            if isinstance(member, (list, dict)):
                stack.append((member, limit - 1))
    return False


def _truncate(message: str) -> str:
    """A message cut at 512 UTF-8 bytes (on a code point), with ``…``."""
    data = message.encode("utf-8", "surrogatepass")
    if len(data) <= _MESSAGE_LIMIT:
        return message
    return data[:_MESSAGE_LIMIT].decode("utf-8", "ignore") + "…"


def _pointer(path: Sequence[str | int]) -> str:
    """A JSON Pointer (RFC 6901) to an instance location."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _compile(schema: object) -> jsonschema_rs.Validator:
    if not isinstance(schema, (dict, bool)):
        raise ValueError("a JSON Schema is an object or a boolean")
    return jsonschema_rs.validator_for(schema, validate_formats=False)


def schema_predicate(schema: object) -> Callable[[object], bool]:
    """A JSON Schema compiled as the runtime compiles ``inputSchema``s, as a
    predicate: for code that evaluates schemas beside generated modules,
    such as a host's ``argumentPatterns``. Raises when the schema does not
    compile."""
    validator = _compile(schema)

    def holds(value: object) -> bool:
        try:
            return bool(validator.is_valid(value))
        except (ValueError, TypeError, OverflowError):
            return False

    return holds


class Outcome(NamedTuple):
    """One outcome as a generated module writes it, before its tool binds it."""

    variant: str | None
    hints: str
    """Every hint as JSON text: the four core hints in wire order, then the
    others by name."""
    scopes: str
    sep1862_tail: str
    """What follows the annotations in the SEP-1862 result."""
    texts: Mapping[str, str] | None
    """Each dialect's whole result text, when the module gives them;
    otherwise they are derived from the hints, the tool's name and its
    SEP-1862 head."""


def outcome(
    variant: str | None,
    hints: str,
    scopes: str,
    sep1862_tail: str,
    texts: Mapping[str, str] | None = None,
) -> Outcome:
    """An outcome of a generated module (its texts are JSON)."""
    return Outcome(variant, hints, scopes, sep1862_tail, texts)


class _Texts(dict[str, str]):
    """An outcome's result texts by dialect, each made on first use: a dict,
    so that a text made once is one C-level lookup away."""

    __slots__ = ("_resolved",)

    def __init__(self, resolved: Resolved) -> None:
        super().__init__()
        self._resolved = resolved

    def __missing__(self, dialect: str) -> str:
        text = self._resolved._make_text(dialect)
        self[dialect] = text
        return text


class Resolved:
    """What a call resolved to: its tool, variant, annotations, scopes, and
    each dialect's result."""

    __slots__ = ("tool", "variant", "texts", "result_json", "_parts", "_head", "_annotations", "_scopes")

    def __init__(self, tool: str, head: str, parts: Outcome) -> None:
        self.tool: Final = tool
        self.variant: Final = parts.variant
        """The variant that matched; ``None`` when none did and the static
        annotations apply."""
        self._parts = parts
        self._head = head
        self._annotations: Mapping[str, bool] | None = None
        self._scopes: tuple[str, ...] | None = None
        self.texts: Final[Mapping[str, str]] = _Texts(self)
        """Each dialect's result text, by the dialect's name: made on first
        use; :class:`RpcError` for a name that is not a dialect."""
        self.result_json: Final[Callable[[Dialect], str]] = self.texts.__getitem__
        """The JSON-RPC ``result`` text of a dialect (``result_json(dialect)``;
        :class:`RpcError` for one that is not)."""

    @property
    def annotations(self) -> Mapping[str, bool]:
        """Every hint (the four core ones, then ``agencyHint`` and declared
        ones), in order."""
        if self._annotations is None:
            self._annotations = MappingProxyType(json.loads(self._parts.hints))
        return self._annotations

    @property
    def required_scopes(self) -> tuple[str, ...]:
        """The OAuth scopes the call needs."""
        if self._scopes is None:
            self._scopes = tuple(json.loads(self._parts.scopes))
        return self._scopes

    def _make_text(self, dialect: str) -> str:
        given = self._parts.texts
        if given is not None and dialect in given:
            return given[dialect]
        if dialect == "extension":
            return self._extension_text()
        if dialect == "sep1862":
            return self._head + self._parts.hints + self._parts.sep1862_tail
        if dialect == "annotations":
            return '{"annotations":' + self._parts.hints + "}"
        raise RpcError(RpcError.INVALID_PARAMS, f"unknown dialect: {dialect}")

    def _extension_text(self) -> str:
        a = self.annotations

        def hint(name: str) -> str:
            return "true" if a.get(name) is True else "false"

        return (
            '{"resultType":"complete","name":'
            + json.dumps(self.tool, ensure_ascii=False)
            + ',"annotations":{"readOnlyHint":'
            + hint("readOnlyHint")
            + ',"destructiveHint":'
            + hint("destructiveHint")
            + ',"idempotentHint":'
            + hint("idempotentHint")
            + ',"openWorldHint":'
            + hint("openWorldHint")
            + "}}"
        )

    def __repr__(self) -> str:
        return f"Resolved(tool={self.tool!r}, variant={self.variant!r})"


_COMPILED: Final[dict[str, jsonschema_rs.Validator]] = {}
"""Every ``inputSchema`` compiled so far, by its text."""


class Tool:
    """A resolvable tool of a generated module."""

    __slots__ = ("name", "bounded", "outcomes", "texts", "match", "validator", "_schema", "_broken")

    def __init__(
        self,
        name: str,
        schema: str,
        bounded: bool,
        head: str,
        outcomes: Sequence[Outcome],
        match: Callable[[Args], int],
    ) -> None:
        """``schema`` is the tool's ``inputSchema`` as JSON text;
        ``bounded``, whether it proves that no object it accepts nests deeper
        than the limit (the nesting is then checked only for a refusal);
        ``head``, the text every SEP-1862 result of the tool starts with."""
        self.name: Final = name
        self.bounded: Final = bounded
        """Whether the ``inputSchema`` proves that no object it accepts nests
        deeper than the limit (the nesting is then checked only for a
        refusal)."""
        self.outcomes: Final = tuple(Resolved(name, head, parts) for parts in outcomes)
        """Each outcome, in the matching function's order (the static one
        last)."""
        self.texts: Final = tuple(outcome.texts for outcome in self.outcomes)
        """Each outcome's texts by dialect (:attr:`Resolved.texts`), in the
        same order."""
        self.match: Final = match
        """The matching function: the index of the outcome validated
        arguments land in."""
        self.validator: jsonschema_rs.Validator | None = None
        """The compiled ``inputSchema``, once a call has compiled it
        (``None`` before): a generated module's ``resolve`` calls it
        itself, as it calls ``match``, one frame fewer than through
        :meth:`resolve`."""
        self._schema = schema
        self._broken: RpcError | None = None

    def resolve(self, args: object) -> Resolved:
        """Validates the arguments, then matches them. Raises
        :class:`RpcError`."""
        # The common case in one method: valid arguments, a known outcome.
        validator = self.validator
        if (
            validator is not None
            and type(args) is dict
            and (self.bounded or not nests_too_deep(args))
        ):
            try:
                if validator.is_valid(args):
                    return self.outcomes[self.match(args)]
            except (ValueError, TypeError, OverflowError, IndexError):
                pass
        return self.resolve_validated(self.validate(args))

    def resolve_validated(self, args: Args) -> Resolved:
        """Matches arguments already validated against the tool's
        ``inputSchema``."""
        index = self.match(args)
        try:
            return self.outcomes[index]
        except IndexError:
            raise RpcError(
                RpcError.INTERNAL_ERROR, f"generated resolver data has no outcome {index}"
            ) from None

    def validate(self, args: object) -> Args:
        """The arguments as an object the schema accepts, or the
        :class:`RpcError` refusing them."""
        validator = self._compiled()
        if not isinstance(args, dict):
            raise RpcError(
                RpcError.INVALID_PARAMS, f"arguments for tool {self.name} must be an object"
            )
        if nests_too_deep(args):
            raise RpcError(
                RpcError.INVALID_PARAMS,
                f"arguments for tool {self.name} nest deeper than {MAX_ARGUMENT_DEPTH} levels",
            )
        try:
            if validator.is_valid(args):
                return args
            errors = [
                {"instancePath": _pointer(e.instance_path), "message": _truncate(e.message)}
                for _, e in zip(range(_MAX_REPORTED_ERRORS), validator.iter_errors(args))
            ]
        except (ValueError, TypeError, OverflowError) as e:
            raise RpcError(
                RpcError.INVALID_PARAMS,
                f"arguments for tool {self.name} are not JSON: {_truncate(str(e))}",
            ) from None
        raise RpcError(
            RpcError.INVALID_PARAMS, f"invalid arguments for tool {self.name}", errors
        )

    def _compiled(self) -> jsonschema_rs.Validator:
        if self.validator is None:
            if self._broken is None:
                try:
                    # Tools with the same schema text share one validator.
                    validator = _COMPILED.get(self._schema)
                    if validator is None:
                        validator = _compile(json.loads(self._schema))
                        _COMPILED[self._schema] = validator
                    self.validator = validator
                    return validator
                except Exception as e:  # the validator's errors have no common base
                    self._broken = RpcError(
                        RpcError.INTERNAL_ERROR,
                        f"the inputSchema of tool {self.name} does not compile: {e}",
                    )
            raise self._broken
        return self.validator


class Rules(NamedTuple):
    """A generated module as a value, for code that serves any resolver."""

    server_name: str
    server_version: str
    fingerprint: str
    signature_json: str
    tool_names: tuple[str, ...]
    tools_list_json: Callable[[Dialect], str]
    resolve: Callable[[str, object], Resolved]
    resolve_validated: Callable[[str, Args], Resolved]
