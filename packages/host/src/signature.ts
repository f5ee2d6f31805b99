// A signature document (docs/signature.md), read and compiled for
// evaluation: the TypeScript counterpart of the Rust host library's
// `Signature`, with the same host-side evaluation recipe and the same
// answers (the project's differential test holds them byte for byte).
//
// - every tool's `inputSchema` is compiled with the runtime's validator
//   (`@mcp-resolve/runtime`: Ajv, set up as for generated resolvers), so an
//   invalid call is refused with the same message as in Rust;
// - each `resolvedVariants` entry's `argumentPatterns` become one object
//   schema whose listed arguments are required, except those whose pattern
//   is `false` (absent); the first entry that matches gives the variant;
// - a pattern outside what JavaScript evaluates exactly as Rust does is an
//   error when the document loads (`portable.ts`).

import { createHash } from "node:crypto";

import canonicalize from "canonicalize";
import {
  type Args,
  RpcError,
  OBJECT_PROTOTYPE,
  Tool,
  isObject,
  jsonEqual,
  own,
  schemaBoundsDepth,
  schemaPredicate,
} from "@mcp-resolve/runtime";

import { firstNotPortable, firstRefWithSiblings } from "./portable.js";
import { Violation } from "./violation.js";

/** The four core hints, in wire order, with their MCP defaults. */
export const CORE_HINTS: readonly (readonly [string, boolean])[] = [
  ["readOnlyHint", false],
  ["destructiveHint", true],
  ["idempotentHint", false],
  ["openWorldHint", true],
];

/** Members a fingerprint leaves out. */
const NOT_FINGERPRINTED = new Set(["fingerprint", "resultType", "_meta"]);

/** A signature document that cannot be used. */
export class SignatureError extends Error {
  override name = "SignatureError";
}

/**
 * A hint set, every hint explicit: the four core hints in wire order (their
 * MCP defaults where left out), then the other boolean hints in document
 * order. `title` is not a hint.
 */
export type Hints = Readonly<Record<string, boolean>>;

function readHints(value: unknown, where: string): { hints: Hints; title: string | undefined } {
  if (!isObject(value)) throw new SignatureError(`${where}: \`annotations\` must be an object`);
  const hints: Record<string, boolean> = {};
  for (const [hint, fallback] of CORE_HINTS) {
    const v = value[hint];
    hints[hint] = typeof v === "boolean" ? v : fallback;
  }
  let title: string | undefined;
  for (const [hint, v] of Object.entries(value)) {
    if (hint === "title") {
      if (typeof v !== "string") throw new SignatureError(`${where}: annotation \`title\` must be a string`);
      title = v;
    } else if (typeof v !== "boolean") {
      throw new SignatureError(`${where}: annotation \`${hint}\` must be a boolean`);
    } else if (!CORE_HINTS.some(([core]) => core === hint)) {
      hints[hint] = v;
    }
  }
  return { hints, title };
}

function readScopes(value: unknown, where: string): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((s) => typeof s === "string")) {
    throw new SignatureError(`${where}: \`requiredScopes\` must be an array of strings`);
  }
  return value as string[];
}

