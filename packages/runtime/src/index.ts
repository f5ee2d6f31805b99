// `@mcp-resolve/runtime`: the runtime of the TypeScript resolvers mcp-resolve
// generates (`resolver.ts`), the serving of one (`serving.ts`) and the
// screen in front of an SDK (`screen.ts`). The SDK
// adapters are their own entry points, so that this one needs no SDK:
// `@mcp-resolve/runtime/server` (TypeScript SDK v2) and
// `@mcp-resolve/runtime/sdk` (v1); Node streams: `@mcp-resolve/runtime/stdio`.

export * from "./resolver.js";
export * from "./serving.js";
export * from "./screen.js";
