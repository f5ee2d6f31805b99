// End-to-end test of the example file server with the official TypeScript
// SDK v2 (`@modelcontextprotocol/client`), the second real client next to
// the Python SDK. Over stdio and streamable HTTP, in the 2026-07-28 era
// (pinned) and in a legacy `initialize` session, it checks:
//
// * the extension is advertised, and the resolvable marker is listed only to
//   a client that declares the extension;
// * every candidate argument object of every resolvable tool resolves to a
//   result with the tool's name and exactly the four boolean hints, inside
//   the conservative bound of the listed annotations, equal to the
//   annotations the signature declares for the variant named in the
//   companion extension's result `_meta`; every declared variant is seen;
// * errors through the SDK: unknown tool and invalid arguments -32602, a
//   client without the extension or with unknown settings -32021;
// * the SDK's handling of `resultType` that docs/serving.md describes: a
//   caller's schema that requires `resultType` rejects the answer, one
//   without it accepts it.
//
// Usage: node ts_client.mjs SERVER SANDBOX
// (run from a directory whose node_modules has @modelcontextprotocol/client
// 2.4.0 and zod; the Rust test `ts_client.rs` copies it there).
// Prints `ok …` lines and `all checks passed`; exits 1 on the first failure.

import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import * as z from 'zod';

const EXTENSION = 'io.modelcontextprotocol/tool-resolution';
const VARIANT_EXTENSION = 'io.github.mcp-resolve/variant';
const HINTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
const MODERN = { mode: { pin: '2026-07-28' } };
const LEGACY = { mode: 'legacy' };

const [server, sandbox] = process.argv.slice(2);
if (!server || !sandbox) {
  console.error('usage: node ts_client.mjs SERVER SANDBOX');
  process.exit(2);
}

class Failure extends Error {}
function check(condition, message) {
  if (!condition) throw new Failure(message);
}

// What the caller's schema sees: the SDK removes `resultType` first.
const ResolveResult = z.object({
  name: z.string(),
  annotations: z.record(z.string(), z.unknown()),
  _meta: z.record(z.string(), z.unknown()).optional(),
}).strict();
const Loose = z.record(z.string(), z.unknown());

function core(annotations = {}) {
  return Object.fromEntries(Object.entries(HINTS).map(([h, d]) => [h, annotations[h] ?? d]));
}

function withinBound(staticAnnotations, resolved) {
  const s = core(staticAnnotations);
  const r = core(resolved);
  if (s.readOnlyHint && !r.readOnlyHint) return 'static read-only, resolved not read-only';
  if (!s.readOnlyHint && !s.destructiveHint && !r.readOnlyHint && r.destructiveHint) return 'static non-destructive, resolved destructive';
  if (s.idempotentHint && !r.readOnlyHint && !r.idempotentHint) return 'static idempotent, resolved not idempotent';
  if (!s.openWorldHint && r.openWorldHint) return 'static closed-world, resolved open-world';
  return null;
}

// Argument objects over the schema's enums, booleans and optional fields
// (strings get a file name in the sandbox; the server refuses what its own
// checks reject, e.g. `append` without `content`, with -32602).
function candidates(schema) {
  const required = new Set(schema.required ?? []);
  let out = [{}];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    let values = prop.enum ?? (prop.type === 'boolean' ? [true, false] : ['notes.txt']);
    const next = [];
    for (const partial of out) {
      for (const v of values) next.push({ ...partial, [name]: v });
      if (!required.has(name)) next.push(partial);
    }
    out = next.slice(0, 512);
  }
  return out;
}

async function connect(transport, { negotiation = MODERN, extensions } = {}) {
  const capabilities = extensions ? { extensions } : {};
  const client = new Client({ name: 'mcp-resolve-ts-e2e', version: '1' }, { capabilities, versionNegotiation: negotiation });
  await client.connect(transport);
  return client;
}

async function expectError(promise, code, label) {
  try {
    const result = await promise;
    throw new Failure(`${label}: succeeded (${JSON.stringify(result)}); error ${code} was expected`);
  } catch (e) {
    if (e instanceof Failure) throw e;
    check(e.code === code, `${label}: error ${e.code} (${e.message}), expected ${code}`);
  }
}

function resolve(client, name, args, schema = ResolveResult) {
  return client.request({ method: 'tools/resolve', params: { name, arguments: args } }, schema);
}

