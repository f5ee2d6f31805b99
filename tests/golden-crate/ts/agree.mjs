// The TypeScript side of the golden crate's `typescript` test: for each
// generated module DIR/sN.js, answers the calls in DIR/sN.calls.jsonl (one
// `[tool, arguments]` per line) into DIR/sN.out.jsonl, one line per call:
// `{"ok": [variant, annotations, requiredScopes, extension, sep1862,
// annotations-dialect]}` with the three result texts as the module returned
// them, or `{"error": {code, message, data}}`.
//
// usage: node agree.mjs DIR COUNT
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [dir, count] = process.argv.slice(2);
for (let n = 0; n < Number(count); n++) {
  const module = join(dir, `s${n}.js`);
  let calls;
  try {
    calls = readFileSync(join(dir, `s${n}.calls.jsonl`), "utf8");
  } catch {
    continue; // a set the generator refused
  }
  const resolver = await import(pathToFileURL(module).href);
  const out = [];
  for (const line of calls.split("\n")) {
    if (line === "") continue;
    const [tool, args] = JSON.parse(line);
    try {
      const r = resolver.resolve(tool, args);
      out.push(
        JSON.stringify({
          ok: [
            r.variant,
            r.annotations,
            r.requiredScopes,
            r.resultJson("extension"),
            r.resultJson("sep1862"),
            r.resultJson("annotations"),
          ],
        }),
      );
    } catch (e) {
      if (typeof e?.toJSON !== "function" || typeof e?.code !== "number") throw e;
      out.push(JSON.stringify({ error: e.toJSON() }));
    }
  }
  writeFileSync(join(dir, `s${n}.out.jsonl`), out.join("\n") + "\n");
}
