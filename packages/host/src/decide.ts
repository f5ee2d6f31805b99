// What a TypeScript host decides on before it asks the user about a call:
// the annotations of this call, from the best source there is, checked, and
// the source named.
//
// 1. `server`: the server's `tools/resolve`, when it offers the extension
//    and lists the tool resolvable — checked against the conservative bound
//    of the listed static annotations (the extension's client-side check)
//    and, when the host holds the server's signature document, against it
//    (the Rust host's `verify_resolution`): a resolution that widens past
//    either is refused, and the host falls back;
// 2. `signature`: resolved locally from the signature document's
//    `resolvedVariants` (`argumentPatterns`), as `mcp-resolve-host` does;
// 3. `static`: the tool's static annotations (the worst case), MCP's
//    defaults for hints left out.
//
// Works with a connected client of the TypeScript SDK v2
// (`@modelcontextprotocol/client`) or v1 (`@modelcontextprotocol/sdk`): it
// uses `request`, `listTools` and `getServerCapabilities`.

import * as z from "zod";
import { EXTENSION_ID, RpcError, isObject } from "@mcp-resolve/runtime";

import { CORE_HINTS, type Hints, type Signature } from "./signature.js";
import { verifyResolution } from "./verify.js";
import { Violation, Violations } from "./violation.js";

/** The part of an SDK client (v1 or v2) this module uses. */
export interface SdkClient {
  request(request: { method: string; params?: Record<string, unknown> }, resultSchema: never): Promise<unknown>;
  listTools(params?: Record<string, unknown>): Promise<{ tools: unknown[]; nextCursor?: string }>;
  getServerCapabilities(): unknown;
}

/** Where the annotations of a decision came from. */
export type Source = "server" | "signature" | "static";

/** The annotations a host should decide a call on, and why. */
export interface Decision {
  readonly source: Source;
  /** Every hint explicit: the core four (MCP's defaults where left out), then any others. */
  readonly annotations: Hints;
  /** The variant, when a signature names it (local resolution, or a verified server answer). */
  readonly variant: string | null;
  /** The scopes the signature declares for the call, when there is one. */
  readonly requiredScopes: readonly string[] | null;
  /** Why this source: one sentence for a log or a prompt. */
  readonly reason: string;
  /** What was wrong with the server's answer, when it was refused. */
  readonly violations: readonly Violation[];
}

/** How `decide` works. */
export interface DecideOptions {
  /** The server's signature document, compiled: resolutions are verified against it, and it resolves locally. */
  readonly signature?: Signature;
  /** The tool as the server listed it; listed again (every page) when not given. */
  readonly listed?: Record<string, unknown>;
  /** Whether to ask the server; `true` by default. */
  readonly askServer?: boolean;
}

const Result = z.object({}).passthrough();

/** A hint set with MCP's defaults for the core hints left out. */
function withDefaults(annotations: unknown): Record<string, boolean> {
  const given = isObject(annotations) ? annotations : {};
  const hints: Record<string, boolean> = {};
  for (const [hint, fallback] of CORE_HINTS) {
    const v = given[hint];
    hints[hint] = typeof v === "boolean" ? v : fallback;
  }
  for (const [hint, v] of Object.entries(given)) {
    if (typeof v === "boolean" && !Object.hasOwn(hints, hint)) hints[hint] = v;
  }
  return hints;
}

/**
 * The extension's conservative bound, after defaults: a static read-only
 * tool resolves read-only; a static non-read-only, non-destructive one
 * resolves non-destructive when not read-only; a static idempotent one
 * resolves idempotent when not read-only; a static closed-world one resolves
 * closed-world. The violations of `resolved` against `bound`.
 */
export function outsideBound(tool: string, bound: Hints, resolved: Hints): Violation[] {
  const out: Violation[] = [];
  const widened = (hint: string, got: boolean, why: string) => {
    out.push(
      new Violation(
        "annotation",
        tool,
        `the resolution has \`${hint}: ${got}\` outside the conservative bound of the listed annotations (${why})`,
      ),
    );
  };
  const readOnly = resolved["readOnlyHint"] === true;
  if (bound["readOnlyHint"] === true && !readOnly) widened("readOnlyHint", false, "the tool is listed read-only");
  if (!readOnly) {
    if (bound["readOnlyHint"] !== true && bound["destructiveHint"] === false && resolved["destructiveHint"] === true) {
      widened("destructiveHint", true, "the tool is listed non-destructive");
    }
    if (bound["idempotentHint"] === true && resolved["idempotentHint"] !== true) {
      widened("idempotentHint", false, "the tool is listed idempotent");
    }
  }
  if (bound["openWorldHint"] === false && resolved["openWorldHint"] === true) {
    widened("openWorldHint", true, "the tool is listed closed-world");
  }
  return out;
}

