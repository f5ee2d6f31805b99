// Serving a generated resolver on the TypeScript SDK v2
// (`@modelcontextprotocol/server`): `attach(server, RULES, options)` answers
// `tools/resolve` (or `tools/annotations`) and `signature`, lists the tools
// with their static annotations and, to clients that declare the extension,
// the resolvable marker, declares the capabilities, and — given `call` —
// answers `tools/call` with the arguments checked as `tools/resolve` checks
// them. The client capabilities are read per request: from the request's
// own `_meta` envelope (2026-07-28), else from the session's `initialize`.
//
// Written against the SDK's structure, not imported from it: this module
// runs with any 2.x SDK and needs none installed to load.

import type { Args, Rules } from "./resolver.js";
import {
  type AttachOptions,
  EXTENSION_ID,
  META_CLIENT_CAPABILITIES,
  SIGNATURE_METHOD,
  type ToolResolution,
  declaresExtension,
  prepareAttach,
} from "./serving.js";

export type { AttachOptions, CallHandler } from "./serving.js";

/** The part of the SDK v2 low-level `Server` this module uses. */
export interface SdkServer {
  setRequestHandler(method: string, ...rest: never[]): void;
  registerCapabilities(capabilities: Record<string, unknown>): void;
  assertCanSetRequestHandler(method: string): void;
  getClientCapabilities(): unknown;
}

/** An SDK v2 `McpServer` (its low-level `Server` is `server`). */
export interface SdkMcpServer {
  readonly server: SdkServer;
  isConnected?(): boolean;
}

/** The part of a request handler's context this module reads. */
interface Context {
  readonly mcpReq?: { readonly envelope?: Readonly<Record<string, unknown>> };
}

/** A Standard Schema that accepts any params: the resolution checks them itself. */
const ANY_PARAMS = {
  "~standard": {
    version: 1,
    vendor: "mcp-resolve",
    validate: (value: unknown) => ({ value }),
  },
} as const;

/**
 * Serves `rules` on `target` (an SDK v2 `McpServer` or low-level `Server`),
 * before it connects. Throws when the server already handles one of the
 * methods. Returns the `ToolResolution` served.
 */
export function attach(
  target: SdkMcpServer | SdkServer,
  rules: Rules,
  options: AttachOptions = {},
): ToolResolution {
  const { server, resolution, call } = prepareAttach<SdkServer>(target, rules, options);
  const capabilitiesOf = (ctx: Context | undefined): unknown => {
    const envelope = ctx?.mcpReq?.envelope;
    // A 2026-07-28 request carries its own envelope, and only it counts;
    // a legacy session's capabilities are those of its `initialize`.
    return envelope !== undefined ? envelope[META_CLIENT_CAPABILITIES] : server.getClientCapabilities();
  };
  const declares = (ctx: Context | undefined) => (id: string) => declaresExtension(capabilitiesOf(ctx), id);
  const set = server.setRequestHandler.bind(server) as unknown as (
    method: string,
    ...rest: unknown[]
  ) => void;
  set("tools/list", (_request: unknown, ctx: Context) =>
    resolution.listTools(declares(ctx)(EXTENSION_ID)),
  );
  set(resolution.method, { params: ANY_PARAMS }, (params: unknown, ctx: Context) =>
    resolution.resolveRequest(params, declares(ctx)),
  );
  set(SIGNATURE_METHOD, { params: ANY_PARAMS }, () => resolution.signatureResult());
  if (call !== undefined) {
    set("tools/call", (request: { params: { name: string; arguments?: Args } }, ctx: unknown) =>
      call(request.params.name, request.params.arguments ?? {}, ctx),
    );
  }
  return resolution;
}
