// `@mcp-resolve/host`: the host side of mcp-resolve for TypeScript hosts, the
// counterpart of the Rust crate `mcp-resolve-host`:
//
// - `Signature`: a signature document read and compiled, its fingerprint
//   verified or pinned, and the host-side evaluation recipe (`expect`);
// - `verifyToolsList`, `verifyResolution`: a server's word checked against
//   its signature, with the Rust host's violation kinds;
// - `decide`: the annotations to decide a call on, from the server's
//   `tools/resolve` (checked), the signature, or the static annotations,
//   and which it used and why.

export * from "./decide.js";
export * from "./portable.js";
export * from "./signature.js";
export * from "./verify.js";
export * from "./violation.js";
