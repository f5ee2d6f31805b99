//! The compiled resolvers agree with the library resolver on the bundled
//! rules and on the hostile fixture: same variant, annotations, scopes, the
//! same response in every dialect, the same errors; the static data is the
//! library's; the Builder's file is the golden byte for byte.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mcp_resolve::Resolver;
use mcp_resolve::emit::tools::tools_list;
use mcp_resolve_golden::{built, goldens};
use mcp_resolve_runtime::{Dialect, Resolved, RpcError};
use serde_json::{Map, Value, json};

type ResolveFn = fn(&str, &Value) -> Result<&'static Resolved, RpcError>;
type ValidatedFn = fn(&str, &Map<String, Value>) -> Result<&'static Resolved, RpcError>;
type ListFn = fn(Dialect) -> &'static str;

struct Generated {
    rules: &'static str,
    resolve: ResolveFn,
    resolve_validated: ValidatedFn,
    tools_list: ListFn,
    signature: &'static str,
    fingerprint: &'static str,
    tool_names: &'static [&'static str],
    /// Strings worth trying beyond those in the rules.
    extra_strings: &'static [&'static str],
    /// Whether every variant must be reached by the generated arguments.
    full_coverage: bool,
}

macro_rules! generated {
    ($module:path, $rules:expr, $extra:expr, $full:expr) => {{
        use $module as m;
        Generated {
            rules: $rules,
            resolve: m::resolve,
            resolve_validated: m::resolve_validated,
            tools_list: m::tools_list_json,
            signature: m::SIGNATURE_JSON,
            fingerprint: m::FINGERPRINT,
            tool_names: &m::TOOL_NAMES,
            extra_strings: $extra,
            full_coverage: $full,
        }
    }};
}

fn all() -> Vec<Generated> {
    vec![
        generated!(goldens::coding_agent, "rules/coding-agent.yaml", &[], true),
        generated!(goldens::file_server, "rules/file-server.yaml", &[], true),
        generated!(
            goldens::filesystem,
            "rules/filesystem.yaml",
            &["/tmp/x", "src/main.rs"],
            false
        ),
        generated!(
            goldens::github_api,
            "rules/github-api.yaml",
            &[
                "/repos/a/b",
                "/repos/a/b/issues",
                "/repos/a/b/issues/1/comments",
                "/repos/a/b/pulls/2/comments",
                "/user",
            ],
            true
        ),
        generated!(
            goldens::repo_contents,
            "rules/repo-contents.rules",
            &[],
            false
        ),
        generated!(built::file_server, "rules/file-server.yaml", &[], true),
        generated!(
            built::hostile,
            "tests/fixtures/codegen/hostile.yaml",
            &["\"#{} tail", "ends with */", "r#\"", "x\"##y"],
            true
        ),
    ]
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Every scalar in a JSON document (strings, numbers), plus neighbours of
/// the numbers, as candidate argument values.
fn harvest(v: &Value, strings: &mut BTreeSet<String>, numbers: &mut BTreeSet<i64>) {
    match v {
        Value::String(s) => {
            strings.insert(s.clone());
        }
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                numbers.extend([i - 1, i, i + 1]);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| harvest(i, strings, numbers)),
        Value::Object(m) => m.values().for_each(|i| harvest(i, strings, numbers)),
        _ => {}
    }
}

fn value_for(schema: &Value, rng: &mut Rng, pool: &Pool, depth: usize) -> Value {
    if let Some(Value::Array(options)) = schema.get("enum")
        && rng.below(4) > 0
    {
        return rng.pick(options).clone();
    }
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    // Mostly well-typed values, sometimes anything (invalid arguments too).
    let ty = if rng.below(8) == 0 {
        *rng.pick(&["string", "integer", "boolean", "null", "number", "object"])
    } else {
        ty
    };
    match ty {
        "string" => Value::String(rng.pick(&pool.strings).clone()),
        "integer" => json!(*rng.pick(&pool.numbers)),
        "number" => {
            if rng.below(2) == 0 {
                json!(*rng.pick(&pool.numbers))
            } else {
                json!(*rng.pick(&pool.numbers) as f64 + 0.5)
            }
        }
        "boolean" => Value::Bool(rng.below(2) == 0),
        "null" => Value::Null,
        "array" => json!([]),
        "object" if depth < 4 => object_for(schema, rng, pool, depth + 1),
        _ => Value::String(rng.pick(&pool.strings).clone()),
    }
}