/** The shape the extension's result must have (the SDK v2 strips `resultType`). */
function shapeProblem(result: unknown, name: string): string | undefined {
  if (!isObject(result)) return "the result is not an object";
  for (const key of Object.keys(result)) {
    if (!["resultType", "name", "annotations", "_meta"].includes(key)) return `the result has a member \`${key}\``;
  }
  if (Object.hasOwn(result, "resultType") && result["resultType"] !== "complete") {
    return "`resultType` is not `complete`";
  }
  if (result["name"] !== name) return `the result names tool ${JSON.stringify(result["name"] ?? null)}`;
  const annotations = result["annotations"];
  if (!isObject(annotations)) return "the result has no `annotations` object";
  const keys = Object.keys(annotations).sort();
  const core = CORE_HINTS.map(([hint]) => hint).sort();
  if (keys.length !== 4 || keys.some((k, i) => k !== core[i]) || !Object.values(annotations).every((v) => typeof v === "boolean")) {
    return "`annotations` must have exactly the four core hints, as booleans";
  }
  return undefined;
}

async function listedTool(client: SdkClient, name: string): Promise<Record<string, unknown> | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const listed = await client.listTools(cursor === undefined ? {} : { cursor });
    for (const tool of listed.tools) {
      if (isObject(tool) && tool["name"] === name) return tool;
    }
    cursor = listed.nextCursor;
    if (cursor === undefined) return undefined;
  }
  return undefined;
}

/** An error a client reports for a JSON-RPC error answer: its code. */
function codeOf(error: unknown): number | undefined {
  const code = isObject(error) || error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === "number" ? code : undefined;
}

/**
 * The annotations to decide the call `(name, args)` on (see the module's
 * documentation). Throws an `RpcError` (`-32602`) when the server refuses
 * the arguments: the call itself is invalid, and no annotation applies.
 */
export async function decide(
  client: SdkClient,
  name: string,
  args: Record<string, unknown>,
  options: DecideOptions = {},
): Promise<Decision> {
  const { signature } = options;
  const listed = options.listed ?? (await listedTool(client, name));
  const signed = signature?.tool(name);
  // The bound: the listed static annotations (a signature's when it has the tool).
  const bound: Hints = signed?.annotations ?? withDefaults(listed?.["annotations"]);
  const violations: Violation[] = [];
  let why: string;

  const capabilities = client.getServerCapabilities();
  const offers = isObject(capabilities) && isObject(capabilities["extensions"]) && isObject(capabilities["extensions"][EXTENSION_ID]);
  const meta = listed?.["_meta"];
  const marker = isObject(meta) ? meta[EXTENSION_ID] : undefined;
  const marked = isObject(marker) && marker["resolvable"] === true;
  if (options.askServer === false) {
    why = "the host did not ask the server";
  } else if (!offers) {
    why = "the server does not offer the tool-resolution extension";
  } else if (!marked) {
    why = listed === undefined ? "the server does not list the tool" : "the server does not list the tool as resolvable";
  } else {
    let result: unknown;
    let failed: string | undefined;
    try {
      result = await client.request({ method: "tools/resolve", params: { name, arguments: args } }, Result as never);
    } catch (e) {
      const code = codeOf(e);
      // The extension's client falls back on any error but -32602.
      if (code === RpcError.INVALID_PARAMS) {
        throw new RpcError(RpcError.INVALID_PARAMS, (e as Error).message, (e as { data?: unknown }).data);
      }
      failed = `tools/resolve failed (${code === undefined ? (e as Error).message : `error ${code}: ${(e as Error).message}`})`;
    }
    if (failed !== undefined) {
      why = failed;
    } else {
      const problem = shapeProblem(result, name);
      if (problem !== undefined) {
        violations.push(new Violation("malformed", name, `the resolution is malformed: ${problem}`));
        why = "the server's resolution was refused: it is malformed";
      } else {
        const reported = (result as { annotations: Record<string, boolean> }).annotations;
        const resolved = withDefaults(reported);
        violations.push(...outsideBound(name, bound, resolved));
        let variant: string | null = null;
        let scopes: readonly string[] | null = null;
        let annotations: Hints = resolved;
        if (signature !== undefined && violations.length === 0) {
          try {
            // The SDK v2 strips `resultType` from what it returns.
            const expected = verifyResolution(signature, name, args, { ...(result as object), resultType: "complete" });
            variant = expected.variant?.name ?? null;
            scopes = expected.requiredScopes;
            annotations = expected.annotations;
          } catch (e) {
            if (!(e instanceof Violations)) throw e;
            violations.push(...e.violations);
          }
        }
        if (violations.length === 0) {
          return {
            source: "server",
            annotations,
            variant,
            requiredScopes: scopes,
            reason:
              signature === undefined
                ? "the server resolved the call, within the conservative bound of its listed annotations"
                : "the server resolved the call, as its signature declares",
            violations,
          };
        }
        why = `the server's resolution was refused: ${violations.map((v) => v.message).join("; ")}`;
      }
    }
  }

  if (signed !== undefined && signed.resolvable) {
    try {
      const expected = signed.expect(args);
      return {
        source: "signature",
        annotations: expected.annotations,
        variant: expected.variant?.name ?? null,
        requiredScopes: expected.requiredScopes,
        reason: `${why}; resolved from the signature document's variants`,
        violations,
      };
    } catch (e) {
      if (!(e instanceof Violation)) throw e;
      throw new RpcError(RpcError.INVALID_PARAMS, e.message);
    }
  }
  return {
    source: "static",
    annotations: bound,
    variant: null,
    requiredScopes: signed?.requiredScopes ?? null,
    reason: `${why}; the static annotations apply (the worst case)`,
    violations,
  };
}
