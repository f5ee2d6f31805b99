//! Differential test of the expression language against cel-python, an
//! independent CEL implementation, over generated expressions and argument
//! objects in the region where the semantics coincide: every referenced
//! argument present, each of the type its schema says, numbers compared with
//! literals of their own kind (cel-python has no cross-type numeric
//! comparison). The intended divergence, atoms over absent arguments being
//! false where CEL raises an error, is outside this region by construction
//! (docs/expressions.md).
//!
//! The Python interpreter comes from `MCP_RESOLVE_CEL_PYTHON` (set by
//! `scripts/test.sh`, which installs cel-python into a virtual environment). Without
//! it the test says so and passes, unless `CI` is set.

use crate::common;

use std::process::Command;

use mcp_resolve::internals::eval::{Regexes, eval_cond};
use mcp_resolve::internals::lower::expr::Lowerer;
use mcp_resolve::internals::parse::expr::parse_expression;
use mcp_resolve::ir::Cond;
use mcp_resolve::source::FileId;
use mcp_resolve_runtime::pattern::compile_pattern;
use serde_json::{Value, json};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    fn word(&mut self, xs: &'static [&'static str]) -> &'static str {
        xs[self.below(xs.len())]
    }
}

const STRINGS: &[&str] = &[
    "",
    "a",
    "ab",
    "ba",
    "xab",
    "/tmp/",
    "/tmp/x",
    "notes.md",
    ".md",
    "hello world",
    "world",
    "é✓",
    "a\"b",
];
const PATTERNS: &[&str] = &["^a", "b$", "[0-9]", "^/tmp/.*", "o w", "^$", "é"];
const INTS: &[i64] = &[-2, -1, 0, 1, 2, 3, 5];
const FLOATS: &[f64] = &[-1.5, 0.0, 0.5, 2.25];

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "s": { "type": "string" },
            "t": { "type": "string" },
            "i": { "type": "integer" },
            "f": { "type": "number" },
            "b": { "type": "boolean" },
            "o": { "type": "object", "properties": { "x": { "type": "string" }, "y": { "type": "integer" } } },
            "l": { "type": "array", "items": { "type": "string" } },
            "e": {
                "type": "array",
                "items": { "type": "object", "properties": { "x": { "type": "string" }, "y": { "type": "integer" } } }
            }
        }
    })
}

fn lit_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn float_lit(f: f64) -> String {
    format!("{f:?}")
}

/// One atom, as (ours, CEL).
fn atom(r: &mut Rng) -> (String, String) {
    let spath = *r.pick(&["s", "t", "o.x"]);
    let ipath = *r.pick(&["i", "o.y"]);
    let ops = ["==", "!=", "<", "<=", ">", ">="];
    let ours = match r.below(19) {
        13 => format!("{} in l", lit_str(r.word(STRINGS))),
        14 => format!("size(l) {} {}", r.pick(&ops), r.pick(INTS)),
        15 => format!(
            "l.exists(it, it {} {})",
            r.pick(&["==", "!="]),
            lit_str(r.word(STRINGS))
        ),
        16 => format!(
            "l.all(it, it.startsWith({}) || it in [{}])",
            lit_str(r.word(STRINGS)),
            lit_str(r.word(STRINGS))
        ),
        17 => format!(
            "e.{}(it, it.y {} {} && it.x.contains({}))",
            r.pick(&["exists", "all"]),
            r.pick(&ops),
            r.pick(INTS),
            lit_str(r.word(STRINGS))
        ),
        18 => format!("l == [{}]", lit_str(r.word(STRINGS))),
        0 => format!("{spath} == {}", lit_str(r.word(STRINGS))),
        1 => format!("{spath} != {}", lit_str(r.word(STRINGS))),
        2 => format!(
            "{spath} in [{}, {}]",
            lit_str(r.word(STRINGS)),
            lit_str(r.word(STRINGS))
        ),
        3 => format!("{spath}.startsWith({})", lit_str(r.word(STRINGS))),
        4 => format!("{spath}.endsWith({})", lit_str(r.word(STRINGS))),
        5 => format!("{spath}.contains({})", lit_str(r.word(STRINGS))),
        6 => format!("{spath}.matches({})", lit_str(r.word(PATTERNS))),
        7 => format!("size({spath}) {} {}", r.pick(&ops), r.pick(INTS)),
        8 => format!("{ipath} {} {}", r.pick(&ops), r.pick(INTS)),
        9 => format!("{ipath} in [{}, {}]", r.pick(INTS), r.pick(INTS)),
        10 => format!("f {} {}", r.pick(&ops), float_lit(*r.pick(FLOATS))),
        11 => (*r.pick(&["b", "!b", "b == true", "b != false", "has(o.x)", "has(s)"])).to_string(),
        _ => format!(
            "{} {} {spath}",
            lit_str(r.word(STRINGS)),
            r.pick(&["==", "!="])
        ),
    };
    let cel = to_cel(&ours);
    (ours, cel)
}

