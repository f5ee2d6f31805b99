//! Soundness of the pattern analysis on random rule sets: it never claims
//! "exhaustive" when a schema-valid argument object matches no variant, never
//! claims "unreachable" for a variant the resolver selects, and every example
//! it gives is valid and resolves as claimed.

use mcp_resolve::diagnostic::Severity;
use mcp_resolve::internals::analysis::{Analyzer, Coverage, Reach, ToolAnalysis};
use mcp_resolve::resolve::Resolver;
use mcp_resolve_runtime::ArgumentValidator;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Atoms over the arguments below; conditions combine them.
const ATOMS: &[&str] = &[
    r#"mode == "a""#,
    r#"mode in ["a", "b"]"#,
    r#"mode != "c""#,
    "has(mode)",
    r#"path.startsWith("/tmp/")"#,
    r#"path.startsWith("/tmp/x")"#,
    r#"path.endsWith(".md")"#,
    r#"path.contains("x")"#,
    r#"path.matches("^/[a-c]+$")"#,
    "size(path) > 2",
    "n < 5",
    "n <= 5",
    "n > 10",
    "n >= 10",
    "n == 7",
    "flag == true",
    "flag == false",
    "has(flag)",
    "opts.force == true",
    "has(opts)",
    "opts.level > 2",
    "has(opts.level)",
    "size(tags) == 0",
    "size(tags) > 1",
    r#""x" in tags"#,
    r#"tags.all(t, t in ["x", "y"])"#,
    r#"tags.exists(t, t == "z")"#,
    r#"tags == ["x"]"#,
    "edits.exists(e, e.delete)",
    "edits.all(e, has(e.path))",
    r#"edits.exists(e, e.path.startsWith("/tmp/"))"#,
    "size(edits) <= 1",
];

#[derive(Clone, Debug)]
enum Expr {
    Atom(usize),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

impl Expr {
    fn text(&self) -> String {
        match self {
            Expr::Atom(i) => ATOMS[*i].to_string(),
            Expr::Not(e) => format!("!({})", e.text()),
            Expr::And(a, b) => format!("({}) && ({})", a.text(), b.text()),
            Expr::Or(a, b) => format!("({}) || ({})", a.text(), b.text()),
        }
    }
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = (0..ATOMS.len()).prop_map(Expr::Atom);
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| Expr::Not(Box::new(e))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| Expr::Or(Box::new(a), Box::new(b))),
        ]
    })
}

#[derive(Clone, Debug)]
struct Shape {
    required: [bool; 7],
    short_tags: bool,
    integer: bool,
    bounded: bool,
    absolute: bool,
    force_required: bool,
    variants: Vec<Expr>,
    catch_all: bool,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        any::<[bool; 7]>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(expr(), 1..6),
        prop::bool::weighted(0.2),
    )
        .prop_map(
            |(
                required,
                short_tags,
                integer,
                bounded,
                absolute,
                force_required,
                variants,
                catch_all,
            )| Shape {
                required,
                short_tags,
                integer,
                bounded,
                absolute,
                force_required,
                variants,
                catch_all,
            },
        )
}

const NAMES: [&str; 7] = ["mode", "path", "n", "flag", "opts", "tags", "edits"];

fn schema(s: &Shape) -> Value {
    let mut n = json!({"type": if s.integer { "integer" } else { "number" }});
    if s.bounded {
        n["minimum"] = json!(0);
        n["maximum"] = json!(20);
    }
    let mut path = json!({"type": "string"});
    if s.absolute {
        path["pattern"] = json!("^/");
    }
    let mut tags = json!({"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}});
    if s.short_tags {
        tags["maxItems"] = json!(2);
    }
    let required: Vec<&str> = NAMES
        .iter()
        .zip(s.required)
        .filter(|(_, r)| *r)
        .map(|(n, _)| *n)
        .collect();
    json!({
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["a", "b", "c"]},
            "path": path,
            "n": n,
            "flag": {"type": "boolean"},
            "opts": {
                "type": "object",
                "properties": {"force": {"type": "boolean"}, "level": {"type": "integer"}},
                "required": if s.force_required { json!(["force"]) } else { json!([]) }
            },
            "tags": tags,
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "delete": {"type": "boolean"}}
                }
            }
        },
        "required": required
    })
}

fn rules(s: &Shape) -> String {
    let mut text = format!(
        "version: 1\nserver: {{ name: p, version: '1' }}\ntools:\n  - name: t\n    inputSchema: {}\n    variants:\n",
        schema(s)
    );
    for (i, v) in s.variants.iter().enumerate() {
        text.push_str(&format!(
            "      - {{ name: v{i}, when: {} }}\n",
            Value::String(v.text())
        ));
    }
    if s.catch_all {
        text.push_str("      - { name: rest, when: {} }\n");
    }
    text
}

