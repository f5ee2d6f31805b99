// Serving a generated resolver on the TypeScript SDK v1
// (`@modelcontextprotocol/sdk`): `attach(server, RULES, options)`, as
// `@mcp-resolve/runtime/server` does for v2. v1 serves `initialize`
// sessions only, so the client capabilities are the session's. Its request
// handlers are registered by zod schema, so this entry point needs `zod`
// (which the v1 SDK itself requires).

import * as z from "zod";

import type { Args, Rules } from "./resolver.js";
import {
  type AttachOptions,
  EXTENSION_ID,
  SIGNATURE_METHOD,
  type ToolResolution,
  declaresExtension,
  prepareAttach,
} from "./serving.js";

export type { AttachOptions, CallHandler } from "./serving.js";

/** The part of the SDK v1 low-level `Server` this module uses. */
export interface SdkServer {
  setRequestHandler(schema: never, handler: never): void;
  registerCapabilities(capabilities: Record<string, unknown>): void;
  assertCanSetRequestHandler(method: string): void;
  getClientCapabilities(): unknown;
}

/** An SDK v1 `McpServer` (its low-level `Server` is `server`). */
export interface SdkMcpServer {
  readonly server: SdkServer;
  isConnected?(): boolean;
}

/** A request of `method`, any params: the resolution checks them itself. */
function request(method: string) {
  return z.object({ method: z.literal(method), params: z.unknown().optional() }).passthrough();
}

/**
 * Serves `rules` on `target` (an SDK v1 `McpServer` or low-level `Server`),
 * before it connects. Throws when the server already handles one of the
 * methods. Returns the `ToolResolution` served.
 */
export function attach(
  target: SdkMcpServer | SdkServer,
  rules: Rules,
  options: AttachOptions = {},
): ToolResolution {
  const { server, resolution, call } = prepareAttach<SdkServer>(target, rules, options);
  const declares = (id: string) => declaresExtension(server.getClientCapabilities(), id);
  const set = server.setRequestHandler.bind(server) as unknown as (
    schema: unknown,
    handler: (request: { params?: unknown }, extra: unknown) => unknown,
  ) => void;
  set(request("tools/list"), () => resolution.listTools(declares(EXTENSION_ID)));
  set(request(resolution.method), (req) => resolution.resolveRequest(req.params, declares));
  set(request(SIGNATURE_METHOD), () => resolution.signatureResult());
  if (call !== undefined) {
    set(request("tools/call"), (req, extra) => {
      const params = (req.params ?? {}) as { name?: unknown; arguments?: Args };
      return call(typeof params.name === "string" ? params.name : "", params.arguments ?? {}, extra);
    });
  }
  return resolution;
}
