// Serving a generated resolver on the TypeScript SDK v1
// (`@modelcontextprotocol/sdk`): `attach(server, RULES, options)`, as
// `@mcp-resolve/runtime/server` does for v2. v1 serves `initialize`
// sessions only, so the client capabilities are the session's. Its request
// handlers are registered by zod schema, so this entry point needs `zod`
// (which the v1 SDK itself requires).

import * as z from "zod";

import { type Args, RpcError, type Rules } from "./resolver.js";
import { EXTENSION_ID, SIGNATURE_METHOD, ToolResolution, declaresExtension } from "./serving.js";
import type { AttachOptions } from "./server.js";

export type { AttachOptions, CallHandler } from "./server.js";

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
  const server: SdkServer = "server" in target ? target.server : target;
  if ("isConnected" in target && typeof target.isConnected === "function" && target.isConnected()) {
    throw new Error("attach the resolver before connecting the server");
  }
  const resolution = new ToolResolution(rules, options);
  const call = options.call;
  const methods = ["tools/list", resolution.method, SIGNATURE_METHOD];
  if (call !== undefined) methods.push("tools/call");
  for (const method of methods) server.assertCanSetRequestHandler(method);

  const declares = (id: string) => declaresExtension(server.getClientCapabilities(), id);
  server.registerCapabilities(resolution.capabilities());
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
      const name = typeof params.name === "string" ? params.name : "";
      const args = params.arguments ?? {};
      try {
        resolution.checkCall(name, args);
      } catch (e) {
        if (e instanceof RpcError && e.code === RpcError.INVALID_PARAMS && resolution.hasTool(name)) {
          return resolution.callError(e);
        }
        throw e;
      }
      return call(name, args, extra);
    });
  }
  return resolution;
}
