// Serving a generated resolver: the parts of the protocol the
// tool-resolution extension owns, independent of any SDK. The counterpart of
// the Rust runtime's `protocol::serve_resolve` and its rmcp wiring, and held
// to the same answers by the project's tests (the extension's conformance
// suite, the SDK clients, `mcp-resolve proxy --pin`):
//
// - the capabilities a server advertises (`capabilities()`);
// - the `tools/list` result, with the resolvable marker only for clients
//   that declare the extension (`listTools`);
// - a resolve request served (`resolveRequest`): `-32021` without the
//   client capability, `-32602` for bad params, unknown or unmarked tools and
//   invalid arguments, the server's own checks, the companion variant
//   extension's result `_meta`;
// - the `signature` result, and a `tools/call`'s arguments checked as
//   `tools/resolve` checks them (`checkCall`, `callError`).
//
// The SDK adapters (`@mcp-resolve/runtime/server` for the TypeScript SDK v2,
// `@mcp-resolve/runtime/sdk` for v1) wire these into a server in one call.

import {
  type Args,
  type Dialect,
  type Resolved,
  type Rules,
  isObject,
  own,
  RpcError,
  Tool,
  schemaBoundsDepth,
} from "./resolver.js";

/** The extension's identifier, as servers and clients declare it. */
export const EXTENSION_ID = "io.modelcontextprotocol/tool-resolution";
/** This project's companion extension: the matched variant in result `_meta`. */
export const VARIANT_EXTENSION_ID = "io.github.mcp-resolve/variant";
/** The request `_meta` key of the client capabilities (protocol 2026-07-28). */
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
/** The method of the Server Capability Signature draft (the signature document). */
export const SIGNATURE_METHOD = "signature";
/** The JSON-RPC code of a request whose client lacks a required capability. */
export const MISSING_CAPABILITY = -32021;

/** `-32021` naming the tool-resolution extension as the missing capability. */
export function missingCapability(): RpcError {
  return new RpcError(MISSING_CAPABILITY, "Missing required client capability", {
    requiredCapabilities: { extensions: { [EXTENSION_ID]: {} } },
  });
}

/**
 * Whether client capabilities declare extension `id` in the form this
 * version supports: an empty settings object. The extension asks servers to
 * treat settings they do not know (a non-empty object, `true`, `null`) as
 * unsupported.
 */
export function declaresExtension(capabilities: unknown, id: string): boolean {
  const settings = own(own(capabilities, "extensions"), id);
  return isObject(settings) && Object.keys(settings).length === 0;
}

/**
 * A server's own checks of a call's arguments, beyond its `inputSchema`
 * (paths inside a sandbox, fields one action needs): throw an `RpcError`
 * (`-32602`) to refuse. It must be a pure function of the tool name and the
 * arguments (resolution has no side effects); it runs for `tools/resolve`
 * and `tools/call` alike, so a call the server would refuse never resolves.
 */
export type ArgumentCheck = (name: string, args: Args) => void;

/** How a resolver is served. */
export interface ServeOptions {
  /** The wire shape of resolve answers; `extension` by default. */
  readonly dialect?: Dialect;
  /** The server's own argument checks. */
  readonly check?: ArgumentCheck;
}

/** A `tools/call` result (the shape every SDK accepts). */
export interface CallToolResult {
  content: { type: "text"; text: string }[];
  isError?: boolean;
  [key: string]: unknown;
}

/** A generated resolver, served: what an SDK adapter answers with. */
export class ToolResolution {
  readonly rules: Rules;
  readonly dialect: Dialect;
  readonly #check: ArgumentCheck | undefined;
  readonly #listed: string;
  readonly #unmarked: string;
  readonly #tools: ReadonlySet<string>;
  readonly #resolvable: ReadonlySet<string>;
  readonly #validators = new Map<string, Tool>();
  readonly #schemas: ReadonlyMap<string, string>;

