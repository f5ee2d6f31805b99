// Which `pattern`s a host evaluates in JavaScript exactly as the Rust engines
// do. A signature document's schemas write patterns in the dialect of Rust's
// `regex` crate (docs/signature.md); Ajv runs them as JavaScript `RegExp`s
// (`u` flag). The two agree on a common core — literals, ASCII classes and
// ranges, groups, alternation, greedy and lazy quantifiers, `^` and `$` —
// and differ elsewhere (`\d`, `\w`, `\s` and `\b` are Unicode-aware in Rust
// and ASCII-only in JavaScript; `.` stops at `\r`, U+2028 and U+2029 only in
// JavaScript; inline flags and named groups are spelt differently). A
// pattern outside the core is refused when the signature loads, naming it,
// never evaluated with another meaning.

/** Why `pattern` is outside the common core, or `undefined` when it is inside. */
export function notPortable(pattern: string): string | undefined {
  // JavaScript's `u` mode escapes only its syntax characters and `/` (and
  // `-` in a class); Rust's regex crate reads those escapes the same way.
  const ESCAPABLE = new Set("\\.+*?()|[]{}^$/".split(""));
  let i = 0;
  let atom = false; // whether a quantifier may follow
  let quantified = false; // whether the last atom has a quantifier already
  const escape = (inClass: boolean): string | undefined => {
    const next = pattern[i + 1];
    if (next === undefined) return "a trailing `\\`";
    if (ESCAPABLE.has(next) || (inClass && next === "-")) {
      i += 2;
      return undefined;
    }
    if (next === "n" || next === "t" || next === "r") {
      i += 2;
      return undefined;
    }
    return `the escape \`\\${next}\` (its meaning differs between Rust's regex crate and JavaScript, or JavaScript has none)`;
  };
  while (i < pattern.length) {
    const c = pattern[i] as string;
    switch (c) {
      case "\\": {
        const why = escape(false);
        if (why !== undefined) return why;
        atom = true;
        quantified = false;
        break;
      }
      case ".":
        return "`.` (JavaScript's stops at `\\r`, U+2028 and U+2029 too; write a class such as `[^\\n]`)";
      case "[": {
        i++;
        if (pattern[i] === "^") i++;
        let first = true;
        for (;;) {
          const d = pattern[i];
          if (d === undefined) return "an unclosed `[`";
          if (d === "]" && !first) break;
          if (d === "[") return "a nested class or a POSIX class (`[[:…:]]`), which JavaScript reads otherwise";
          if ((d === "&" || d === "-" || d === "~") && pattern[i + 1] === d) {
            return `a class set operation (\`${d}${d}\`), which JavaScript reads otherwise`;
          }
          if (d === "]") return "an empty class `[]`";
          if (d === "\\") {
            const why = escape(true);
            if (why !== undefined) return why;
          } else {
            i++;
          }
          first = false;
        }
        i++;
        atom = true;
        quantified = false;
        continue;
      }
      case "(":
        if (pattern[i + 1] === "?") {
          if (pattern[i + 2] !== ":") return "a group with flags or a name (`(?…`), spelt otherwise in JavaScript";
          i += 3;
        } else {
          i++;
        }
        atom = false;
        continue;
      case ")":
        atom = true;
        quantified = false;
        break;
      case "|":
      case "^":
      case "$":
        atom = false;
        break;
      case "*":
      case "+":
      case "?":
        if (!atom || quantified) return `a \`${c}\` with nothing to repeat`;
        quantified = true;
        i++;
        if (pattern[i] === "?") i++;
        continue;
      case "{": {
        const counted = /^\{(\d{1,4})(,(\d{1,4})?)?\}/.exec(pattern.slice(i));
        if (counted === null) return "a `{` that is not a counted repetition (`{n}`, `{n,}`, `{n,m}`)";
        if (!atom || quantified) return "a counted repetition with nothing to repeat";
        const low = Number(counted[1]);
        const high = counted[3] === undefined ? low : Number(counted[3]);
        if (low > 1000 || high > 1000 || high < low) return `the repetition \`${counted[0]}\` (bounds up to 1000, the lower first)`;
        quantified = true;
        i += counted[0].length;
        if (pattern[i] === "?") i++;
        continue;
      }
      case "}":
      case "]":
        return `an unescaped \`${c}\``;
      default:
        atom = true;
        quantified = false;
    }
    i++;
  }
  return undefined;
}

