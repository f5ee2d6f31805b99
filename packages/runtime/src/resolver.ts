// The runtime of the TypeScript resolvers mcp-resolve generates
// (`mcp-resolve generate --lang typescript`): what every generated module
// shares, so that none repeats it. The counterpart of the Rust crate
// `mcp-resolve-runtime`, and held to the same answers by the project's
// differential tests:
//
// - `Tool`: a tool's `inputSchema` (compiled with Ajv on first use, the
//   validator the MCP SDKs use), its outcomes and its matching function;
// - `Resolved`: an outcome, with each dialect's JSON-RPC result text;
// - `RpcError`: the JSON-RPC error a call is refused with;
// - the JSON Schema value semantics the matching functions use (`own`,
//   `isObject`, `jsonEqual`, `minLength`, `maxLength`, `propertyHolds`).

import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";

/**
 * The version of the contract between generated modules and this runtime.
 * A module generated for another refuses to load (`checkCodegenVersion`).
 */
export const CODEGEN_VERSION = 3;

/**
 * Throws when a generated module was written for another version of this
 * runtime: regenerate it with an mcp-resolve of the same release.
 */
export function checkCodegenVersion(version: number): void {
  if (version !== CODEGEN_VERSION) {
    throw new Error(
      `this resolver was generated for version ${version} of @mcp-resolve/runtime's contract, and this runtime has version ${CODEGEN_VERSION}: regenerate it with a matching mcp-resolve`,
    );
  }
}

/** The wire shape of a `tools/resolve` answer. */
export type Dialect = "extension" | "sep1862" | "annotations";

/** Every dialect, in documentation order. */
export const DIALECTS: readonly Dialect[] = ["extension", "sep1862", "annotations"];

/** A call's arguments: a JSON object. */
export type Args = Readonly<Record<string, unknown>>;

/** The deepest argument nesting a resolver accepts. */
export const MAX_ARGUMENT_DEPTH = 64;

/** The most validation errors an error's `data` reports. */
const MAX_REPORTED_ERRORS = 16;

/** The longest validation message reported, in UTF-8 bytes. */
const MESSAGE_LIMIT = 512;

/** A JSON-RPC error: the code, the message and, for invalid arguments, `data`. */
export class RpcError extends Error {
  static readonly PARSE_ERROR = -32700;
  static readonly INVALID_REQUEST = -32600;
  static readonly METHOD_NOT_FOUND = -32601;
  static readonly INVALID_PARAMS = -32602;
  static readonly INTERNAL_ERROR = -32603;

  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }

  /** The JSON-RPC `error` object. */
  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/**
 * `-32602` for a name no resolvable tool has: "tool is not resolvable" when
 * it is one of the server's tools, else "unknown tool".
 */
export function unresolvable(name: string, tools: ReadonlySet<string>): RpcError {
  return new RpcError(
    RpcError.INVALID_PARAMS,
    tools.has(name) ? `tool is not resolvable: ${name}` : `unknown tool: ${name}`,
  );
}

/** Whether `value` is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The member `key` of `value` when it is an object that has it as its own
 * property; `undefined` otherwise. Inherited names (`__proto__`,
 * `constructor`, `toString`) are never found unless the object has them.
 */
export function own(value: unknown, key: string): unknown {
  return isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
}

/**
 * `Object.prototype`, for generated matching functions' reads of the
 * arguments object: `OP[key] === undefined ? args[key] : own(args, key)`.
 * Where `Object.prototype` has no member by that name (true of every name
 * but its own, such as `constructor` or `__proto__`, unless something has
 * polluted it), a plain read of an object whose prototype is
 * `Object.prototype` or `null` (every object `JSON.parse` makes) finds an
 * own member or nothing, as `own` does, without `own`'s calls; the test
 * itself compiles to nothing while `Object.prototype` keeps its shape. An
 * arguments object with another prototype is read as Ajv reads it: its
 * inherited members count.
 */
export const OBJECT_PROTOTYPE: Readonly<Record<string, unknown>> = Object.prototype as Record<string, unknown>;

/** JSON Schema's `properties` for one key: holds unless the key is present and fails. */
export function propertyHolds(
  value: Record<string, unknown>,
  key: string,
  test: (member: unknown) => boolean,
): boolean {
  return !Object.hasOwn(value, key) || test(value[key]);
}

