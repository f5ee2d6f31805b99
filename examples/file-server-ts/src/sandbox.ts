// The sandbox directory the file server works in: every path a client sends
// is relative to it, and nothing outside it is read or written — neither
// by `..` (refused lexically, as `tools/resolve` refuses it too) nor through
// a symbolic link (each path's real location is checked before it is used).
// The TypeScript twin of the Rust example's `sandbox.rs`.

import { promises as fs } from "node:fs";
import * as path from "node:path";

/** The largest file `read` returns. */
export const MAX_READ_BYTES = 1 << 20;
/** The most entries `list` returns. */
export const MAX_LIST_ENTRIES = 1000;

/** A refused operation: the message the model reads. */
export class Refused extends Error {
  override name = "Refused";
}

/**
 * Checks a client's path lexically: relative, no NUL byte, never above the
 * sandbox root. Pure, so `tools/resolve` can run it too.
 */
export function checkPath(p: string): void {
  if (p.includes("\0")) throw new Refused(`${JSON.stringify(p)}: contains a NUL byte`);
  if (path.isAbsolute(p)) {
    throw new Refused(`${p}: absolute paths are refused; paths are relative to the sandbox directory`);
  }
  let depth = 0;
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (depth === 0) throw new Refused(`${p}: refused: leads outside the sandbox directory`);
      depth--;
    } else {
      depth++;
    }
  }
}

function failed(p: string, error: unknown): Refused {
  const code = (error as { code?: string }).code;
  switch (code) {
    case "ENOENT":
      return new Refused(`${p}: no such file or directory`);
    case "EEXIST":
      return new Refused(`${p}: already exists (pass \`overwrite: true\` to replace it)`);
    case "EACCES":
    case "EPERM":
      return new Refused(`${p}: refused: ${(error as Error).message}`);
    default:
      return new Refused(`${p}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export class Sandbox {
  readonly #root: string;

  private constructor(root: string) {
    this.#root = root;
  }

  /** Opens the sandbox at `root` (which must be a directory). */
  static async open(root: string): Promise<Sandbox> {
    const real = await fs.realpath(root);
    if (!(await fs.stat(real)).isDirectory()) throw new Error(`${root}: not a directory`);
    return new Sandbox(real);
  }

  #inside(real: string): boolean {
    return real === this.#root || real.startsWith(this.#root + path.sep);
  }

  /**
   * The absolute location of `p`, once its real location (through any
   * symbolic link, of the path or of its nearest existing parent when it
   * does not exist yet) is inside the root.
   */
  async #locate(p: string): Promise<string> {
    checkPath(p);
    const full = path.resolve(this.#root, p);
    let probe = full;
    for (;;) {
      try {
        const real = await fs.realpath(probe);
        if (!this.#inside(real)) throw new Refused(`${p}: refused: leads outside the sandbox directory`);
        return full;
      } catch (e) {
        if (e instanceof Refused) throw e;
        if ((e as { code?: string }).code !== "ENOENT" || probe === this.#root) throw failed(p, e);
        // A link to nowhere is refused; a name not there yet is checked by its parent.
        const link = await fs.lstat(probe).then(
          (s) => s.isSymbolicLink(),
          () => false,
        );
        if (link) throw new Refused(`${p}: refused: a symbolic link that leads nowhere`);
        probe = path.dirname(probe);
      }
    }
  }

  async read(p: string): Promise<string> {
    const full = await this.#locate(p);
    let bytes: Buffer;
    try {
      const handle = await fs.open(full, "r");
      try {
        const buffer = Buffer.alloc(MAX_READ_BYTES + 1);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
        bytes = buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    } catch (e) {
      throw failed(p, e);
    }
    if (bytes.length > MAX_READ_BYTES) throw new Refused(`${p}: larger than ${MAX_READ_BYTES} bytes; not read`);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new Refused(`${p}: not UTF-8 text`);
    }
  }

  async append(p: string, content: string): Promise<void> {
    const full = await this.#locate(p);
    await fs.appendFile(full, content).catch((e: unknown) => {
      throw failed(p, e);
    });
  }

  async replace(p: string, content: string): Promise<void> {
    const full = await this.#locate(p);
    await fs.writeFile(full, content).catch((e: unknown) => {
      throw failed(p, e);
    });
  }

  async delete(p: string): Promise<void> {
    const full = await this.#locate(p);
    await fs.unlink(full).catch((e: unknown) => {
      throw failed(p, e);
    });
  }

  /** Copies `source` to `destination`; an existing destination only with `overwrite`. Returns the bytes copied. */
  async copy(source: string, destination: string, overwrite: boolean): Promise<number> {
    const from = await this.#locate(source);
    const to = await this.#locate(destination);
    const stat = await fs.stat(from).catch((e: unknown) => {
      throw failed(source, e);
    });
    if (!stat.isFile()) throw new Refused(`${source}: not a regular file`);
    await fs.copyFile(from, to, overwrite ? 0 : fs.constants.COPYFILE_EXCL).catch((e: unknown) => {
      throw failed(destination, e);
    });
    return stat.size;
  }

  /** The entries of a directory, sorted, directories with a trailing `/`. */
  async list(p: string): Promise<string[]> {
    const full = await this.#locate(p);
    const entries = await fs.readdir(full, { withFileTypes: true }).catch((e: unknown) => {
      throw failed(p, e);
    });
    if (entries.length > MAX_LIST_ENTRIES) {
      throw new Refused(`${p}: more than ${MAX_LIST_ENTRIES} entries; not listed`);
    }
    return entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
  }
}
