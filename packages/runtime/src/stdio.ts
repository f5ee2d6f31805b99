// Serving on stdio through the screen (`screen.ts`): `screenedStdin()` is
// the standard input with every line the screen answers or drops taken out
// (its answers written to standard output, whole lines), to hand to the
// SDK's `StdioServerTransport` in place of `process.stdin`:
//
//   serveStdio(factory, { transport: new StdioServerTransport(screenedStdin(resolution), process.stdout) });
//
// Node only (it reads and writes Node streams).

import { Transform, type Readable, type Writable } from "node:stream";

import { Screen } from "./screen.js";
import type { ToolResolution } from "./serving.js";

/** Where the screened lines come from and where its answers go. */
export interface ScreenedStdinOptions {
  readonly input?: Readable;
  readonly output?: Writable;
}

/**
 * The lines of `input` (standard input by default) that pass the screen of
 * `resolution`'s dialect, as a stream; the screen's answers go to `output`
 * (standard output by default).
 */
export function screenedStdin(resolution: ToolResolution, options: ScreenedStdinOptions = {}): Readable {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const screen = new Screen(resolution.dialect === "extension" ? { checking: resolution.method } : {});
  let pending = "";
  const judge = (line: string, pass: (line: string) => void) => {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    const screened = screen.line(text);
    if (screened.kind === "forward") pass(`${line}\n`);
    else if (screened.kind === "reply") output.write(`${JSON.stringify(screened.response)}\n`);
  };
  const lines = new Transform({
    decodeStrings: false,
    transform(chunk: Buffer | string, _encoding, done) {
      pending += typeof chunk === "string" ? chunk : chunk.toString("utf8");
      let at = pending.indexOf("\n");
      while (at >= 0) {
        judge(pending.slice(0, at), (line) => this.push(line));
        pending = pending.slice(at + 1);
        at = pending.indexOf("\n");
      }
      done();
    },
    flush(done) {
      if (pending !== "") judge(pending, (line) => this.push(line));
      done();
    },
  });
  input.setEncoding("utf8");
  return input.pipe(lines);
}