fn object_for(schema: &Value, rng: &mut Rng, pool: &Pool, depth: usize) -> Value {
    let mut out = Map::new();
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, sub) in props {
            let keep = if required.contains(name.as_str()) {
                rng.below(16) != 0
            } else {
                rng.below(2) == 0
            };
            if keep {
                out.insert(name.clone(), value_for(sub, rng, pool, depth));
            }
        }
    }
    if rng.below(16) == 0 {
        out.insert("unexpected".into(), json!(1));
    }
    Value::Object(out)
}

struct Pool {
    strings: Vec<String>,
    numbers: Vec<i64>,
}

fn check_outcome(
    g: &Generated,
    resolver: &Resolver<'_>,
    name: &str,
    args: &Value,
) -> Option<Option<String>> {
    let ours = (g.resolve)(name, args);
    let lib = resolver.resolve(name, args);
    match (&ours, &lib) {
        (Ok(ours), Ok(lib)) => {
            assert_eq!(&ours.to_resolution(), lib, "{} {name} {args}", g.rules);
            // Valid arguments resolve the same without the schema check.
            let validated = (g.resolve_validated)(name, args.as_object().unwrap()).unwrap();
            assert_eq!(validated, *ours);
            for d in Dialect::ALL {
                let text: Value = serde_json::from_str(&ours.result_json(d)).unwrap();
                assert_eq!(
                    text,
                    resolver.resolve_result(name, args, d).unwrap(),
                    "{} {name} {args} {d}",
                    g.rules
                );
            }
            Some(ours.variant.map(str::to_string))
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.code, b.code, "{} {name} {args}", g.rules);
            assert_eq!(a.message, b.message, "{} {name} {args}", g.rules);
            assert_eq!(a.data, b.data, "{} {name} {args}", g.rules);
            None
        }
        _ => panic!(
            "{} {name} {args}: generated {:?}, library {:?}",
            g.rules, ours, lib
        ),
    }
}

#[test]
fn generated_resolvers_agree_with_the_library() {
    for g in all() {
        let project = mcp_resolve::load(&[root().join(g.rules)]).unwrap();
        assert!(!project.has_errors(), "{}", g.rules);
        let server = project.single_server().unwrap();
        let resolver = Resolver::new(server).unwrap();
        let mut rng = Rng(0x5eed);
        let mut cases = 0;
        for tool in &server.tools {
            let doc = serde_json::to_value(&tool.input_schema).unwrap();
            let mut strings = BTreeSet::new();
            let mut numbers = BTreeSet::new();
            harvest(&doc, &mut strings, &mut numbers);
            for v in &tool.variants {
                harvest(&json!(v.when.to_string()), &mut strings, &mut numbers);
            }
            let sig: Value = serde_json::from_str(g.signature).unwrap();
            harvest(&sig, &mut strings, &mut numbers);
            strings.extend(g.extra_strings.iter().map(|s| s.to_string()));
            strings.insert(String::new());
            numbers.extend([0, -1, 1, i64::MAX]);
            let pool = Pool {
                strings: strings.into_iter().collect(),
                numbers: numbers.into_iter().collect(),
            };
            let mut seen = BTreeSet::new();
            for _ in 0..600 {
                let args = object_for(&tool.input_schema, &mut rng, &pool, 0);
                if let Some(variant) = check_outcome(&g, &resolver, &tool.name, &args) {
                    seen.insert(variant);
                }
                cases += 1;
            }
            if g.full_coverage && tool.resolvable {
                for v in &tool.variants {
                    assert!(
                        seen.contains(&Some(v.name.clone())),
                        "{}: variant `{}` of `{}` never reached",
                        g.rules,
                        v.name,
                        tool.name
                    );
                }
            }
            // Wrong shapes of arguments.
            for args in [json!(null), json!([]), json!("x"), json!(1)] {
                check_outcome(&g, &resolver, &tool.name, &args);
            }
        }
        // Unknown tools, near misses included.
        for name in [
            "",
            "unknown",
            "manage_file",
            "manage_files ",
            "MANAGE_FILES",
        ] {
            if !g.tool_names.contains(&name) {
                let err = (g.resolve)(name, &json!({})).unwrap_err();
                assert_eq!(err, RpcError::unknown_tool(name));
                assert_eq!(resolver.resolve(name, &json!({})).unwrap_err(), err);
            }
        }
        assert!(cases >= 600, "{}", g.rules);
    }
}