/** The length of `text` in code points, as JSON Schema counts it. */
function codePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/** `minLength`: at least `n` code points. */
export function minLength(text: string, n: number): boolean {
  // Each code point is one or two UTF-16 units.
  if (text.length < n) return false;
  if (text.length >= 2 * n) return true;
  return codePoints(text) >= n;
}

/** `maxLength`: at most `n` code points. */
export function maxLength(text: string, n: number): boolean {
  if (text.length <= n) return true;
  if (text.length > 2 * n) return false;
  return codePoints(text) <= n;
}

/**
 * JSON Schema equality: numbers by value (`1 == 1.0`), arrays element-wise,
 * objects by key set and values.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!jsonEqual(a[i], b[i])) return false;
    }
    return true;
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(b, key) || !jsonEqual(a[key], b[key])) return false;
    }
    return true;
  }
  return false;
}

/** Whether `value` nests deeper than `limit` levels. */
function depthExceeds(value: unknown, limit: number): boolean {
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (depthExceeds(value[i], limit - 1)) return true;
    }
  } else if (typeof value === "object" && value !== null) {
    const members = value as Record<string, unknown>;
    for (const key in members) {
      // Only containers can be too deep; own members only (a member is
      // looked at as an own property only when it is one).
      const member = members[key];
      if (typeof member === "object" && member !== null) {
        if (Object.hasOwn(members, key) && depthExceeds(member, limit - 1)) return true;
      } else if (limit === 1 && Object.hasOwn(members, key)) {
        return true;
      }
    }
  }
  return false;
}

/**
 * Whether an arguments object (itself one level) nests deeper than the
 * limit: the walk a generated module's fast path makes for a tool whose
 * schema does not bound the nesting.
 */
export function nestsTooDeep(args: Record<string, unknown>): boolean {
  for (const key in args) {
    const member = args[key];
    if (
      typeof member === "object" &&
      member !== null &&
      Object.hasOwn(args, key) &&
      depthExceeds(member, MAX_ARGUMENT_DEPTH - 1)
    ) {
      return true;
    }
  }
  return false;
}

/**
 * Whether `schema` proves that no object it accepts nests deeper than
 * `MAX_ARGUMENT_DEPTH` levels, so the depth walk can be left to a refusal:
 * the Rust runtime's `schema_bounds_depth`, the same reading (the generator
 * computes it for generated modules; a host computes it at load). Only a
 * speed matter: a schema it cannot bound is walked.
 */
export function schemaBoundsDepth(schema: unknown): boolean {
  if (mentionsInstanceRecursion(schema)) return false;
  const bound = levelsBound(schema, MAX_ARGUMENT_DEPTH);
  return bound !== undefined && bound <= MAX_ARGUMENT_DEPTH;
}

function mentionsInstanceRecursion(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(mentionsInstanceRecursion);
  if (!isObject(schema)) return false;
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$ref" || key === "$dynamicRef" || key === "$recursiveRef" || key === "uniqueItems") return true;
    if (mentionsInstanceRecursion(value)) return true;
  }
  return false;
}

function levelsBound(schema: unknown, budget: number): number | undefined {
  if (schema === false) return 0;
  if (!isObject(schema) || budget <= 0) return undefined;
  const inner = budget - 1;
  let bound: number | undefined;
  const tighten = (b: number | undefined) => {
    if (b !== undefined) bound = bound === undefined ? b : Math.min(bound, b);
  };
  let objects = true;
  let arrays = true;
  const type = schema["type"];
  if (typeof type === "string") {
    objects = type === "object";
    arrays = type === "array";
  } else if (Array.isArray(type) && type.every((t) => typeof t === "string")) {
    objects = type.includes("object");
    arrays = type.includes("array");
  } else if (type !== undefined) {
    return undefined;
  }
  const o = objects ? objectMembersBound(schema, inner) : 0;
  const a = arrays ? arrayItemsBound(schema, inner) : 0;
  tighten(o !== undefined && a !== undefined ? 1 + Math.max(o, a) : undefined);
  const values = schema["enum"];
  if (Array.isArray(values)) {
    let most: number | undefined = 0;
    for (const v of values) {
      const l = levelsWithin(v, MAX_ARGUMENT_DEPTH);
      most = l === undefined || most === undefined ? undefined : Math.max(most, l);
    }
    tighten(most);
  }
  const all = schema["allOf"];
  if (Array.isArray(all)) for (const s of all) tighten(levelsBound(s, inner));
  for (const key of ["anyOf", "oneOf"]) {
    const any = schema[key];
    if (Array.isArray(any)) {
      let most: number | undefined = 0;
      for (const s of any) {
        const b = levelsBound(s, inner);
        most = b === undefined || most === undefined ? undefined : Math.max(most, b);
      }
      tighten(most);
    }
  }
  return bound;
}

