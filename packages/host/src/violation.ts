// Verdicts: how a server's word disagrees with its signature. The same kinds,
// names and "less conservative" rule as the Rust host library
// (`mcp_resolve_host::ViolationKind`).

/** What kind of disagreement a `Violation` is (the Rust host's kebab-case names). */
export type ViolationKind =
  /** The server offers or resolves a tool the signature does not have. */
  | "unknown-tool"
  /** `tools/list` names a tool twice. */
  | "duplicate-tool"
  /** A tool's title, description, schemas, icons, execution or `_meta` differs. */
  | "tool-changed"
  /** The server marks a tool resolvable that has no variants in the signature. */
  | "not-resolvable"
  /** A resolution for arguments the signature's `inputSchema` refuses. */
  | "invalid-arguments"
  /** A hint's value differs from the signature's. */
  | "annotation"
  /** A hint the signature does not declare. */
  | "undeclared-hint"
  /** The scopes a resolution asks for differ from the signature's. */
  | "scopes"
  /** The result is not a `tools/list` or resolution result of any dialect, or names another tool. */
  | "malformed";

/** One way a server's answer disagrees with its signature (or its bound). */
export class Violation {
  readonly kind: ViolationKind;
  /** The tool concerned (empty when the result names none). */
  readonly tool: string;
  /** Lowercase, user text in backticks. */
  readonly message: string;
  /**
   * Whether the server's word is less conservative than the signature — a
   * hint claimed safer, scopes beyond the declared ones, a tool, hint or
   * resolution the signature does not declare — so a host acting on it
   * would under-prompt.
   */
  lessConservative: boolean;

  constructor(kind: ViolationKind, tool: string, message: string) {
    this.kind = kind;
    this.tool = tool;
    this.message = message;
    this.lessConservative =
      kind === "unknown-tool" ||
      kind === "invalid-arguments" ||
      kind === "undeclared-hint" ||
      kind === "not-resolvable";
  }

  toString(): string {
    return this.tool === "" ? `[${this.kind}] ${this.message}` : `[${this.kind}] tool \`${this.tool}\`: ${this.message}`;
  }

  toJSON(): { kind: ViolationKind; tool: string; message: string; lessConservative: boolean } {
    return { kind: this.kind, tool: this.tool, message: this.message, lessConservative: this.lessConservative };
  }
}

/** Every disagreement found in one result (never empty), as an error. */
export class Violations extends Error {
  readonly violations: readonly Violation[];

  constructor(violations: readonly Violation[]) {
    const n = violations.length;
    super(
      `${n} disagreement${n === 1 ? "" : "s"} with the signature${violations.map((v) => `\n  ${v.toString()}`).join("")}`,
    );
    this.name = "Violations";
    this.violations = violations;
  }

  /** Whether any violation is less conservative than the signature. */
  anyLessConservative(): boolean {
    return this.violations.some((v) => v.lessConservative);
  }
}

/** Throws the violations found, if any. */
export function finish(out: Violation[]): void {
  if (out.length > 0) throw new Violations(out);
}
