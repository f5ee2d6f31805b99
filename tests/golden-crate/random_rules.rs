//! Random rule sets for the differential test: several tools per set, every
//! matcher keyword, `not`/`anyOf`/`allOf`, absence, nested paths, and CEL
//! expressions with `&&`, `||`, `!`, `in`, `has`, `size` and the string
//! methods. Deterministic for a seed. Shared by `build.rs` (which generates a
//! resolver for each set) and the test (which knows the sets only as text).

/// SplitMix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    pub fn pick_str(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len())]
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A JSON (and YAML double-quoted) string literal.
pub fn q(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub const STRINGS: &[&str] = &[
    "read", "write", "list", "", "a", "/tmp/a", "notes.md", "quote\"d", "é", "READ", "a*/b",
];
pub const PATTERNS: &[&str] = &[
    "^/tmp/",
    "\\.md$",
    "a+",
    "^read$",
    "^[a-z]+$",
    "é",
    "[0-9]{2,}",
    "^$",
    "d\"",
    "(?i)^READ",
];
pub const NUMBERS: &[&str] = &["-3", "0", "1", "2", "7", "10", "0.5", "-2.5", "1e2"];
pub const INTEGERS: &[&str] = &["-3", "0", "1", "2", "7", "10", "100"];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Str,
    Int,
    Num,
    Bool,
    Any,
    IntOrStr,
    /// An array of strings.
    List,
    /// An array of objects like `opts`.
    Records,
}

const ARGS: &[(&str, Kind)] = &[
    ("mode", Kind::Str),
    ("path", Kind::Str),
    ("count", Kind::Int),
    ("ratio", Kind::Num),
    ("flag", Kind::Bool),
    ("any", Kind::Any),
    ("opts.depth", Kind::IntOrStr),
    ("opts.force", Kind::Bool),
    ("tags", Kind::List),
    ("edits", Kind::Records),
];

fn scalar(rng: &mut Rng, kind: Kind) -> String {
    match kind {
        Kind::Str => q(rng.pick_str(STRINGS)),
        Kind::Int => rng.pick(INTEGERS).to_string(),
        Kind::Num => rng.pick(NUMBERS).to_string(),
        Kind::Bool => rng.pick(&["true", "false"]).to_string(),
        Kind::Any | Kind::IntOrStr => match rng.below(4) {
            0 => q(rng.pick_str(STRINGS)),
            1 => rng.pick(INTEGERS).to_string(),
            2 => "true".into(),
            _ => "null".into(),
        },
        Kind::List => match rng.below(3) {
            0 => "[]".into(),
            1 => format!("[{}]", q(rng.pick_str(STRINGS))),
            _ => format!(
                "[{}, {}]",
                q(rng.pick_str(STRINGS)),
                q(rng.pick_str(STRINGS))
            ),
        },
        Kind::Records => rng
            .pick(&[
                "[]",
                "[{}]",
                "[{ force: true }]",
                "[{ depth: 1 }, { force: false }]",
            ])
            .to_string(),
    }
}

/// A keyword on an array, its items, or its items' fields.
fn array_keyword(rng: &mut Rng, kind: Kind, depth: u32) -> String {
    let item = |rng: &mut Rng| {
        if kind == Kind::List {
            keyword(rng, Kind::Str, depth.saturating_sub(1))
        } else {
            format!(
                "{{ properties: {{ force: {} }}{} }}",
                keyword(rng, Kind::Bool, depth.saturating_sub(1)),
                if rng.chance(2) {
                    ", required: [force]"
                } else {
                    ""
                }
            )
        }
    };
    match rng.below(6) {
        0 => format!("{{ minItems: {} }}", rng.below(3)),
        1 => format!("{{ maxItems: {} }}", rng.below(3)),
        2 | 3 => format!("{{ contains: {} }}", item(rng)),
        4 => format!("{{ items: {} }}", item(rng)),
        _ => format!("{{ const: {} }}", scalar(rng, kind)),
    }
}