function objectMembersBound(map: Record<string, unknown>, budget: number): number | undefined {
  if (!Object.hasOwn(map, "additionalProperties")) return undefined;
  const additional = map["additionalProperties"];
  let most = additional === false ? 0 : levelsBound(additional, budget);
  if (most === undefined) return undefined;
  for (const key of ["properties", "patternProperties"]) {
    if (!Object.hasOwn(map, key)) continue;
    const members = map[key];
    if (!isObject(members)) return undefined;
    for (const s of Object.values(members)) {
      const b = levelsBound(s, budget);
      if (b === undefined) return undefined;
      most = Math.max(most, b);
    }
  }
  return most;
}

function arrayItemsBound(map: Record<string, unknown>, budget: number): number | undefined {
  if (!Object.hasOwn(map, "items")) return undefined;
  const items = map["items"];
  if (!(isObject(items) || typeof items === "boolean")) return undefined;
  let most = levelsBound(items, budget);
  if (most === undefined) return undefined;
  if (Object.hasOwn(map, "prefixItems")) {
    const prefix = map["prefixItems"];
    if (!Array.isArray(prefix)) return undefined;
    for (const s of prefix) {
      const b = levelsBound(s, budget);
      if (b === undefined) return undefined;
      most = Math.max(most, b);
    }
  }
  return most;
}

function levelsWithin(value: unknown, cap: number): number | undefined {
  if (cap < 1) return undefined;
  const members = Array.isArray(value) ? value : isObject(value) ? Object.values(value) : undefined;
  if (members === undefined) return 1;
  let most = 0;
  for (const v of members) {
    const l = levelsWithin(v, cap - 1);
    if (l === undefined) return undefined;
    most = Math.max(most, l);
  }
  return most + 1;
}

/** A message cut at `MESSAGE_LIMIT` UTF-8 bytes (on a code point), with `…`. */
function truncate(message: string): string {
  let bytes = 0;
  let i = 0;
  while (i < message.length) {
    const point = message.codePointAt(i) ?? 0;
    const size = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
    if (bytes + size > MESSAGE_LIMIT) return `${message.slice(0, i)}…`;
    bytes += size;
    i += point >= 0x10000 ? 2 : 1;
  }
  return message;
}

type Validators = { fast: ValidateFunction; all: () => ValidateFunction };

/** Every `inputSchema` compiled so far, by its text. */
const COMPILED = new Map<string, Validators>();

const OPTIONS = { strict: false, validateFormats: false, addUsedSchema: false } as const;

let instances: { fast: Ajv[]; all: Ajv[] } | undefined;

/** The Ajv instances, by dialect (2020-12, 2019-09, draft-07), made on first use. */
function ajvs(all: boolean): Ajv[] {
  instances ??= { fast: [], all: [] };
  const set = all ? instances.all : instances.fast;
  if (set.length === 0) {
    const options = { ...OPTIONS, allErrors: all };
    set.push(new Ajv2020(options), new Ajv2019(options), new Ajv(options));
  }
  return set;
}

function compile(schema: Record<string, unknown>, all: boolean): ValidateFunction {
  const dialect = schema["$schema"];
  const [v2020, v2019, v07] = ajvs(all) as [Ajv, Ajv, Ajv];
  const ajv =
    dialect === "https://json-schema.org/draft/2019-09/schema"
      ? v2019
      : dialect === "http://json-schema.org/draft-07/schema" ||
          dialect === "http://json-schema.org/draft-07/schema#"
        ? v07
        : v2020;
  return ajv.compile(schema);
}

/**
 * A JSON Schema compiled as the runtime compiles `inputSchema`s (the same
 * Ajv set-up and dialects), as a predicate: for code that evaluates schemas
 * beside generated modules, such as a host's `argumentPatterns`. Throws when
 * the schema does not compile.
 */