#[test]
fn static_data_is_the_library_output() {
    for g in all() {
        let project = mcp_resolve::load(&[root().join(g.rules)]).unwrap();
        let server = project.single_server().unwrap();
        for d in Dialect::ALL {
            let list: Value = serde_json::from_str((g.tools_list)(d)).unwrap();
            assert_eq!(list, tools_list(server, d), "{} {d}", g.rules);
        }
        let doc = mcp_resolve::emit::signature::signature(server);
        // The canonical form, the line `signature --canonical` writes.
        let canonical = mcp_resolve::emit::signature::signature_text(
            server,
            1,
            mcp_resolve::emit::signature::Layout::Canonical,
        );
        assert_eq!(g.signature, canonical.text(), "{}", g.rules);
        assert_eq!(Some(g.fingerprint), doc["fingerprint"].as_str());
        let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(g.tool_names, names.as_slice());
    }
}

#[test]
fn the_builder_writes_the_golden_byte_for_byte() {
    let built = std::fs::read(mcp_resolve_golden::built_file("file-server_resolve.rs")).unwrap();
    let golden = std::fs::read(root().join("generated/file-server_resolve.rs")).unwrap();
    assert!(built == golden, "the Builder and `generate` disagree");
}

#[test]
fn hostile_names_survive_intact() {
    use built::hostile as h;
    assert_eq!(h::SERVER_NAME, "hostile \"server\" */ #{}");
    assert_eq!(h::SERVER_VERSION, "1.0.0\n// injected");
    let name = "quote\"d\\tool */ #{} \"#";
    assert!(h::TOOL_NAMES.contains(&name));
    let cases = [
        (json!({"mode": "a\"b"}), Some("variant \"one\" */ #")),
        (
            json!({"mode": "*/", "nested": {"k}{": 1}}),
            Some("variant\ntwo \\ {}"),
        ),
        (json!({"mode": "*/"}), None),
        (
            json!({"mode": "#{}", "we\"ird key": "\"#{} tail"}),
            Some("ünïcödé 😀"),
        ),
        (
            json!({"mode": "#{}", "path\\with\nnewline": "r#\""}),
            Some("raw-fences"),
        ),
        (json!({"mode": "é", "we\"ird key": "x */"}), Some("suffix")),
        (json!({"mode": "line\nbreak"}), Some("exact")),
    ];
    for (args, variant) in cases {
        let r = h::resolve(name, &args).unwrap();
        assert_eq!(r.variant, variant, "{args}");
        let ext: Value = serde_json::from_str(&r.result_json(Dialect::Extension)).unwrap();
        assert_eq!(ext["name"], name);
    }
    let sep: Value = serde_json::from_str(
        &h::resolve(name, &json!({"mode": "a\"b"}))
            .unwrap()
            .result_json(Dialect::Sep1862),
    )
    .unwrap();
    assert_eq!(
        sep["tool"]["description"],
        "Line one\nLine two */ /* \\ é中😀 r#\"raw\"#"
    );
    assert_eq!(
        h::resolve("plain", &json!({})).unwrap_err(),
        RpcError::not_resolvable("plain")
    );
}