  constructor(rules: Rules, options: ServeOptions = {}) {
    this.rules = rules;
    this.dialect = options.dialect ?? "extension";
    if (!["extension", "sep1862", "annotations"].includes(this.dialect)) {
      throw new TypeError(`unknown dialect: ${String(this.dialect)}`);
    }
    this.#check = options.check;
    this.#listed = rules.toolsListJson(this.dialect);
    const listing = JSON.parse(this.#listed) as { tools: Record<string, unknown>[] };
    const schemas = new Map<string, string>();
    for (const tool of listing.tools) {
      schemas.set(String(tool["name"]), JSON.stringify(tool["inputSchema"]));
      const meta = tool["_meta"];
      if (isObject(meta) && Object.hasOwn(meta, EXTENSION_ID)) {
        delete meta[EXTENSION_ID];
        if (Object.keys(meta).length === 0) delete tool["_meta"];
      }
    }
    this.#unmarked = JSON.stringify(listing);
    // Resolvable: the tools the extension's listing marks.
    const marked = JSON.parse(rules.toolsListJson("extension")) as { tools: Record<string, unknown>[] };
    this.#resolvable = new Set(
      marked.tools.filter((tool) => isObject(own(own(tool, "_meta"), EXTENSION_ID))).map((tool) => String(tool["name"])),
    );
    this.#schemas = schemas;
    this.#tools = new Set(schemas.keys());
  }

  /** The request method that resolves a call: `tools/annotations` in that dialect, else `tools/resolve`. */
  get method(): string {
    return this.dialect === "annotations" ? "tools/annotations" : "tools/resolve";
  }

  /**
   * The capabilities this server adds to its own: `tools`; in the extension
   * dialect `extensions["io.modelcontextprotocol/tool-resolution"] = {}`, in
   * the others `experimental["tools/resolve"]` (or `tools/annotations`);
   * the companion variant extension; and `experimental.signature` — as the
   * Rust SDK wiring advertises them.
   */
  capabilities(): Record<string, Record<string, Record<string, never>>> {
    const extensions: Record<string, Record<string, never>> = { [VARIANT_EXTENSION_ID]: {} };
    const experimental: Record<string, Record<string, never>> = {};
    if (this.dialect === "extension") {
      extensions[EXTENSION_ID] = {};
    } else {
      experimental[this.method] = {};
    }
    experimental[SIGNATURE_METHOD] = {};
    return { tools: {}, extensions, experimental };
  }

  /** Whether the server has a tool called `name` (resolvable or not). */
  hasTool(name: string): boolean {
    return this.#tools.has(name);
  }

  /**
   * The `tools/list` result, a fresh object: every tool with its static
   * (conservative) annotations. In the extension dialect the resolvable
   * marker is listed only to a client that declares the extension (the
   * extension says servers SHOULD NOT offer it to others).
   */
  listTools(clientDeclares: boolean): { tools: Record<string, unknown>[] } {
    const text = this.dialect !== "extension" || clientDeclares ? this.#listed : this.#unmarked;
    return JSON.parse(text) as { tools: Record<string, unknown>[] };
  }

  /** The `signature` result: the signature document with `resultType: "complete"`. */
  signatureResult(): Record<string, unknown> {
    const document = JSON.parse(this.rules.signatureJson) as Record<string, unknown>;
    // Every result carries `resultType` under protocol 2026-07-28; the
    // fingerprint leaves it out, so the document still verifies.
    document["resultType"] = "complete";
    return document;
  }

  /**
   * Serves a resolve request whose params are `params`: the capability check
   * of the extension dialect (`-32021`), the params checks (`-32602`: an
   * object, `name` a string, `arguments` required by the extension and `{}`
   * by default in the older drafts), the resolution (the full `inputSchema`
   * validated), the server's own checks; then the dialect's result, with the
   * companion extension's `_meta` when the client declares it. `declares`
   * says whether the client declares an extension (by id) for this request.
   * Throws `RpcError`.
   */
  resolveRequest(params: unknown, declares: (id: string) => boolean): Record<string, unknown> {
    if (this.dialect === "extension" && !declares(EXTENSION_ID)) throw missingCapability();
    if (params !== undefined && !isObject(params)) {
      throw new RpcError(RpcError.INVALID_PARAMS, "params must be an object");
    }
    const name = own(params, "name");
    if (typeof name !== "string") {
      throw new RpcError(RpcError.INVALID_PARAMS, "params.name must be a string (the tool name)");
    }
    let args: unknown;
    if (params !== undefined && Object.hasOwn(params, "arguments")) {
      args = params["arguments"];
    } else if (this.dialect === "extension") {
      throw new RpcError(
        RpcError.INVALID_PARAMS,
        "params.arguments is required: the complete arguments object of the call ({} for a tool without arguments)",
      );
    } else {
      args = {};
    }
    const resolved = this.rules.resolve(name, args);
    this.#check?.(name, args as Args);
    return this.#result(resolved, declares(VARIANT_EXTENSION_ID));
  }