fn keyword(rng: &mut Rng, kind: Kind, depth: u32) -> String {
    if depth > 0 && rng.chance(3) {
        return match rng.below(3) {
            0 => format!("{{ not: {} }}", keyword(rng, kind, depth - 1)),
            1 => {
                let n = rng.below(3);
                let ks: Vec<String> = (0..n).map(|_| keyword(rng, kind, depth - 1)).collect();
                format!("{{ anyOf: [{}] }}", ks.join(", "))
            }
            _ => {
                let n = rng.below(3);
                let ks: Vec<String> = (0..n).map(|_| keyword(rng, kind, depth - 1)).collect();
                format!("{{ allOf: [{}] }}", ks.join(", "))
            }
        };
    }
    match kind {
        Kind::Str => match rng.below(7) {
            0 => format!("{{ const: {} }}", scalar(rng, kind)),
            1 => {
                let n = 1 + rng.below(3);
                let vs: Vec<String> = (0..n).map(|_| scalar(rng, kind)).collect();
                format!("{{ enum: [{}] }}", vs.join(", "))
            }
            2 | 3 => format!("{{ pattern: {} }}", q(rng.pick_str(PATTERNS))),
            4 => format!("{{ minLength: {} }}", rng.below(5)),
            5 => format!("{{ maxLength: {} }}", rng.below(9)),
            _ => "{ type: string }".into(),
        },
        Kind::Int | Kind::Num | Kind::IntOrStr => {
            let v = if kind == Kind::Num {
                rng.pick(NUMBERS).to_string()
            } else {
                rng.pick(INTEGERS).to_string()
            };
            match rng.below(6) {
                0 => format!("{{ minimum: {v} }}"),
                1 => format!("{{ maximum: {v} }}"),
                2 => format!("{{ exclusiveMinimum: {v} }}"),
                3 => format!("{{ exclusiveMaximum: {v} }}"),
                4 => format!("{{ const: {v} }}"),
                _ => "{ type: [integer, number] }".into(),
            }
        }
        Kind::Bool | Kind::Any => format!("{{ const: {} }}", scalar(rng, kind)),
        Kind::List | Kind::Records => array_keyword(rng, kind, depth),
    }
}

fn structured_matcher(rng: &mut Rng, kind: Kind) -> String {
    // A bare scalar or list means `const`/`enum` of scalars: arrays take
    // keywords (a literal list is `{ const: […] }`).
    if matches!(kind, Kind::List | Kind::Records) {
        return match rng.below(6) {
            0 => rng
                .pick(&["{ absent: true }", "{ absent: false }"])
                .to_string(),
            _ => keyword(rng, kind, 2),
        };
    }
    match rng.below(8) {
        0..=2 => scalar(rng, kind),
        3..=5 => keyword(rng, kind, 2),
        6 => {
            let n = 1 + rng.below(2);
            let vs: Vec<String> = (0..n).map(|_| scalar(rng, kind)).collect();
            format!("[{}]", vs.join(", "))
        }
        _ => rng
            .pick(&["{ absent: true }", "{ absent: false }", "{}"])
            .to_string(),
    }
}

fn structured_when(rng: &mut Rng) -> String {
    let conj = |rng: &mut Rng| {
        let n = 1 + rng.below(3);
        let mut used = Vec::new();
        let mut parts = Vec::new();
        for _ in 0..n {
            let (arg, kind) = *rng.pick(ARGS);
            if used.contains(&arg) {
                continue;
            }
            used.push(arg);
            parts.push(format!("{arg}: {}", structured_matcher(rng, kind)));
        }
        format!("{{ {} }}", parts.join(", "))
    };
    match rng.below(5) {
        0 => {
            let n = 1 + rng.below(2);
            let cs: Vec<String> = (0..n).map(|_| conj(rng)).collect();
            format!("[{}]", cs.join(", "))
        }
        _ => conj(rng),
    }
}

