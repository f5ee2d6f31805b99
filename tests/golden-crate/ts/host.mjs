// The TypeScript side of the golden crate's host agreement test: for each
// signature document DIR/sN.signature.json, the host library
// (`@mcp-resolve/host`) resolves the calls in DIR/sN.calls.jsonl (one
// `[tool, arguments]` per line) locally, into DIR/sN.host.jsonl, one line per
// call: `{"ok": [variant, [[hint, value], ...], requiredScopes, extension]}`
// (the extension result as JSON text), or `{"error": {"kind", "message"}}`
// for the violation it reports. A document the library refuses to load
// gives the one line `{"refused": message}`. DIR/sN.bounds.json gets, per
// tool, whether the runtime reads its `inputSchema` as bounding the nesting.
//
// usage: node host.mjs DIR COUNT   (run from inside the built package, so
// that `@mcp-resolve/host` resolves to it)
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Signature, SignatureError, Violation } from "@mcp-resolve/host";
import { schemaBoundsDepth } from "@mcp-resolve/runtime";

const [dir, count] = process.argv.slice(2);
for (let n = 0; n < Number(count); n++) {
  let text;
  try {
    text = readFileSync(join(dir, `s${n}.signature.json`), "utf8");
  } catch {
    continue;
  }
  // Whether each tool's inputSchema bounds the nesting, as the runtime
  // reads it (compared with the Rust runtime's reading).
  const document = JSON.parse(text);
  writeFileSync(
    join(dir, `s${n}.bounds.json`),
    JSON.stringify(document.tools.map((tool) => schemaBoundsDepth(tool.inputSchema))),
  );
  let signature;
  try {
    signature = new Signature(JSON.parse(text));
  } catch (e) {
    if (!(e instanceof SignatureError)) throw e;
    writeFileSync(join(dir, `s${n}.host.jsonl`), JSON.stringify({ refused: e.message }) + "\n");
    continue;
  }
  const calls = readFileSync(join(dir, `s${n}.calls.jsonl`), "utf8");
  const out = [];
  for (const line of calls.split("\n")) {
    if (line === "") continue;
    const [tool, args] = JSON.parse(line);
    try {
      const e = signature.expect(tool, args);
      out.push(
        JSON.stringify({
          ok: [e.variant?.name ?? null, Object.entries(e.annotations), e.requiredScopes, JSON.stringify(e.extensionResult())],
        }),
      );
    } catch (e) {
      if (!(e instanceof Violation)) throw e;
      out.push(JSON.stringify({ error: { kind: e.kind, message: e.message } }));
    }
  }
  writeFileSync(join(dir, `s${n}.host.jsonl`), out.join("\n") + "\n");
}