export function schemaPredicate(schema: Record<string, unknown>): (value: unknown) => boolean {
  const validate = compile(schema, false);
  return (value) => validate(value) === true;
}

/** One outcome as a generated module writes it, before its tool binds it. */
export interface OutcomeParts {
  readonly variant: string | null;
  /** Every hint as JSON text: the four core hints in wire order, then the others by name. */
  readonly hints: string;
  readonly scopes: string;
  /** What follows the annotations in the SEP-1862 result (`resolve`, `securitySchemes`). */
  readonly sep1862Tail: string;
  /**
   * Each dialect's whole result text, when the module gives them; otherwise
   * they are derived from the hints, the tool's name and its SEP-1862 head
   * (the compiler gives them only where its texts are not in that form).
   */
  readonly texts: Readonly<Record<Dialect, string>> | null;
}

/** An outcome of a generated module (its texts are JSON). */
export function outcome(
  variant: string | null,
  hints: string,
  scopes: string,
  sep1862Tail: string,
  texts: Readonly<Record<Dialect, string>> | null = null,
): OutcomeParts {
  return { variant, hints, scopes, sep1862Tail, texts };
}

/** What a call resolved to: its tool, variant, annotations, scopes, and each dialect's result. */
export class Resolved {
  readonly tool: string;
  /** The variant that matched; `null` when none did and the static annotations apply. */
  readonly variant: string | null;
  readonly #parts: OutcomeParts;
  readonly #head: string;
  #extension: string | undefined;
  #sep1862: string | undefined;
  #annotationsText: string | undefined;
  #annotations: Readonly<Record<string, boolean>> | undefined;
  #scopes: readonly string[] | undefined;

  constructor(tool: string, head: string, parts: OutcomeParts) {
    this.tool = tool;
    this.variant = parts.variant;
    this.#head = head;
    this.#parts = parts;
  }

  /** Every hint (the four core ones, then `agencyHint` and declared ones), in order. */
  get annotations(): Readonly<Record<string, boolean>> {
    this.#annotations ??= Object.freeze(JSON.parse(this.#parts.hints) as Record<string, boolean>);
    return this.#annotations;
  }

  /** The OAuth scopes the call needs. */
  get requiredScopes(): readonly string[] {
    this.#scopes ??= Object.freeze(JSON.parse(this.#parts.scopes) as string[]);
    return this.#scopes;
  }

