// Checking a server's `tools/list` and resolution results against its
// signature document: the Rust host library's `verify_tools_list` and
// `verify_resolution`, with the same violation kinds and messages.

import { EXTENSION_ID, isObject, jsonEqual } from "@mcp-resolve/runtime";

import { CORE_HINTS, type Expected, type Hints, type Signature, type SignedTool } from "./signature.js";
import { Violation, finish } from "./violation.js";

/** The direction of each core hint's worst value: a claim away from it is less conservative. */
const WORST: Readonly<Record<string, boolean>> = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
  agencyHint: true,
};

function show(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}

/**
 * Compares the hints a server reports with the signature's complete set:
 * every declared hint the server reports must have the same value; a core
 * hint left out counts as its MCP default; `onlyCore` limits the comparison
 * to the four core hints; a boolean hint the signature does not declare is
 * a violation.
 */
function compareHints(
  tool: string,
  expected: Hints,
  reported: Record<string, unknown>,
  onlyCore: boolean,
  context: string,
  out: Violation[],
): void {
  const core = new Map<string, boolean | null>();
  for (const [hint, value] of Object.entries(reported)) {
    const isCore = CORE_HINTS.some(([name]) => name === hint);
    if (typeof value === "boolean") {
      if (isCore) core.set(hint, value);
      else if (!Object.hasOwn(expected, hint)) {
        out.push(
          new Violation("undeclared-hint", tool, `${context} reports \`${hint}\`, which the signature does not declare`),
        );
      }
    } else if (typeof value === "string" && hint === "title") {
      // A display title is not a hint.
    } else {
      if (isCore) core.set(hint, null);
      out.push(new Violation("malformed", tool, `${context} reports \`${hint}\` as ${show(value)}, not a boolean`));
    }
  }
  const differs = (hint: string, want: boolean, got: boolean, leftOut: boolean) => {
    if (got === want) return;
    const v = new Violation(
      "annotation",
      tool,
      `${context} has \`${hint}: ${got}\`${leftOut ? " (left out, so the MCP default)" : ""} where the signature declares \`${want}\``,
    );
    const worst = WORST[hint];
    v.lessConservative = worst === undefined || want === worst;
    out.push(v);
  };
  for (const [hint, fallback] of CORE_HINTS) {
    const want = expected[hint] as boolean;
    const got = core.get(hint);
    if (got === undefined) differs(hint, want, fallback, true);
    else if (got !== null) differs(hint, want, got, false);
  }
  if (!onlyCore) {
    const extras = Object.keys(expected)
      .filter((hint) => !CORE_HINTS.some(([name]) => name === hint))
      .sort();
    for (const hint of extras) {
      const got = reported[hint];
      if (typeof got === "boolean") differs(hint, expected[hint] as boolean, got, false);
    }
  }
}

/** A sorted list's text, as the Rust host writes a set of scopes. */
function showSet(scopes: Iterable<string>): string {
  return `{${[...new Set(scopes)]
    .sort()
    .map((s) => JSON.stringify(s))
    .join(", ")}}`;
}

function compareScopes(
  tool: string,
  expected: readonly string[],
  reported: ReadonlySet<string>,
  context: string,
  out: Violation[],
): void {
  const want = new Set(expected);
  const same = want.size === reported.size && [...want].every((s) => reported.has(s));
  if (same) return;
  const v = new Violation(
    "scopes",
    tool,
    `${context} asks for scopes ${showSet(reported)} where the signature declares ${showSet(want)}`,
  );
  v.lessConservative = ![...reported].every((s) => want.has(s));
  out.push(v);
}

/** The scopes of SEP-1488 `securitySchemes`: `undefined` when absent, a message when malformed. */
function scopesOfSchemes(tool: Record<string, unknown>): Set<string> | string | undefined {
  if (!Object.hasOwn(tool, "securitySchemes")) return undefined;
  const schemes = tool["securitySchemes"];
  if (!Array.isArray(schemes)) return "`securitySchemes` is not an array";
  const scopes = new Set<string>();
  for (const scheme of schemes) {
    if (isObject(scheme) && Object.hasOwn(scheme, "scopes")) {
      const list = scheme["scopes"];
      if (!Array.isArray(list) || !list.every((s) => typeof s === "string")) {
        return "`securitySchemes[].scopes` must be an array of strings";
      }
      for (const s of list) scopes.add(s as string);
    }
  }
  return scopes;
}

/** The members of MCP's `Tool` the signature pins besides its annotations. */
const PINNED_FIELDS = ["title", "description", "inputSchema", "outputSchema", "icons", "execution", "_meta"] as const;

/** A listed tool without the dialects' resolvable markers. */
function unmark(tool: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...tool };
  delete copy["resolve"];
  delete copy["dynamicAnnotations"];
  const meta = copy["_meta"];
  if (isObject(meta) && Object.hasOwn(meta, EXTENSION_ID)) {
    const rest = { ...meta };
    delete rest[EXTENSION_ID];
    if (Object.keys(rest).length === 0) delete copy["_meta"];
    else copy["_meta"] = rest;
  }
  return copy;
}

function compareToolFields(signed: SignedTool, listed: Record<string, unknown>, context: string, out: Violation[]): void {
  const unmarked = unmark(listed);
  for (const field of PINNED_FIELDS) {
    let want = signed.def[field];
    if (field === "_meta" && isObject(want) && Object.keys(want).length === 0) want = undefined;
    const got = unmarked[field];
    const same = want === undefined ? got === undefined : got !== undefined && jsonEqual(got, want);
    if (!same) {
      out.push(new Violation("tool-changed", signed.name, `${context} has a \`${field}\` that differs from the signature's`));
    }
  }
}