/// Our syntax to CEL's: arguments live under `args`.
fn to_cel(ours: &str) -> String {
    let mut out = String::new();
    let mut chars = ours.chars().peekable();
    let mut in_string = false;
    let mut prev = ' ';
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            prev = c;
            continue;
        }
        if c == '"' {
            in_string = true;
            out.push(c);
            prev = c;
            continue;
        }
        if c.is_ascii_alphabetic() && !prev.is_ascii_alphanumeric() && prev != '.' && prev != '_' {
            let mut word = String::from(c);
            while let Some(&n) = chars.peek() {
                if n.is_ascii_alphanumeric() || n == '_' {
                    word.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            let is_call = chars.peek() == Some(&'(');
            let keyword = matches!(word.as_str(), "true" | "false" | "null" | "in" | "it");
            if !is_call && !keyword {
                out.push_str("args.");
            }
            out.push_str(&word);
            prev = word.chars().last().unwrap_or(c);
            continue;
        }
        out.push(c);
        prev = c;
    }
    out
}

fn expr(r: &mut Rng, depth: usize) -> (String, String) {
    if depth == 0 || r.below(3) == 0 {
        return atom(r);
    }
    let (a, ca) = expr(r, depth - 1);
    match r.below(4) {
        0 => {
            let (b, cb) = expr(r, depth - 1);
            (format!("({a}) && ({b})"), format!("({ca}) && ({cb})"))
        }
        1 => {
            let (b, cb) = expr(r, depth - 1);
            (format!("{a} || {b}"), format!("{ca} || {cb}"))
        }
        2 => (format!("!({a})"), format!("!({ca})")),
        _ => {
            let (b, cb) = expr(r, depth - 1);
            (
                format!("{a} && {b} || !({a})"),
                format!("{ca} && {cb} || !({ca})"),
            )
        }
    }
}

fn arguments(r: &mut Rng) -> Value {
    json!({
        "s": r.pick(STRINGS),
        "t": r.pick(STRINGS),
        "i": r.pick(INTS),
        "f": r.pick(FLOATS),
        "b": r.below(2) == 0,
        "o": { "x": r.pick(STRINGS), "y": r.pick(INTS) },
        "l": (0..r.below(4)).map(|_| r.word(STRINGS)).collect::<Vec<_>>(),
        "e": (0..r.below(3))
            .map(|_| json!({ "x": r.word(STRINGS), "y": r.pick(INTS) }))
            .collect::<Vec<_>>()
    })
}

fn regexes(cond: &Cond, into: &mut Regexes) {
    cond.walk(&mut |_, pred| {
        if let Some(p) = pred {
            p.walk_deep(&mut |q| {
                if let mcp_resolve::ir::PredKind::Pattern(re) = &q.kind {
                    into.insert(re.clone(), compile_pattern(re).unwrap());
                }
            });
        }
    });
}

fn python() -> Option<String> {
    common::component("MCP_RESOLVE_CEL_PYTHON", "the CEL differential test")
        .map(|p| p.to_string_lossy().into_owned())
}

#[test]
fn expressions_agree_with_cel_python() {
    let Some(python) = python() else {
        return;
    };
    let schema = schema();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut cases = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..1500 {
        let (text, cel) = expr(&mut rng, 3);
        let map = |i: usize| i;
        let parsed = parse_expression(&text, FileId(0), &map)
            .unwrap_or_else(|d| panic!("`{text}` does not parse: {}", d.message));
        let mut diags = Vec::new();
        let cond = Lowerer {
            schema: &schema,
            diags: &mut diags,
        }
        .cond(&parsed)
        .unwrap_or_else(|| panic!("`{text}` does not lower: {diags:?}"));
        assert!(diags.is_empty(), "`{text}`: {diags:?}");
        let mut res = Regexes::new();
        regexes(&cond, &mut res);
        for _ in 0..6 {
            let args = arguments(&mut rng);
            ours.push((text.clone(), args.clone(), eval_cond(&cond, &args, &res)));
            cases.push(json!({ "expr": cel, "args": args }));
        }
    }
    let input = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-cel-{}.json", std::process::id()));
    std::fs::write(
        &input,
        serde_json::to_vec(&json!({ "cases": cases })).unwrap(),
    )
    .unwrap();
    let out = Command::new(&python)
        .arg(crate::repo().join("tests/cel/differential.py"))
        .arg(&input)
        .output()
        .expect("run cel-python");
    let _ = std::fs::remove_file(&input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(theirs.len(), ours.len());
    let mut trues = 0;
    for ((text, args, mine), (theirs, case)) in ours.iter().zip(theirs.iter().zip(&cases)) {
        assert_eq!(
            theirs,
            &Value::Bool(*mine),
            "`{text}` on {args}: mcp-resolve says {mine}, cel-python says {theirs} (CEL: `{}`)",
            case["expr"]
        );
        trues += usize::from(*mine);
    }
    // Both outcomes are well represented.
    assert!(
        trues > ours.len() / 10 && trues < ours.len() * 9 / 10,
        "{trues} of {}",
        ours.len()
    );
    eprintln!("{} cases agree ({trues} true)", ours.len());
}
