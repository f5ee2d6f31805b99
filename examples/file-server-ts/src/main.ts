// `file-server-ts --root DIR [--dialect D] [--http ADDR] [--sdk v2|v1]`:
// the example file server on the MCP TypeScript SDK — v2
// (`@modelcontextprotocol/server`, both protocol eras) by default, v1
// (`@modelcontextprotocol/sdk`, `initialize` sessions) with `--sdk v1` —
// serving the sandbox directory DIR over stdio, or over streamable HTTP at
// `http://ADDR/mcp`. Its resolver is generated from the file server's rules
// (`npm run generate`); `attach` serves it.

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { parseArgs } from "node:util";

import { McpServer as McpServerV1 } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport as StdioV1 } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport as HttpV1 } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { NodeStreamableHTTPServerTransport, toNodeHandler } from "@modelcontextprotocol/node";
import { McpServer, createMcpHandler, isLegacyRequest } from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import { type Dialect, RpcError, ToolResolution, screenHttpBody } from "@mcp-resolve/runtime";
import { attach as attachV1 } from "@mcp-resolve/runtime/sdk";
import { attach } from "@mcp-resolve/runtime/server";
import { screenedStdin } from "@mcp-resolve/runtime/stdio";

import { RULES, SERVER_NAME, SERVER_VERSION } from "./resolve.js";
import { Sandbox } from "./sandbox.js";
import { call, checkArguments } from "./server.js";

const USAGE = "usage: file-server-ts --root DIR [--dialect extension|sep1862|annotations] [--http HOST:PORT] [--sdk v2|v1]";

function fail(message: string): never {
  process.stderr.write(`file-server-ts: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        root: { type: "string" },
        dialect: { type: "string", default: "extension" },
        http: { type: "string" },
        sdk: { type: "string", default: "v2" },
      },
      strict: true,
    }).values;
  } catch (e) {
    return fail((e as Error).message);
  }
}
const options = parse();
if (options.root === undefined) fail("--root is required");
const dialect = options.dialect as Dialect;
if (!["extension", "sep1862", "annotations"].includes(dialect)) fail(`unknown dialect ${dialect}`);
if (options.sdk !== "v2" && options.sdk !== "v1") fail(`unknown SDK ${options.sdk}`);

let sandbox: Sandbox;
try {
  sandbox = await Sandbox.open(options.root);
} catch (e) {
  process.stderr.write(`file-server-ts: cannot open sandbox directory ${options.root}: ${(e as Error).message}\n`);
  process.exit(2);
}

const info = { name: SERVER_NAME, version: SERVER_VERSION };
const instructions =
  "Files in one sandbox directory. Ask `tools/resolve` for the annotations of a call before making it: reads are read-only, appends are not destructive.";
const serving = {
  dialect,
  check: checkArguments,
  call: (name: string, args: Record<string, unknown>) => call(sandbox, name, args),
};

/**
 * What the SDK would answer otherwise, answered first (malformed JSON-RPC;
 * `-32021` for a resolve request whose capabilities do not declare the
 * extension, which the SDK v2 would refuse `-32602` when they are missing).
 */
const screening = new ToolResolution(RULES, { dialect });
const checking = dialect === "extension" ? screening.method : undefined;

/** A server on the SDK v2, the resolver attached. */
function v2(): McpServer {
  const server = new McpServer(info, { instructions });
  attach(server, RULES, serving);
  return server;
}

/** A server on the SDK v1, the resolver attached. */
function v1(): McpServerV1 {
  const server = new McpServerV1(info, { instructions });
  attachV1(server, RULES, serving);
  return server;
}

/** The body of a POST as JSON: `undefined` for other methods, `NOT_JSON` when it does not parse. */
const NOT_JSON = Symbol("not JSON");
async function body(req: IncomingMessage): Promise<unknown> {
  if (req.method !== "POST") return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return NOT_JSON;
  }
}

type Handle = (req: IncomingMessage, res: ServerResponse, parsed: unknown) => Promise<void>;

/** Sessions of `initialize` clients, each with its own server and transport. */
function sessions(connect: (transport: NodeStreamableHTTPServerTransport | HttpV1) => Promise<void>, v1Transport: boolean): Handle {
  const open = new Map<string, NodeStreamableHTTPServerTransport | HttpV1>();
  return async (req, res, parsed) => {
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? open.get(id) : undefined;
    if (transport === undefined) {
      const message = parsed as { method?: unknown; id?: unknown } | undefined;
      if (id === undefined && message?.method !== undefined && message.id === undefined) {
        // A notification before any session: nothing to answer, dropped.
        res.writeHead(202).end();
        return;
      }
      if (id !== undefined || message?.method !== "initialize") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }));
        return;
      }
      const settings = {
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (session: string) => {
          if (transport !== undefined) open.set(session, transport);
        },
      };
      const made = v1Transport ? new HttpV1(settings) : new NodeStreamableHTTPServerTransport(settings);
      made.onclose = () => {
        if (made.sessionId !== undefined) open.delete(made.sessionId);
      };
      transport = made;
      await connect(made);
    }
    await transport.handleRequest(req, res, parsed);
  };
}

async function serveHttp(address: string): Promise<void> {
  const at = address.lastIndexOf(":");
  const host = address.slice(0, at);
  const port = Number(address.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port < 0 || port > 65535) fail(`--http wants HOST:PORT, not ${address}`);
  let handle: Handle;
  if (options.sdk === "v1") {
    handle = sessions((t) => v1().connect(t as HttpV1), true);
  } else {
    // 2026-07-28 requests each on their own; older clients in sessions.
    const modern = toNodeHandler(createMcpHandler(() => v2(), { legacy: "reject" }));
    const legacy = sessions((t) => v2().connect(t as NodeStreamableHTTPServerTransport), false);
    handle = async (req, res, parsed) => {
      const probe = new Request("http://127.0.0.1/mcp", { method: req.method ?? "GET", headers: req.headers as Record<string, string> });
      if (await isLegacyRequest(probe, parsed)) await legacy(req, res, parsed);
      else await modern(req, res, parsed);
    };
  }
  const http = createServer((req, res) => {
    if (req.url?.split("?")[0] !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    body(req)
      .then((parsed) => {
        const refused =
          parsed === NOT_JSON
            ? { jsonrpc: "2.0", id: null, error: new RpcError(RpcError.PARSE_ERROR, "Parse error: the message is not JSON") }
            : screenHttpBody(checking, parsed);
        if (refused === undefined) return handle(req, res, parsed);
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(refused));
        return undefined;
      })
      .catch((e: unknown) => {
        process.stderr.write(`file-server-ts: ${(e as Error).message}\n`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  http.on("error", (e) => {
    process.stderr.write(`file-server-ts: cannot listen on ${address}: ${e.message}\n`);
    process.exit(1);
  });
  http.listen(port, host, () => {
    const bound = http.address();
    const shown = typeof bound === "object" && bound !== null ? `${bound.address}:${bound.port}` : address;
    process.stderr.write(`file-server-ts: serving http://${shown}/mcp\n`);
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(0));
}

if (options.http !== undefined) {
  await serveHttp(options.http);
} else if (options.sdk === "v1") {
  await v1().connect(new StdioV1(screenedStdin(screening), process.stdout));
} else {
  serveStdio(() => v2(), { transport: new StdioServerTransport(screenedStdin(screening), process.stdout) });
}