function markedResolvable(tool: Record<string, unknown>): boolean {
  const meta = tool["_meta"];
  const marker = isObject(meta) ? meta[EXTENSION_ID] : undefined;
  return (
    (isObject(marker) && marker["resolvable"] === true) ||
    tool["resolve"] === true ||
    tool["dynamicAnnotations"] === true
  );
}

/**
 * Checks a `tools/list` result (`{tools: [...]}`, or the bare array) against
 * the signature: every listed tool must be in it with the same members of
 * MCP's `Tool`, static annotations equal to the signature's, and a
 * resolvable marker only if the signature gives it variants. Throws
 * `Violations`.
 */
export function verifyToolsList(signature: Signature, result: unknown): void {
  const tools = Array.isArray(result) ? result : isObject(result) ? result["tools"] : undefined;
  if (!Array.isArray(tools)) {
    finish([new Violation("malformed", "", "a tools/list result needs a `tools` array")]);
    return;
  }
  const out: Violation[] = [];
  const seen = new Set<string>();
  for (const tool of tools) {
    if (!isObject(tool)) {
      out.push(new Violation("malformed", "", `tools/list holds ${show(tool)}, not a tool object`));
      continue;
    }
    const name = tool["name"];
    if (typeof name !== "string") {
      out.push(new Violation("malformed", "", "tools/list holds a tool without a string `name`"));
      continue;
    }
    if (seen.has(name)) {
      out.push(new Violation("duplicate-tool", name, "tools/list names the tool twice"));
      continue;
    }
    seen.add(name);
    const signed = signature.tool(name);
    if (signed === undefined) {
      out.push(new Violation("unknown-tool", name, "tools/list offers a tool the signature does not have"));
      continue;
    }
    compareToolFields(signed, tool, "tools/list", out);
    const annotations = tool["annotations"];
    const title = isObject(annotations) ? annotations["title"] : undefined;
    if ((typeof title === "string" ? title : undefined) !== signed.title) {
      out.push(
        new Violation("tool-changed", name, "tools/list has an `annotations.title` that differs from the signature's"),
      );
    }
    if (annotations === undefined) {
      compareHints(name, signed.annotations, {}, false, "tools/list", out);
    } else if (isObject(annotations)) {
      compareHints(name, signed.annotations, annotations, false, "tools/list", out);
    } else {
      out.push(new Violation("malformed", name, `tools/list has \`annotations\` ${show(annotations)}, not an object`));
    }
    if (markedResolvable(tool) && !signed.resolvable) {
      out.push(
        new Violation("not-resolvable", name, "tools/list marks the tool resolvable but the signature gives it no variants"),
      );
    }
    const scopes = scopesOfSchemes(tool);
    if (typeof scopes === "string") out.push(new Violation("malformed", name, scopes));
    else if (scopes !== undefined) compareScopes(name, signed.requiredScopes, scopes, "tools/list", out);
  }
  finish(out);
}

/**
 * Checks a resolution result, in any dialect, against what the signature
 * declares for the call (the host-side evaluation recipe). Returns the
 * signature's answer, which the host should act on; throws `Violations`.
 */
export function verifyResolution(signature: Signature, name: string, args: unknown, result: unknown): Expected {
  let expected: Expected;
  try {
    expected = signature.expect(name, args);
  } catch (e) {
    if (e instanceof Violation) finish([e]);
    throw e;
  }
  const want = expected.annotations;
  const context =
    expected.variant === undefined
      ? "the resolution (static annotations)"
      : `the resolution (variant \`${expected.variant.name}\`)`;
  const malformed = (message: string): never => {
    finish([new Violation("malformed", name, message)]);
    throw new Error("unreachable");
  };
  if (!isObject(result)) return malformed(`a resolution result must be an object, not ${show(result)}`);
  const out: Violation[] = [];
  if (Object.hasOwn(result, "tool")) {
    const tool = result["tool"];
    if (!isObject(tool)) return malformed("`tool` must be an object");
    if (tool["name"] !== name) {
      return malformed(`the result describes tool ${show(tool["name"] ?? null)}, not \`${name}\``);
    }
    compareToolFields(expected.tool, tool, "the resolved tool", out);
    const reported = tool["annotations"];
    if (!isObject(reported)) return malformed("the resolved tool has no `annotations` object");
    compareHints(name, want, reported, false, context, out);
    const scopes = scopesOfSchemes(tool);
    if (typeof scopes === "string") out.push(new Violation("malformed", name, scopes));
    else if (scopes !== undefined) compareScopes(name, expected.requiredScopes, scopes, context, out);
  } else if (Object.hasOwn(result, "resultType")) {
    if (result["resultType"] !== "complete") {
      return malformed(`\`resultType\` is ${show(result["resultType"])}; only a complete result carries annotations`);
    }
    if (result["name"] !== name) {
      return malformed(`the result names tool ${show(result["name"] ?? null)}, not \`${name}\``);
    }
    const reported = result["annotations"];
    if (!isObject(reported)) return malformed("the result has no `annotations` object");
    compareHints(name, want, reported, true, context, out);
  } else if (Object.hasOwn(result, "annotations")) {
    const reported = result["annotations"];
    if (!isObject(reported)) return malformed("`annotations` must be an object");
    compareHints(name, want, reported, false, context, out);
  } else {
    return malformed("the result has none of `tool`, `resultType` or `annotations`");
  }
  finish(out);
  return expected;
}