/** The `sha256:` fingerprint of a document (RFC 8785 + SHA-256, `fingerprint`, `resultType` and `_meta` left out). */
export function fingerprint(document: Record<string, unknown>): string {
  const body = Object.fromEntries(Object.entries(document).filter(([key]) => !NOT_FINGERPRINTED.has(key)));
  const text = canonicalize(body);
  if (text === undefined) throw new SignatureError("the document has no canonical form");
  return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

/**
 * The patterns as direct tests on an arguments object, where each is
 * `false` (absent), `{const}` or `{enum}` (what the compiler writes for
 * equality and membership): each argument looked up once as an own
 * member (read as `OBJECT_PROTOTYPE` in the runtime explains), compared by
 * JSON value. `undefined` for any other pattern (the
 * compiled schema decides then). Applied to arguments the `inputSchema`
 * accepted, so to an object.
 */
function directTest(patterns: Readonly<Record<string, unknown>>): ((args: unknown) => boolean) | undefined {
  // [key, absent, values]: absent when the pattern is `false`, else one of `values`.
  const tests: [string, boolean, readonly unknown[]][] = [];
  for (const [key, pattern] of Object.entries(patterns)) {
    if (pattern === false) {
      tests.push([key, true, []]);
      continue;
    }
    if (!isObject(pattern)) return undefined;
    const keywords = Object.keys(pattern);
    if (keywords.length !== 1) return undefined;
    if (keywords[0] === "const") tests.push([key, false, [pattern["const"]]]);
    else if (keywords[0] === "enum" && Array.isArray(pattern["enum"])) tests.push([key, false, pattern["enum"]]);
    else return undefined;
  }
  const keys = tests.map((t) => t[0]);
  const absent = tests.map((t) => t[1]);
  const wanted = tests.map((t) => t[2]);
  return (args) => {
    if (!isObject(args)) return false;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      // An own member or none, read as the generated modules read it.
      const value = OBJECT_PROTOTYPE[key] === undefined ? args[key] : own(args, key);
      if (absent[i]) {
        if (value !== undefined) return false;
        continue;
      }
      if (value === undefined) return false;
      const values = wanted[i] as readonly unknown[];
      let found = false;
      for (let j = 0; j < values.length; j++) {
        const want = values[j];
        if (value === want || jsonEqual(value, want)) {
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    return true;
  };
}

/** See `SignedTool.#table`. */
function landingTable(variants: readonly SignedVariant[]): [string, Map<unknown, number>] | undefined {
  let key: string | undefined;
  const table = new Map<unknown, number>();
  for (const [index, variant] of variants.entries()) {
    const entries = Object.entries(variant.argumentPatterns);
    if (entries.length !== 1) return undefined;
    const [name, pattern] = entries[0] as [string, unknown];
    if (key !== undefined && name !== key) return undefined;
    key = name;
    if (!isObject(pattern) || Object.keys(pattern).length !== 1) return undefined;
    const values = Object.hasOwn(pattern, "const")
      ? [pattern["const"]]
      : Array.isArray(pattern["enum"])
        ? (pattern["enum"] as unknown[])
        : undefined;
    if (values === undefined) return undefined;
    for (const value of values) {
      const scalar = value === null || ["string", "number", "boolean"].includes(typeof value);
      if (!scalar) return undefined;
      if (!table.has(value)) table.set(value, index);
    }
  }
  return key === undefined ? undefined : [key, table];
}

/** One entry of a tool's `resolvedVariants`, compiled. */
export class SignedVariant {
  readonly name: string;
  readonly argumentPatterns: Readonly<Record<string, unknown>>;
  readonly annotations: Hints;
  readonly requiredScopes: readonly string[];
  readonly #matches: (args: unknown) => boolean;

  constructor(entry: unknown, where: string) {
    if (!isObject(entry)) throw new SignatureError(`${where}: must be an object`);
    if (typeof entry["name"] !== "string") throw new SignatureError(`${where}: \`name\` must be a string`);
    this.name = entry["name"];
    const when = entry["when"];
    const patterns = isObject(when) ? when["argumentPatterns"] : undefined;
    if (!isObject(patterns)) throw new SignatureError(`${where}: \`when.argumentPatterns\` must be an object`);
    this.argumentPatterns = patterns;
    this.annotations = readHints(entry["annotations"], where).hints;
    this.requiredScopes = readScopes(entry["requiredScopes"], where);
    const required = Object.keys(patterns).filter((key) => patterns[key] !== false);
    const schema = { type: "object", properties: patterns, required };
    const unportable = firstNotPortable(schema);
    if (unportable !== undefined) {
      throw new SignatureError(
        `variant \`${this.name}\`: \`argumentPatterns\` pattern \`${unportable[0]}\` cannot be evaluated in JavaScript exactly as in Rust: ${unportable[1]}`,
      );
    }
    let bySchema: (args: unknown) => boolean;
    try {
      bySchema = schemaPredicate(schema);
    } catch (e) {
      throw new SignatureError(`variant \`${this.name}\`: \`argumentPatterns\` do not compile: ${(e as Error).message}`);
    }
    this.#matches = directTest(patterns) ?? bySchema;
  }

  /** Whether `args` satisfy the entry's `argumentPatterns`. */
  matches(args: unknown): boolean {
    return this.#matches(args);
  }
}

/** One tool of a signature, compiled. */
export class SignedTool {
  readonly name: string;
  /** The tool object as the document has it. */
  readonly def: Readonly<Record<string, unknown>>;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** The static (worst-case) annotations, every hint explicit. */
  readonly annotations: Hints;
  /** `annotations.title`, when the document has one. */
  readonly title: string | undefined;
  readonly requiredScopes: readonly string[];
  /** The entries of `resolvedVariants`; empty when the tool is not resolvable. */
  readonly variants: readonly SignedVariant[];
  /** Whether the document gives the tool `resolvedVariants`. */
  readonly resolvable: boolean;
  readonly #validator: Tool;
  /**
   * When every variant tests one argument, the same one, for equality with
   * JSON scalars (`const`, or `enum` of them): the argument and the index of
   * the first variant each value lands in — one lookup instead of a test per
   * variant. (`Map` compares numbers by value, `0` and `-0` alike, as JSON
   * Schema does.)
   */
  readonly #table: [string, Map<unknown, number>] | undefined;

  constructor(def: unknown, index: number) {
    const at = `tools[${index}]`;
    if (!isObject(def)) throw new SignatureError(`${at}: a tool must be an object`);
    if (typeof def["name"] !== "string") throw new SignatureError(`${at}: \`name\` must be a string`);
    this.name = def["name"];
    const where = `${at} (tool \`${this.name}\`)`;
    this.def = def;
    if (!isObject(def["inputSchema"])) throw new SignatureError(`${where}: \`inputSchema\` must be an object`);
    this.inputSchema = def["inputSchema"];
    for (const key of ["title", "description"]) {
      if (def[key] !== undefined && typeof def[key] !== "string") {
        throw new SignatureError(`${where}: \`${key}\` must be a string`);
      }
    }
    const { hints, title } = readHints(def["annotations"], where);
    this.annotations = hints;
    this.title = title;
    this.requiredScopes = readScopes(def["requiredScopes"], where);
    const unportable = firstNotPortable(this.inputSchema);
    if (unportable !== undefined) {
      throw new SignatureError(
        `${where}: \`inputSchema\` pattern \`${unportable[0]}\` cannot be evaluated in JavaScript exactly as in Rust: ${unportable[1]}`,
      );
    }
    const beside = firstRefWithSiblings(this.inputSchema);
    if (beside !== undefined) {
      throw new SignatureError(
        `${where}: \`inputSchema\` has \`${beside[0]}\` beside \`$ref\` at \`${beside[1]}\`, which cannot be evaluated in JavaScript exactly as in Rust: draft-07 reads a \`$ref\` alone, Ajv applies its siblings too`,
      );
    }
    const entries = def["resolvedVariants"];
    this.resolvable = entries !== undefined && entries !== null;
    if (this.resolvable && !Array.isArray(entries)) {
      throw new SignatureError(`${where}: \`resolvedVariants\` must be an array`);
    }
    this.variants = this.resolvable
      ? (entries as unknown[]).map((entry, i) => new SignedVariant(entry, `${where}: resolvedVariants[${i}]`))
      : [];
    this.#table = landingTable(this.variants);
    this.#validator = new Tool(
      this.name,
      JSON.stringify(this.inputSchema),
      schemaBoundsDepth(this.inputSchema),
      "",
      [],
      () => 0,
    );
  }

  /** The arguments as an object the `inputSchema` accepts; throws the runtime's `RpcError` otherwise. */
  validate(args: unknown): Args {
    return this.#validator.validate(args);
  }

  /** The index of the first entry whose `argumentPatterns` match, or -1. Does not validate. */
  land(args: unknown): number {
    if (this.#table !== undefined) {
      const [key, table] = this.#table;
      if (!isObject(args)) return -1;
      // An own member or none, read as the generated modules read it
      // (`OBJECT_PROTOTYPE` in the runtime); absent lands nowhere.
      const value = OBJECT_PROTOTYPE[key] === undefined ? args[key] : own(args, key);
      return table.get(value) ?? -1;
    }
    const variants = this.variants;
    for (let i = 0; i < variants.length; i++) {
      if ((variants[i] as SignedVariant).matches(args)) return i;
    }
    return -1;
  }

  /** The host-side evaluation recipe for this tool. Throws a `Violation`. */
  expect(args: unknown): Expected {
    try {
      this.validate(args);
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      throw new Violation(
        "invalid-arguments",
        this.name,
        `the signature declares no resolution for arguments its inputSchema refuses (${e.message})`,
      );
    }
    const index = this.land(args);
    return new Expected(this, index < 0 ? undefined : this.variants[index]);
  }
}

/** What the signature declares for one call. */
export class Expected {
  readonly tool: SignedTool;
  /** The entry that matched; `undefined` when the static annotations apply. */
  readonly variant: SignedVariant | undefined;

  constructor(tool: SignedTool, variant: SignedVariant | undefined) {
    this.tool = tool;
    this.variant = variant;
  }

  /** The annotations the call resolves to, every hint explicit. */
  get annotations(): Hints {
    return this.variant?.annotations ?? this.tool.annotations;
  }

  /** The scopes the call needs. */
  get requiredScopes(): readonly string[] {
    return this.variant?.requiredScopes ?? this.tool.requiredScopes;
  }

  /** The extension's result for the call: `{resultType, name, annotations}` with the four core hints. */
  extensionResult(): { resultType: "complete"; name: string; annotations: Record<string, boolean> } {
    const all = this.annotations;
    const annotations: Record<string, boolean> = {};
    for (const [hint] of CORE_HINTS) annotations[hint] = all[hint] as boolean;
    return { resultType: "complete", name: this.tool.name, annotations };
  }
}

/** A signature document, checked and compiled for evaluation. */
export class Signature {
  readonly document: Readonly<Record<string, unknown>>;
  readonly tools: readonly SignedTool[];
  readonly #byName: ReadonlyMap<string, SignedTool>;

  /** Reads the document and compiles every schema in it. The fingerprint is not recomputed: see `verified`. */
  constructor(document: unknown) {
    if (!isObject(document)) throw new SignatureError("a signature document must be a JSON object");
    const tools = document["tools"];
    if (!Array.isArray(tools)) throw new SignatureError("a signature document needs a `tools` array");
    this.document = document;
    const compiled: SignedTool[] = [];
    const byName = new Map<string, SignedTool>();
    tools.forEach((tool, index) => {
      const signed = new SignedTool(tool, index);
      if (byName.has(signed.name)) throw new SignatureError(`tool \`${signed.name}\` is listed twice`);
      byName.set(signed.name, signed);
      compiled.push(signed);
    });
    this.tools = compiled;
    this.#byName = byName;
  }

  /** Parses JSON text. */
  static fromJson(text: string): Signature {
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (e) {
      throw new SignatureError(`a signature document must be JSON: ${(e as Error).message}`);
    }
    return new Signature(document);
  }

  /** Like the constructor, and the document's `fingerprint` must be present and equal the recomputed one. */
  static verified(document: unknown): Signature {
    const signature = new Signature(document);
    const declared = signature.fingerprint;
    if (declared === undefined) throw new SignatureError("the signature document has no `fingerprint`");
    const actual = fingerprint(signature.document);
    if (declared !== actual) {
      throw new SignatureError(`the document's fingerprint does not verify: claims ${declared}, content hashes to ${actual}`);
    }
    return signature;
  }

  /** Like `verified`, and the fingerprint must be `pin`, the one the host stored when the user approved the server. */
  static pinned(document: unknown, pin: string): Signature {
    const signature = Signature.verified(document);
    if (signature.fingerprint !== pin) {
      throw new SignatureError(`the signature's fingerprint is ${signature.fingerprint ?? "missing"} but ${pin} is pinned`);
    }
    return signature;
  }

  /** The document's `fingerprint` member, as written. */
  get fingerprint(): string | undefined {
    const value = this.document["fingerprint"];
    return typeof value === "string" ? value : undefined;
  }

  /** The tool called `name`. */
  tool(name: string): SignedTool | undefined {
    return this.#byName.get(name);
  }

  /**
   * The host-side evaluation recipe: what the signature declares for the
   * call. Throws a `Violation` for a tool the signature lacks
   * (`unknown-tool`) and for arguments its `inputSchema` refuses
   * (`invalid-arguments`).
   */
  expect(name: string, args: unknown): Expected {
    const tool = this.tool(name);
    if (tool === undefined) throw new Violation("unknown-tool", name, `the signature has no tool \`${name}\``);
    return tool.expect(args);
  }
}