async function checkResolving(makeTransport, label) {
  const declared = { [EXTENSION]: {}, [VARIANT_EXTENSION]: {} };
  const client = await connect(makeTransport(), { extensions: declared });
  try {
    const caps = client.getServerCapabilities();
    check(caps?.extensions?.[EXTENSION] !== undefined, `${label}: the extension is not advertised: ${JSON.stringify(caps)}`);
    const signature = await client.request({ method: 'signature', params: {} }, Loose);
    const byName = Object.fromEntries(signature.tools.map((t) => [t.name, t]));
    const { tools } = await client.listTools();
    let answers = 0;
    let refused = 0;
    for (const tool of tools) {
      const sig = byName[tool.name];
      check(sig !== undefined, `${label}: ${tool.name} is not in the signature`);
      const marked = tool._meta?.[EXTENSION]?.resolvable === true;
      check(marked === Boolean(sig.resolvedVariants?.length), `${label}: ${tool.name}: marker ${marked}`);
      if (!marked) {
        await expectError(resolve(client, tool.name, {}), -32602, `${label}: unmarked ${tool.name}`);
        continue;
      }
      const seen = new Set();
      for (const args of candidates(tool.inputSchema)) {
        let result;
        try {
          result = await resolve(client, tool.name, args);
        } catch (e) {
          check(e.code === -32602, `${label}: ${tool.name} ${JSON.stringify(args)}: error ${e.code} ${e.message}`);
          refused += 1;
          continue;
        }
        check(result.name === tool.name, `${label}: result names ${result.name}`);
        const keys = Object.keys(result.annotations).sort();
        check(JSON.stringify(keys) === JSON.stringify(Object.keys(HINTS).sort()) &&
              Object.values(result.annotations).every((v) => typeof v === 'boolean'),
              `${label}: not exactly the four boolean hints: ${JSON.stringify(result.annotations)}`);
        const violation = withinBound(tool.annotations, result.annotations);
        check(violation === null, `${label}: ${tool.name} ${JSON.stringify(args)}: ${violation}`);
        const variant = result._meta?.[VARIANT_EXTENSION]?.variant;
        const declaredAnnotations = variant == null
          ? sig.annotations
          : sig.resolvedVariants.find((v) => v.name === variant)?.annotations;
        check(declaredAnnotations !== undefined, `${label}: unknown variant ${variant}`);
        const expected = core(declaredAnnotations);
        check(Object.keys(HINTS).every((h) => expected[h] === result.annotations[h]),
              `${label}: ${tool.name} ${JSON.stringify(args)}: ${JSON.stringify(result.annotations)} but ${variant} declares ${JSON.stringify(expected)}`);
        seen.add(variant);
        answers += 1;
      }
      for (const v of sig.resolvedVariants) {
        check(seen.has(v.name), `${label}: ${tool.name}: variant ${v.name} never resolved`);
      }
    }
    console.log(`ok ${label}: ${answers} resolutions equal to the signature and inside the bound (${refused} refused by the server's checks)`);

    await expectError(resolve(client, 'no_such_tool', {}), -32602, `${label}: unknown tool`);
    await expectError(resolve(client, 'manage_files', { path: 'a', action: 'rename' }), -32602, `${label}: invalid arguments`);
    await expectError(resolve(client, 'manage_files', { path: '../outside.txt', action: 'read' }), -32602, `${label}: path out of the sandbox`);
    console.log(`ok ${label}: errors -32602 (unknown tool, invalid arguments, the server's own checks)`);

    // docs/serving.md: the SDK strips `resultType` before the caller's schema.
    const strict = ResolveResult.extend({ resultType: z.literal('complete') });
    let rejected = false;
    try {
      await resolve(client, 'manage_files', { path: 'a', action: 'read' }, strict);
    } catch {
      rejected = true;
    }
    check(rejected, `${label}: a schema requiring resultType accepted the answer; docs/serving.md is out of date`);
    console.log(`ok ${label}: the SDK strips resultType before the caller's schema (as documented)`);
  } finally {
    await client.close();
  }
}

async function checkCapability(makeTransport, label) {
  const plain = await connect(makeTransport());
  try {
    const { tools } = await plain.listTools();
    const leaked = tools.filter((t) => t._meta?.[EXTENSION] !== undefined).map((t) => t.name);
    check(leaked.length === 0, `${label}: marker listed to a client without the extension: ${leaked}`);
    await expectError(resolve(plain, 'manage_files', { path: 'a', action: 'read' }), -32021, `${label}: no capability`);
  } finally {
    await plain.close();
  }
  const future = await connect(makeTransport(), { extensions: { [EXTENSION]: { futureRequiredMode: true } } });
  try {
    await expectError(resolve(future, 'manage_files', { path: 'a', action: 'read' }), -32021, `${label}: unknown settings`);
  } finally {
    await future.close();
  }
  const legacy = await connect(makeTransport(), { negotiation: LEGACY, extensions: { [EXTENSION]: {} } });
  try {
    const result = await resolve(legacy, 'manage_files', { path: 'a', action: 'read' });
    check(result.annotations.readOnlyHint === true, `${label}: legacy session: ${JSON.stringify(result)}`);
  } finally {
    await legacy.close();
  }
  console.log(`ok ${label}: -32021 without the extension or with unknown settings, no marker listed; legacy session resolves`);
}

async function withHttpServer(body) {
  const child = spawn(server, ['--root', sandbox, '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  // Never left behind, however this process ends.
  process.on('exit', () => child.kill());
  try {
    const url = await new Promise((ok, fail) => {
      let text = '';
      const timer = setTimeout(() => fail(new Failure('the HTTP server did not start')), 30000);
      child.stderr.on('data', (chunk) => {
        text += chunk;
        // A whole line: stderr may arrive in pieces (`http://127` first).
        const match = text.match(/http:\/\/\S+(?=\r?\n)/);
        if (match) {
          clearTimeout(timer);
          ok(match[0]);
        }
      });
      child.on('exit', (code) => fail(new Failure(`the HTTP server exited (${code})`)));
    });
    await body(url);
  } finally {
    child.kill();
  }
}

async function main() {
  const stdio = () => new StdioClientTransport({ command: server, args: ['--root', sandbox], stderr: 'ignore' });
  await checkResolving(stdio, 'stdio');
  await checkCapability(stdio, 'stdio');
  await withHttpServer(async (url) => {
    const http = () => new StreamableHTTPClientTransport(new URL(url));
    await checkResolving(http, 'http');
    await checkCapability(http, 'http');
  });
  console.log('all checks passed');
}

main().then(
  () => process.exit(0),
  (e) => {
    console.log(`FAILED: ${e instanceof Failure ? e.message : e.stack}`);
    process.exit(1);
  },
);