/// Argument objects from small pools of interesting values, every
/// combination of presence included; the schema then filters them.
fn arguments(seed: u64) -> Vec<Value> {
    let modes = [json!("a"), json!("b"), json!("c")];
    let paths = [
        "",
        "/",
        "/a",
        "/abc",
        "/tmp/",
        "/tmp/x",
        "/tmp/xy.md",
        "x",
        ".md",
        "/tmp/y",
        "/abd",
    ]
    .map(|p| json!(p));
    let ns = [
        json!(-1),
        json!(0),
        json!(4.5),
        json!(5),
        json!(5.5),
        json!(7),
        json!(9),
        json!(10),
        json!(10.5),
        json!(11),
        json!(20),
        json!(21),
    ];
    let flags = [json!(true), json!(false)];
    let opts = [
        json!({}),
        json!({"force": true}),
        json!({"force": false, "level": 3}),
        json!({"level": 1}),
        json!({"force": true, "level": 5}),
    ];
    let tags = [
        json!([]),
        json!(["x"]),
        json!(["y"]),
        json!(["z"]),
        json!(["x", "y"]),
        json!(["x", "x"]),
        json!(["y", "z"]),
        json!(["z", "y", "x"]),
        json!(["y", "y", "y"]),
    ];
    let edits = [
        json!([]),
        json!([{}]),
        json!([{"delete": true}]),
        json!([{"delete": false, "path": "/tmp/a"}]),
        json!([{"path": "a"}, {"delete": true}]),
        json!([{"path": "/tmp/"}, {"path": "b"}]),
        json!([{"delete": true, "path": "/tmp/x"}]),
    ];
    let pools: [&[Value]; 7] = [&modes, &paths, &ns, &flags, &opts, &tags, &edits];
    let mut out = Vec::new();
    let mut state = seed | 1;
    let mut next = |n: usize| {
        // xorshift: reproducible per case
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..400 {
        let mut obj = Map::new();
        for (name, pool) in NAMES.iter().zip(pools) {
            let pick = next(pool.len() + 1);
            if pick < pool.len() {
                obj.insert(name.to_string(), pool[pick].clone());
            }
        }
        out.push(Value::Object(obj));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn claims_are_sound_and_examples_resolve_as_claimed(s in shape(), seed in any::<u64>()) {
        let text = rules(&s);
        let project = mcp_resolve::load_str("random.yaml", &text);
        // Some atoms do not fit some schemas (a compile error): nothing to analyze.
        prop_assume!(project.diagnostics.iter().all(|d| d.severity != Severity::Error));
        let server = &project.servers[0];
        let tool = &server.tools[0];
        let analysis = Analyzer::new().analyze_tool(tool).unwrap();
        let resolver = Resolver::new(server).unwrap();
        let validator = ArgumentValidator::new(&tool.input_schema).unwrap();
        let resolve = |obj: &Value| -> Option<usize> {
            let r = resolver.resolve("t", obj).unwrap();
            r.variant.map(|v| tool.variants.iter().position(|x| x.name == v).unwrap())
        };
        let ToolAnalysis::Done { reach, coverage } = &analysis else {
            // Inconclusive claims nothing; it must stay rare on inputs this small.
            panic!("inconclusive on a small rule set:\n{text}\n{analysis:?}");
        };
        match coverage {
            Coverage::Missing(obj) => {
                prop_assert!(validator.validate("t", obj).is_ok(), "{obj} invalid\n{text}");
                prop_assert_eq!(resolve(obj), None, "{} matches a variant\n{}", obj, text);
            }
            Coverage::Exhaustive => {}
        }
        for (i, r) in reach.iter().enumerate() {
            if let Reach::Unreachable { example: Some((obj, j)), covered_by } = r {
                prop_assert!(validator.validate("t", obj).is_ok());
                prop_assert_eq!(resolve(obj), Some(*j));
                prop_assert!(covered_by.contains(j));
                let _ = i;
            }
        }
        for obj in arguments(seed) {
            if validator.validate("t", &obj).is_err() {
                continue;
            }
            match resolve(&obj) {
                None => prop_assert!(
                    !matches!(coverage, Coverage::Exhaustive),
                    "claimed exhaustive, but {} matches no variant\n{}", obj, text
                ),
                Some(v) => prop_assert_eq!(
                    &reach[v], &Reach::Reachable,
                    "claimed v{} unreachable, but {} selects it\n{}", v, obj, text
                ),
            }
        }
    }
}
