// The JSON-RPC 2.0 screen: what a server must answer itself because the
// message cannot be passed to its SDK as it is. The counterpart of the Rust
// runtime's `protocol::Screen`, with the same answers:
//
// - a line that is not JSON: `-32700` with `"id": null`;
// - a batch (MCP has none), or a value that is not a request, notification
//   or response: `-32600` with `"id": null`;
// - a request with an `id` that is not a string or an integer: `-32600`
//   with `"id": null`;
// - a request with `"jsonrpc"` other than `"2.0"` or a method that is not a
//   string: `-32600` with its `id`;
// - a request whose `params` (or `params._meta`) is not an object: `-32602`
//   with its `id`;
// - a malformed notification, and any notification before the first
//   request, is dropped (JSON-RPC never answers one);
// - with `checking`, a resolve request of the 2026-07-28 lifecycle whose
//   `_meta` client capabilities do not declare the extension as this
//   version supports it: `-32021`, as the extension's table says. (The
//   TypeScript SDK v2 would refuse such a request with `-32602` before any
//   handler runs when the capabilities are missing or malformed.)

import { RpcError, isObject, own } from "./resolver.js";
import { EXTENSION_ID, META_CLIENT_CAPABILITIES, declaresExtension, missingCapability } from "./serving.js";

/** The request `_meta` key of the protocol version (protocol 2026-07-28). */
export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
/** The first protocol version whose requests each carry their own capabilities. */
export const STATELESS_VERSION = "2026-07-28";

/** What to do with one message. */
export type Screened =
  | { readonly kind: "forward"; readonly message: Record<string, unknown> }
  | { readonly kind: "reply"; readonly response: Record<string, unknown> }
  | { readonly kind: "drop"; readonly why: string };

/** How a screen judges. */
export interface ScreenOptions {
  /** The resolve method whose client capability the screen checks (the extension dialect's `tools/resolve`). */
  readonly checking?: string;
  /**
   * Messages that each arrive on their own (one HTTP request each): no
   * stream whose first request could be awaited, and a request is of the
   * 2026-07-28 lifecycle when its own `_meta` says so.
   */
  readonly perMessage?: boolean;
}

function reply(id: unknown, error: RpcError): Screened {
  return { kind: "reply", response: { jsonrpc: "2.0", id, error: error.toJSON() } };
}

function refuse(id: unknown, code: number, message: string): Screened {
  return reply(id, new RpcError(code, message));
}

/** The screening of one stream (or, `perMessage`, of separate messages). */
export class Screen {
  #started: boolean;
  #legacy: boolean;
  readonly #checking: string | undefined;

  constructor(options: ScreenOptions = {}) {
    this.#checking = options.checking;
    this.#started = options.perMessage === true;
    this.#legacy = options.perMessage === true;
  }

  /** Screens one line of text (without its newline). */
  line(text: string): Screened {
    if (text.trim() === "") return { kind: "drop", why: "a blank line" };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return refuse(null, RpcError.PARSE_ERROR, "Parse error: the message is not JSON");
    }
    return this.message(value);
  }

  /** Screens one message, already parsed. */
  message(value: unknown): Screened {
    if (Array.isArray(value)) {
      return refuse(null, RpcError.INVALID_REQUEST, "Invalid Request: batches are not supported");
    }
    if (!isObject(value)) {
      return refuse(null, RpcError.INVALID_REQUEST, "Invalid Request: a message is a JSON object");
    }
    const has = (key: string) => Object.hasOwn(value, key);
    // A response to a request of the server's: the server matches it.
    if (!has("method") && (has("result") || has("error"))) return { kind: "forward", message: value };
    const method = value["method"];
    const params = own(value, "params");
    const jsonrpc = value["jsonrpc"] === "2.0";
    if (!has("id")) {
      const wellFormed = jsonrpc && typeof method === "string" && (params === undefined || isObject(params));
      if (!wellFormed) return { kind: "drop", why: "a malformed notification" };
      if (!this.#started) return { kind: "drop", why: "a notification before the first request" };
      return { kind: "forward", message: value };
    }
    const id = value["id"];
    if (!(typeof id === "string" || (typeof id === "number" && Number.isInteger(id)))) {
      return refuse(null, RpcError.INVALID_REQUEST, "Invalid Request: `id` must be a string or an integer");
    }
    if (!jsonrpc) return refuse(id, RpcError.INVALID_REQUEST, 'Invalid Request: `jsonrpc` must be "2.0"');
    if (typeof method !== "string") {
      return refuse(id, RpcError.INVALID_REQUEST, "Invalid Request: `method` must be a string");
    }
    if (has("params")) {
      if (!isObject(params)) {
        return refuse(id, RpcError.INVALID_PARAMS, "Invalid params: `params` must be an object");
      }
      if (Object.hasOwn(params, "_meta") && !isObject(params["_meta"])) {
        return refuse(id, RpcError.INVALID_PARAMS, "Invalid params: `params._meta` must be an object");
      }
    }
    if (!this.#started) {
      this.#started = true;
      this.#legacy = method === "initialize";
    }
    if (this.#checking === method && !this.#declares(params)) return reply(id, missingCapability());
    return { kind: "forward", message: value };
  }

  /**
   * Whether a resolve request may go on to the server: one of a session
   * opened with `initialize` that does not say it is 2026-07-28 (the server
   * checks the session's capabilities), or one whose `_meta` client
   * capabilities declare the extension as this version supports.
   */
  #declares(params: unknown): boolean {
    const meta = own(params, "_meta");
    const version = own(meta, META_PROTOCOL_VERSION);
    const modern = !this.#legacy || (typeof version === "string" && version >= STATELESS_VERSION);
    if (!modern) return true;
    return declaresExtension(own(meta, META_CLIENT_CAPABILITIES), EXTENSION_ID);
  }
}

/**
 * The screen of one HTTP request's parsed body, for a server's own HTTP
 * glue in front of the SDK: the error response to send (with status 400)
 * when the screen answers the message itself, else `undefined`.
 */
export function screenHttpBody(checking: string | undefined, body: unknown): Record<string, unknown> | undefined {
  if (body === undefined) return undefined;
  const screened = new Screen(checking === undefined ? { perMessage: true } : { checking, perMessage: true }).message(
    body,
  );
  return screened.kind === "reply" ? screened.response : undefined;
}
