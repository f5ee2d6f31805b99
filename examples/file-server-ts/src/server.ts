// The file server's tools on the sandbox, and its own argument checks. The
// tools, their schemas and their annotations come from the rules file
// (through the generated `resolve.ts`); this file only does the work.

import { RpcError, type Args, type CallToolResult } from "@mcp-resolve/runtime";

import { Refused, Sandbox, checkPath } from "./sandbox.js";

/**
 * The server's own checks, beyond the inputSchema, that `tools/resolve` and
 * `tools/call` share: every path stays inside the sandbox (lexically; the
 * call's walk also refuses symbolic links that leave it), and the actions
 * that write have `content`. Pure, as resolution must be.
 */
export function checkArguments(name: string, args: Args): void {
  const paths = name === "copy_file" ? ["source", "destination"] : ["path"];
  for (const key of paths) {
    const value = Object.hasOwn(args, key) ? args[key] : undefined;
    if (typeof value === "string") {
      try {
        checkPath(value);
      } catch (e) {
        throw new RpcError(RpcError.INVALID_PARAMS, (e as Error).message);
      }
    }
  }
  const action = args["action"];
  if (name === "manage_files" && (action === "append" || action === "replace") && !Object.hasOwn(args, "content")) {
    throw new RpcError(RpcError.INVALID_PARAMS, `\`content\` is required to ${action}`);
  }
}

function text(text: string, isError = false): CallToolResult {
  return isError ? { content: [{ type: "text", text }], isError } : { content: [{ type: "text", text }] };
}

/** Runs a call whose arguments passed the schema and `checkArguments`. */
export async function call(sandbox: Sandbox, name: string, args: Args): Promise<CallToolResult> {
  try {
    return text(await run(sandbox, name, args));
  } catch (e) {
    if (e instanceof Refused) return text(e.message, true);
    throw e;
  }
}

async function run(sandbox: Sandbox, name: string, args: Args): Promise<string> {
  const str = (key: string): string => String(args[key]);
  switch (name) {
    case "manage_files": {
      const p = str("path");
      const content = typeof args["content"] === "string" ? args["content"] : "";
      switch (args["action"]) {
        case "read":
          return sandbox.read(p);
        case "append":
          await sandbox.append(p, content);
          return `appended ${Buffer.byteLength(content)} bytes to ${p}`;
        case "replace":
          await sandbox.replace(p, content);
          return `wrote ${Buffer.byteLength(content)} bytes to ${p}`;
        case "delete":
          await sandbox.delete(p);
          return `deleted ${p}`;
        default:
          throw new Refused(`unknown action ${String(args["action"])}`);
      }
    }
    case "copy_file": {
      const bytes = await sandbox.copy(str("source"), str("destination"), args["overwrite"] === true);
      return `copied ${bytes} bytes from ${str("source")} to ${str("destination")}`;
    }
    case "list_directory":
      return (await sandbox.list(typeof args["path"] === "string" ? args["path"] : ".")).join("\n");
    default:
      throw new Refused(`unknown tool ${name}`);
  }
}