fn atom(rng: &mut Rng) -> String {
    let (arg, kind) = *rng.pick(ARGS);
    match kind {
        Kind::Str => match rng.below(9) {
            0 | 1 => format!("{arg} == {}", scalar(rng, kind)),
            2 => format!("{arg} != {}", scalar(rng, kind)),
            3 => format!("{arg} in [{}, {}]", scalar(rng, kind), scalar(rng, kind)),
            4 => format!("{arg}.startsWith({})", q(rng.pick_str(STRINGS))),
            5 => format!("{arg}.endsWith({})", q(rng.pick_str(STRINGS))),
            6 => format!("{arg}.contains({})", q(rng.pick_str(STRINGS))),
            7 => format!("{arg}.matches({})", q(rng.pick_str(PATTERNS))),
            _ => format!(
                "size({arg}) {} {}",
                rng.pick(&["<", "<=", ">", ">=", "=="]),
                rng.below(6)
            ),
        },
        Kind::Int | Kind::Num => {
            let v = if kind == Kind::Num {
                rng.pick(NUMBERS)
            } else {
                rng.pick(INTEGERS)
            };
            let op = rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
            if rng.chance(5) {
                format!("{v} {op} {arg}")
            } else {
                format!("{arg} {op} {v}")
            }
        }
        Kind::Bool => match rng.below(3) {
            0 => arg.to_string(),
            1 => format!("!{arg}"),
            _ => format!("{arg} == {}", scalar(rng, kind)),
        },
        Kind::Any | Kind::IntOrStr => match rng.below(3) {
            0 => format!("has({arg})"),
            1 => format!("!has({arg})"),
            _ => format!("{arg} == {}", scalar(rng, kind)),
        },
        Kind::List => match rng.below(6) {
            0 => format!(
                "size({arg}) {} {}",
                rng.pick(&["<", "<=", ">", ">=", "==", "!="]),
                rng.below(3)
            ),
            1 => format!("{} in {arg}", q(rng.pick_str(STRINGS))),
            2 => format!("{arg}.exists(t, t.matches({}))", q(rng.pick_str(PATTERNS))),
            3 => format!(
                "{arg}.all(t, t in [{}, {}])",
                q(rng.pick_str(STRINGS)),
                q(rng.pick_str(STRINGS))
            ),
            4 => format!("{arg} == {}", scalar(rng, kind)),
            _ => format!("{arg}.exists(t, size(t) > {})", rng.below(4)),
        },
        Kind::Records => match rng.below(4) {
            0 => format!("{arg}.exists(e, e.force)"),
            1 => format!("{arg}.all(e, has(e.depth) || e.force == false)"),
            2 => format!("{arg}.exists(e, e.depth > {})", rng.pick(INTEGERS)),
            _ => format!("size({arg}) == {}", rng.below(3)),
        },
    }
}

fn expression(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 || rng.chance(3) {
        return atom(rng);
    }
    match rng.below(4) {
        0 => format!(
            "{} && {}",
            expression(rng, depth - 1),
            expression(rng, depth - 1)
        ),
        1 => format!(
            "{} || {}",
            expression(rng, depth - 1),
            expression(rng, depth - 1)
        ),
        2 => format!("!({})", expression(rng, depth - 1)),
        _ => format!("({})", expression(rng, depth - 1)),
    }
}

const TOOL_NAMES: &[&str] = &["files", "read.file", "x-y_z", "Search", "run", "t9"];
const HINTS: &[&str] = &[
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
    "agencyHint",
];

fn schema(rng: &mut Rng) -> String {
    let mut props = Vec::new();
    let mut names = Vec::new();
    for (name, ty) in [
        ("mode", "{ type: string }"),
        ("path", "{ type: string }"),
        ("count", "{ type: integer }"),
        ("ratio", "{ type: number }"),
        ("flag", "{ type: boolean }"),
        ("any", "{}"),
        (
            "opts",
            "{ type: object, properties: { depth: { type: [integer, string] }, force: { type: boolean } } }",
        ),
        ("tags", "{ type: array, items: { type: string } }"),
        (
            "edits",
            "{ type: array, items: { type: object, properties: { depth: { type: integer }, force: { type: boolean } } } }",
        ),
    ] {
        let ty = match (name, rng.below(6)) {
            ("mode", 0) => "{ type: string, enum: [read, write, list, \"\"] }",
            ("count", 0) => "{ type: integer, minimum: -5, maximum: 50 }",
            ("path", 0) => "{ type: string, maxLength: 12 }",
            _ => ty,
        };
        props.push(format!("        {name}: {ty}\n"));
        names.push(name);
    }
    let mut out = String::from("      type: object\n      properties:\n");
    for p in props {
        out.push_str(&p);
    }
    let required: Vec<&str> = names.into_iter().filter(|_| rng.chance(5)).collect();
    if !required.is_empty() {
        out.push_str(&format!("      required: [{}]\n", required.join(", ")));
    }
    if rng.chance(4) {
        out.push_str("      additionalProperties: false\n");
    }
    out
}