  /** The JSON-RPC `result` text of `dialect`. */
  resultJson(dialect: Dialect): string {
    const texts = this.#parts.texts;
    switch (dialect) {
      case "extension":
        return (this.#extension ??= texts?.extension ?? this.#extensionText());
      case "sep1862":
        return (this.#sep1862 ??= texts?.sep1862 ?? this.#head + this.#parts.hints + this.#parts.sep1862Tail);
      case "annotations":
        return (this.#annotationsText ??= texts?.annotations ?? `{"annotations":${this.#parts.hints}}`);
      default:
        throw new RpcError(RpcError.INVALID_PARAMS, `unknown dialect: ${String(dialect)}`);
    }
  }

  /** The extension's result: the tool's name and the four core hints, in wire order. */
  #extensionText(): string {
    const a = this.annotations;
    return (
      `{"resultType":"complete","name":${JSON.stringify(this.tool)},"annotations":` +
      `{"readOnlyHint":${a["readOnlyHint"] === true},"destructiveHint":${a["destructiveHint"] === true},` +
      `"idempotentHint":${a["idempotentHint"] === true},"openWorldHint":${a["openWorldHint"] === true}}}`
    );
  }
}

/** A resolvable tool of a generated module. */
export class Tool {
  readonly name: string;
  /**
   * Whether the tool's `inputSchema` proves that no object it accepts nests
   * deeper than the limit (the nesting is then checked only for a refusal).
   */
  readonly bounded: boolean;
  /** Each outcome, in the matching function's order (the static one last). */
  readonly outcomes: readonly Resolved[];
  /** The matching function: the index of the outcome validated arguments land in. */
  readonly match: (args: Args) => number;
  readonly #schema: string;
  #validators: Validators | RpcError | undefined;
  /** The compiled fast validator, once `#validators` holds one. */
  #fast: ValidateFunction | undefined;

  /**
   * `schema` is the tool's `inputSchema` as JSON text; `bounded`, whether it
   * proves that no object it accepts nests deeper than the limit (the
   * nesting is then checked only for a refusal); `head`, the text every
   * SEP-1862 result of the tool starts with.
   */
  constructor(
    name: string,
    schema: string,
    bounded: boolean,
    head: string,
    outcomes: readonly OutcomeParts[],
    match: (args: Args) => number,
  ) {
    this.name = name;
    this.#schema = schema;
    this.bounded = bounded;
    this.outcomes = outcomes.map((parts) => new Resolved(name, head, parts));
    this.match = match;
  }

  /**
   * The compiled validator of the tool's `inputSchema`, once a call has
   * compiled it (`undefined` before): the generated module's fast path
   * calls it from its own `resolve`, so that the call site is the
   * module's, not one shared by every module in the process.
   */
  get validator(): ValidateFunction | undefined {
    return this.#fast;
  }

  /** Validates the arguments, then matches them. Throws `RpcError`. */
  resolve(args: unknown): Resolved {
    // The common case in one method: valid arguments, a known outcome.
    const fast = this.#fast;
    if (fast !== undefined && isObject(args) && (this.bounded || !nestsTooDeep(args)) && fast(args)) {
      const resolved = this.outcomes[this.match(args)];
      if (resolved !== undefined) return resolved;
    }
    return this.resolveValidated(this.validate(args));
  }

  /** Matches arguments already validated against the tool's `inputSchema`. */
  resolveValidated(args: Args): Resolved {
    if (!isObject(args)) {
      throw new RpcError(RpcError.INVALID_PARAMS, `arguments for tool ${this.name} must be an object`);
    }
    const index = this.match(args);
    const resolved = this.outcomes[index];
    if (resolved === undefined) {
      throw new RpcError(RpcError.INTERNAL_ERROR, `generated resolver data has no outcome ${index}`);
    }
    return resolved;
  }

  /** The arguments as an object the schema accepts, or the `RpcError` refusing them. */
  validate(args: unknown): Args {
    const validators = this.#compiled();
    if (validators instanceof RpcError) throw validators;
    if (isObject(args) && (this.bounded || !nestsTooDeep(args)) && validators.fast(args)) {
      return args;
    }
    throw this.#refusal(args, validators);
  }

  #compiled(): Validators | RpcError {
    if (this.#validators === undefined) {
      try {
        // Tools with the same schema text share one compiled validator (as
        // in the Python runtime): one function that runs hot, not one per
        // tool that each stay cold.
        let validators = COMPILED.get(this.#schema);
        if (validators === undefined) {
          const schema = JSON.parse(this.#schema) as Record<string, unknown>;
          const fast = compile(schema, false);
          let all: ValidateFunction | undefined;
          validators = { fast, all: () => (all ??= compile(schema, true)) };
          COMPILED.set(this.#schema, validators);
        }
        this.#validators = validators;
        this.#fast = validators.fast;
      } catch (e) {
        this.#validators = new RpcError(
          RpcError.INTERNAL_ERROR,
          `the inputSchema of tool ${this.name} does not compile: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
    }
    return this.#validators;
  }

  #refusal(args: unknown, validators: Validators): RpcError {
    if (!isObject(args)) {
      return new RpcError(RpcError.INVALID_PARAMS, `arguments for tool ${this.name} must be an object`);
    }
    if (nestsTooDeep(args)) {
      return new RpcError(
        RpcError.INVALID_PARAMS,
        `arguments for tool ${this.name} nest deeper than ${MAX_ARGUMENT_DEPTH} levels`,
      );
    }
    const all = validators.all();
    all(args);
    const errors = (all.errors ?? []).slice(0, MAX_REPORTED_ERRORS).map((e) => ({
      instancePath: e.instancePath,
      message: truncate(e.message ?? e.keyword),
    }));
    return new RpcError(RpcError.INVALID_PARAMS, `invalid arguments for tool ${this.name}`, errors);
  }
}

/** A generated module as a value, for code that serves any resolver. */
export interface Rules {
  readonly serverName: string;
  readonly serverVersion: string;
  readonly fingerprint: string;
  readonly signatureJson: string;
  readonly toolNames: readonly string[];
  toolsListJson(dialect: Dialect): string;
  resolve(name: string, args: unknown): Resolved;
  resolveValidated(name: string, args: Args): Resolved;
}