  #result(resolved: Resolved, variantMeta: boolean): Record<string, unknown> {
    const result = JSON.parse(resolved.resultJson(this.dialect)) as Record<string, unknown>;
    if (variantMeta) {
      const meta = isObject(result["_meta"]) ? result["_meta"] : {};
      meta[VARIANT_EXTENSION_ID] = {
        variant: resolved.variant,
        requiredScopes: resolved.requiredScopes,
      };
      result["_meta"] = meta;
    }
    return result;
  }

  /**
   * Checks a `tools/call`'s arguments as `tools/resolve` does: the tool's
   * full `inputSchema` (with the resolver's own validator) and the server's
   * own checks. Returns the resolution of a resolvable tool, `undefined` for
   * the others; throws `RpcError` (`-32602`) for an unknown tool or arguments
   * either refuses. `undefined` arguments are `{}`.
   */
  checkCall(name: string, args: unknown = {}): Resolved | undefined {
    if (!this.#tools.has(name)) {
      throw new RpcError(RpcError.INVALID_PARAMS, `unknown tool: ${name}`);
    }
    let resolved: Resolved | undefined;
    if (this.#resolvable.has(name)) {
      resolved = this.rules.resolve(name, args);
    } else {
      this.#validator(name).validate(args);
    }
    this.#check?.(name, args as Args);
    return resolved;
  }

  #validator(name: string): Tool {
    let tool = this.#validators.get(name);
    if (tool === undefined) {
      const schema = this.#schemas.get(name) ?? "{}";
      tool = new Tool(name, schema, schemaBoundsDepth(JSON.parse(schema)), "", [], () => 0);
      this.#validators.set(name, tool);
    }
    return tool;
  }

  /**
   * A refused call as the tool error the model reads (SEP-1303: invalid
   * arguments are a tool execution error, not a protocol error): the
   * message, then the details as JSON.
   */
  callError(error: RpcError): CallToolResult {
    const text =
      error.data === undefined ? error.message : `${error.message}\n${JSON.stringify(error.data)}`;
    return { content: [{ type: "text", text }], isError: true };
  }
}

/** Answers a `tools/call` whose arguments passed the checks. */
export type CallHandler = (
  name: string,
  args: Args,
  ctx: unknown,
) => CallToolResult | Promise<CallToolResult>;

/** How an SDK adapter's `attach` serves a resolver. */
export interface AttachOptions extends ServeOptions {
  /**
   * Answers `tools/call`. Without it the server answers `tools/call` itself
   * (its own registered tools): then call `resolution.checkCall` there.
   */
  readonly call?: CallHandler;
}

/** The part of an SDK's low-level `Server` every adapter uses. */
export interface AdapterServer {
  registerCapabilities(capabilities: Record<string, unknown>): void;
  assertCanSetRequestHandler(method: string): void;
}

/** What an SDK adapter serves with, once `prepareAttach` checked the server. */
export interface Prepared<S> {
  readonly server: S;
  readonly resolution: ToolResolution;
  /** Answers `tools/call` (the arguments checked first), when the options give `call`. */
  readonly call: ((name: string, args: Args, ctx: unknown) => CallToolResult | Promise<CallToolResult>) | undefined;
}

/**
 * The part of `attach` the SDK adapters share: the low-level server of
 * `target` (an `McpServer`, or the server itself), which must not be
 * connected yet and must not handle any of the methods the resolver will;
 * the resolution, its capabilities registered; and the `tools/call` answer,
 * which refuses arguments `tools/resolve` would refuse as a tool error the
 * model can read (SEP-1303), and passes the rest to `options.call`.
 */
export function prepareAttach<S extends AdapterServer>(
  target: S | { readonly server: S; isConnected?(): boolean },
  rules: Rules,
  options: AttachOptions,
): Prepared<S> {
  const server: S = "server" in target ? target.server : target;
  if ("isConnected" in target && typeof target.isConnected === "function" && target.isConnected()) {
    throw new Error("attach the resolver before connecting the server");
  }
  const resolution = new ToolResolution(rules, options);
  const handler = options.call;
  const methods = ["tools/list", resolution.method, SIGNATURE_METHOD];
  if (handler !== undefined) methods.push("tools/call");
  for (const method of methods) server.assertCanSetRequestHandler(method);
  server.registerCapabilities(resolution.capabilities());
  const call =
    handler === undefined
      ? undefined
      : (name: string, args: Args, ctx: unknown) => {
          try {
            resolution.checkCall(name, args);
          } catch (e) {
            if (e instanceof RpcError && e.code === RpcError.INVALID_PARAMS && resolution.hasTool(name)) {
              return resolution.callError(e);
            }
            throw e;
          }
          return handler(name, args, ctx);
        };
  return { server, resolution, call };
}