/// The seed of tool `t` of set `index`'s listed extras.
fn rng_seed(index: usize, t: usize) -> u64 {
    0x5eed_0000 ^ ((index as u64) << 8) ^ t as u64
}

/// A tool's `title`, `_meta`, `icons` and `outputSchema`, each present or
/// not.
fn listed_extras(rng: &mut Rng) -> String {
    let mut out = String::new();
    if rng.chance(3) {
        out.push_str("    title: \"A tool\"\n");
    }
    if rng.chance(2) {
        out.push_str(rng.pick_str(&[
            "    _meta: { \"example.com/ui\": \"ui://x\" }\n",
            "    _meta: { ui: { resourceUri: \"ui://app\" }, \"vendor.example/k\": [1, 2] }\n",
        ]));
    }
    if rng.chance(3) {
        out.push_str("    icons: [{ src: \"https://example.com/i.png\", mimeType: image/png }]\n");
    }
    if rng.chance(3) {
        out.push_str("    outputSchema: { type: object, properties: { ok: { type: boolean } } }\n");
    }
    out
}

/// One rule set, as YAML text.
pub fn rule_set(rng: &mut Rng, index: usize, large: bool) -> String {
    let mut out = format!(
        "# generated rule set {index}\nversion: 1\nserver: {{ name: gen-{index}, version: 0.1.0 }}\ntools:\n"
    );
    // Small servers dispatch by `match`; large ones, more than
    // `LINEAR_DISPATCH_MAX` tools, by perfect hash.
    let tools = if large {
        9 + rng.below(6)
    } else {
        1 + rng.below(4)
    };
    for t in 0..tools {
        let name = format!(
            "{}{}",
            rng.pick(TOOL_NAMES),
            if t > 0 { t.to_string() } else { String::new() }
        );
        out.push_str(&format!(
            "  - name: {}\n    inputSchema:\n{}",
            q(&name),
            schema(rng)
        ));
        // What a server lists of a tool beside its schema, drawn from a
        // stream of its own (the rest of the set is the same with or
        // without it): every answer, in every dialect, must still verify
        // against the signature.
        out.push_str(&listed_extras(&mut Rng(rng_seed(index, t))));
        let variants = match rng.below(8) {
            0 => None,
            1 => Some(0),
            _ => Some(1 + rng.below(5)),
        };
        match variants {
            None => {
                out.push_str("    annotations: { readOnlyHint: true }\n");
            }
            Some(0) => out.push_str("    variants: []\n"),
            Some(n) => {
                out.push_str("    variants:\n");
                for v in 0..n {
                    let when = if rng.chance(2) {
                        structured_when(rng)
                    } else {
                        q(&expression(rng, 3))
                    };
                    out.push_str(&format!("      - name: v{v}\n        when: {when}\n"));
                    let mut hs = Vec::new();
                    for h in HINTS {
                        if rng.chance(3) {
                            hs.push(format!("{h}: {}", rng.chance(2)));
                        }
                    }
                    if !hs.is_empty() {
                        out.push_str(&format!("        annotations: {{ {} }}\n", hs.join(", ")));
                    }
                    if rng.chance(3) {
                        out.push_str(&format!(
                            "        requiredScopes: [{}]\n",
                            q(rng.pick_str(&["files:read", "files:write", "admin"]))
                        ));
                    }
                }
            }
        }
    }
    out
}
