#!/usr/bin/env node
// The `mcp-resolve` command from npm: runs the binary of the platform
// package npm installed beside this one (one package per platform, named in
// `optionalDependencies`, each declaring its `os`, `cpu` and `libc`, so npm
// installs only the one that fits). MCP_RESOLVE_BINARY names another binary.
// Arguments, standard streams, the exit status and signals pass through.
"use strict";

const { spawn } = require("node:child_process");
const { constants } = require("node:os");

const PLATFORMS = {
  "darwin-arm64": "@mcp-resolve/cli-darwin-arm64",
  "darwin-x64": "@mcp-resolve/cli-darwin-x64",
  "linux-arm64": "@mcp-resolve/cli-linux-arm64",
  "linux-x64": "@mcp-resolve/cli-linux-x64",
  "win32-x64": "@mcp-resolve/cli-win32-x64",
};

function binary() {
  const override = process.env.MCP_RESOLVE_BINARY;
  if (override) return override;
  const key = `${process.platform}-${process.arch}`;
  const name = PLATFORMS[key];
  const file = process.platform === "win32" ? "mcp-resolve.exe" : "mcp-resolve";
  if (name !== undefined) {
    try {
      return require.resolve(`${name}/bin/${file}`);
    } catch {
      // Not installed: said below.
    }
  }
  const why =
    name === undefined
      ? `no prebuilt binary is published for ${key}`
      : `the package ${name} is not installed (npm leaves optional dependencies out with --omit=optional or --no-optional, and when its os, cpu or libc does not fit: the Linux binaries need glibc)`;
  process.stderr.write(
    `mcp-resolve: ${why}.\nBuild it from source instead: cargo install --locked mcp-resolve-cli\n`,
  );
  process.exit(2);
}

// The binary in a child process with this one's standard streams. A signal
// sent to this process alone (a host stopping its server with SIGTERM, say)
// is passed on, so the binary is never left behind; its exit status, or the
// signal that ended it as 128 + its number, is this process's.
const child = spawn(binary(), process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  process.stderr.write(`mcp-resolve: cannot run ${error.path ?? "the binary"}: ${error.message}\n`);
  process.exit(2);
});
child.on("exit", (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
});