/** The keywords whose value is a schema, a list of schemas or a map of them. */
const ONE = ["additionalProperties", "items", "additionalItems", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedProperties", "unevaluatedItems"];
const LIST = ["allOf", "anyOf", "oneOf", "prefixItems"];
// draft-07's `dependencies` maps a member to a schema or to a list of
// names; a list is no schema (`firstNotPortable` finds nothing in one).
const MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];

/**
 * The first pattern in `schema` (a `pattern`, or a `patternProperties` key)
 * outside the common core: `[pattern, why]`, or `undefined`.
 */
export function firstNotPortable(schema: unknown): [string, string] | undefined {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return undefined;
  const s = schema as Record<string, unknown>;
  const check = (pattern: string): [string, string] | undefined => {
    const why = notPortable(pattern);
    return why === undefined ? undefined : [pattern, why];
  };
  if (typeof s["pattern"] === "string") {
    const found = check(s["pattern"]);
    if (found) return found;
  }
  const patterns = s["patternProperties"];
  if (typeof patterns === "object" && patterns !== null) {
    for (const key of Object.keys(patterns)) {
      const found = check(key);
      if (found) return found;
    }
  }
  for (const key of ONE) {
    const found = Object.hasOwn(s, key) ? firstNotPortable(s[key]) : undefined;
    if (found) return found;
  }
  if (Array.isArray(s["items"])) {
    for (const item of s["items"]) {
      const found = firstNotPortable(item);
      if (found) return found;
    }
  }
  for (const key of LIST) {
    const list = s[key];
    if (!Object.hasOwn(s, key) || !Array.isArray(list)) continue;
    for (const item of list) {
      const found = firstNotPortable(item);
      if (found) return found;
    }
  }
  for (const key of MAP) {
    const map = s[key];
    if (!Object.hasOwn(s, key) || typeof map !== "object" || map === null) continue;
    for (const value of Object.values(map)) {
      const found = firstNotPortable(value);
      if (found) return found;
    }
  }
  return undefined;
}

/** The keywords beside a `$ref` that validate nothing, in any dialect. */
const INERT = new Set([
  "$ref", "$schema", "$comment", "title", "description", "default", "examples", "readOnly", "writeOnly", "definitions",
]);

/** Whether `schema` declares draft-07 (`$schema`). */
function isDraft07(schema: Record<string, unknown>): boolean {
  const dialect = schema["$schema"];
  return typeof dialect === "string" && dialect.startsWith("http://json-schema.org/draft-07/schema");
}

/**
 * In a draft-07 `inputSchema`, the first keyword that stands beside a
 * `$ref` and validates: `[keyword, JSON pointer]`, or `undefined`. draft-07
 * reads a `$ref` alone, as the Rust validator does; Ajv applies its
 * siblings too, so such a schema cannot be validated here as there.
 */
export function firstRefWithSiblings(schema: unknown): [string, string] | undefined {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return undefined;
  if (!isDraft07(schema as Record<string, unknown>)) return undefined;
  return refWithSiblings(schema, "#");
}

function refWithSiblings(schema: unknown, pointer: string): [string, string] | undefined {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return undefined;
  const s = schema as Record<string, unknown>;
  if (Object.hasOwn(s, "$ref")) {
    const keyword = Object.keys(s).find((k) => !INERT.has(k));
    if (keyword !== undefined) return [keyword, pointer];
  }
  const token = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");
  for (const key of ONE) {
    if (!Object.hasOwn(s, key) || Array.isArray(s[key])) continue;
    const found = refWithSiblings(s[key], `${pointer}/${key}`);
    if (found) return found;
  }
  for (const key of [...LIST, "items"]) {
    const list = s[key];
    if (!Object.hasOwn(s, key) || !Array.isArray(list)) continue;
    for (const [i, item] of list.entries()) {
      const found = refWithSiblings(item, `${pointer}/${key}/${i}`);
      if (found) return found;
    }
  }
  for (const key of MAP) {
    const map = s[key];
    if (!Object.hasOwn(s, key) || typeof map !== "object" || map === null || Array.isArray(map)) continue;
    for (const [name, value] of Object.entries(map)) {
      const found = refWithSiblings(value, `${pointer}/${key}/${token(name)}`);
      if (found) return found;
    }
  }
  return undefined;
}
