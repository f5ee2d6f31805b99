//! The TypeScript resolver against the Rust engines: for every rules file in
//! `rules/` and `tests/fixtures/` that makes one clean server, and for the
//! random rule sets of `build.rs`, `mcp-resolve generate --lang typescript`'s
//! module (type-checked with `tsc --strict`, run on Node with the runtime
//! package) gives byte-identical answers to the library resolver on over
//! 100,000 calls: the variant, the annotations, the scopes, every dialect's
//! result text, and errors with their code and message. A set the generator
//! refuses must be refused with `not-portable` diagnostics only.
//!
//! Two things are outside the comparison, by design: the validator's own
//! words in an invalid-arguments error's `data` (Ajv's and the `jsonschema`
//! crate's messages differ; both report a list), and calls whose arguments
//! hold a number no double holds exactly (JavaScript's `JSON.parse` rounds it
//! before any resolver sees it); both are counted and printed.
//!
//! Needs the runtime package built with its dependencies
//! (`scripts/install-ts-runtime.sh`, `MCP_RESOLVE_TS_RUNTIME`) and Node.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::agreement::{entries, expected, host_expected, repo, rules_files, sample_calls};
use crate::random_rules::Rng;
use mcp_resolve::Resolver;
use mcp_resolve::diagnostic::Code;
use mcp_resolve_golden::random::{SEED, SETS};
use serde_json::{Value, json};

fn runtime() -> Option<PathBuf> {
    match std::env::var_os("MCP_RESOLVE_TS_RUNTIME") {
        Some(dir) => Some(PathBuf::from(dir)),
        None if std::env::var_os("CI").is_some() => {
            panic!(
                "MCP_RESOLVE_TS_RUNTIME is not set: run scripts/install-ts-runtime.sh (scripts/test.sh does)"
            )
        }
        None => {
            eprintln!("skipped: MCP_RESOLVE_TS_RUNTIME is not set (scripts/install-ts-runtime.sh)");
            None
        }
    }
}

/// Whether a double holds every number in `value` exactly.
fn exact(value: &Value) -> bool {
    match value {
        Value::Number(n) => mcp_resolve::typescript::exact_in_double(n),
        Value::Array(items) => items.iter().all(exact),
        Value::Object(map) => map.values().all(exact),
        _ => true,
    }
}

/// Runs the harness `script` on Node over the `count` sets in `work`.
fn run_harness(script: &Path, work: &Path, count: usize) {
    let node = Command::new("node")
        .arg(script)
        .arg(work)
        .arg(count.to_string())
        .output()
        .unwrap();
    assert!(
        node.status.success(),
        "the harness failed:\n{}",
        String::from_utf8_lossy(&node.stderr)
    );
}

/// `data` is the validator's own report: equal when both have one.
fn comparable(answer: &Value) -> Value {
    let mut answer = answer.clone();
    if let Some(data) = answer.pointer_mut("/error/data") {
        assert!(
            data.as_array().is_some_and(|d| !d.is_empty()
                && d.iter()
                    .all(|e| e["instancePath"].is_string() && e["message"].is_string())),
            "an error's data is not a list of {{instancePath, message}}: {data}"
        );
        *data = json!("a validation report");
    }
    answer
}

#[test]
fn typescript_resolvers_answer_as_the_rust_engines_do() {
    let Some(runtime) = runtime() else {
        return;
    };
    let work = runtime.join("agree-scratch");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();

    let mut sets: Vec<PathBuf> = SETS.iter().map(|(path, _)| PathBuf::from(path)).collect();
    let files = rules_files();
    assert!(files.len() >= 10, "only {} rules files", files.len());
    sets.extend(files);

    let mut rng = Rng(SEED ^ 0x75);
    let mut expectations: Vec<Option<(Vec<String>, Vec<Value>)>> = Vec::new();
    let mut refused = Vec::new();
    let mut inexact = 0usize;
    for (n, path) in sets.iter().enumerate() {
        let project = mcp_resolve::load(std::slice::from_ref(path)).unwrap();
        let server = project.single_server().unwrap();
        let code = match mcp_resolve::typescript::generate(server, &Default::default()) {
            Ok(code) => code,
            Err(errors) => {
                assert!(
                    errors.iter().all(|d| d.code == Code::NotPortable),
                    "{}: {errors:?}",
                    path.display()
                );
                refused.push(path.display().to_string());
                expectations.push(None);
                continue;
            }
        };
        std::fs::write(work.join(format!("s{n}.ts")), code).unwrap();
        let resolver = Resolver::new(server).unwrap();
        let entries = entries(server);
        let mut calls = String::new();
        let mut lines = Vec::new();
        let mut wanted = Vec::new();
        let (sample, left_out) = sample_calls(server, &mut rng, 4, exact);
        inexact += left_out;
        for (name, args) in &sample {
            let line = serde_json::to_string(&json!([name, args])).unwrap();
            let _ = writeln!(calls, "{line}");
            lines.push(line);
            wanted.push(expected(&resolver, &entries, name, args));
        }
        std::fs::write(work.join(format!("s{n}.calls.jsonl")), calls).unwrap();
        expectations.push(Some((lines, wanted)));
    }

    // Every module type-checks under the strictest settings.
    let tsconfig = json!({
        "compilerOptions": {
            "target": "ES2022", "lib": ["ES2022"], "module": "NodeNext",
            "moduleResolution": "NodeNext", "strict": true,
            "noUncheckedIndexedAccess": true, "exactOptionalPropertyTypes": true,
            "noUnusedLocals": true, "noUnusedParameters": true, "noImplicitReturns": true,
            "skipLibCheck": false, "types": [],
        },
        "include": ["*.ts"],
    });
    std::fs::write(work.join("tsconfig.json"), tsconfig.to_string()).unwrap();
    let tsc = Command::new(runtime.join("node_modules/.bin/tsc"))
        .args(["-p", "tsconfig.json"])
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(
        tsc.status.success(),
        "tsc --strict refuses generated code:\n{}{}",
        String::from_utf8_lossy(&tsc.stdout),
        String::from_utf8_lossy(&tsc.stderr)
    );

    run_harness(
        &repo().join("tests/golden-crate/ts/agree.mjs"),
        &work,
        sets.len(),
    );

    let mut compared = 0usize;
    let mut outcomes = [0usize; 3];
    for (n, expectation) in expectations.iter().enumerate() {
        let Some((lines, wanted)) = expectation else {
            continue;
        };
        let got = std::fs::read_to_string(work.join(format!("s{n}.out.jsonl"))).unwrap();
        let got: Vec<Value> = got
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(got.len(), wanted.len(), "{}", sets[n].display());
        for ((line, want), got) in lines.iter().zip(wanted).zip(&got) {
            if comparable(got) != comparable(want) {
                panic!(
                    "the TypeScript resolver differs from the library on {}\ncall: {line}\nTypeScript: {got}\nRust:       {want}\nrules:\n{}",
                    sets[n].display(),
                    std::fs::read_to_string(&sets[n]).unwrap_or_default()
                );
            }
            compared += 1;
            outcomes[match (&want["ok"][0], want.get("error")) {
                (_, Some(_)) => 2,
                (Value::String(_), _) => 0,
                _ => 1,
            }] += 1;
        }
    }
    eprintln!(
        "typescript: {compared} calls over {} rule sets agree (seed {SEED}); variant/static/error {outcomes:?}; {} sets refused as not portable {refused:?}; {inexact} calls left out (numbers no double holds)",
        sets.len(),
        refused.len(),
    );
    assert!(compared >= 100_000, "only {compared} calls compared");
    assert!(
        refused.len() * 4 < sets.len(),
        "too many sets refused: {refused:?}"
    );
    for (kind, count) in ["variant", "static", "error"].iter().zip(outcomes) {
        assert!(
            count * 20 >= compared,
            "too few `{kind}` outcomes: {outcomes:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}

fn host_package() -> Option<PathBuf> {
    match std::env::var_os("MCP_RESOLVE_TS_HOST") {
        Some(dir) => Some(PathBuf::from(dir)),
        None if std::env::var_os("CI").is_some() => {
            panic!(
                "MCP_RESOLVE_TS_HOST is not set: run scripts/install-ts-package.sh packages/host target/ts-host (scripts/test.sh does)"
            )
        }
        None => {
            eprintln!("skipped: MCP_RESOLVE_TS_HOST is not set (scripts/install-ts-package.sh)");
            None
        }
    }
}

/// The TypeScript host library (`@mcp-resolve/host`) resolving locally from
/// a signature document answers as the Rust host library does, byte for
/// byte — variant, every hint in order, scopes, the extension's result text,
/// and the violation kind and message of a refusal — for every rules file
/// of `rules/` and `tests/fixtures/` and the random rule sets, on over
/// 100,000 calls. A document whose patterns JavaScript cannot evaluate
/// exactly as Rust must be refused when it loads, naming the pattern.
#[test]
fn the_typescript_host_resolves_as_the_rust_host_does() {
    let Some(host) = host_package() else {
        return;
    };
    let work = host.join("agree-scratch");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();

    let mut sets: Vec<PathBuf> = SETS.iter().map(|(path, _)| PathBuf::from(path)).collect();
    sets.extend(rules_files());
    let mut rng = Rng(SEED ^ 0x4057);
    let mut expectations = Vec::new();
    for (n, path) in sets.iter().enumerate() {
        let project = mcp_resolve::load(std::slice::from_ref(path)).unwrap();
        let server = project.single_server().unwrap();
        let document = mcp_resolve::emit::signature::signature(server);
        let text = mcp_resolve_host::jcs::canonical(&document);
        std::fs::write(work.join(format!("s{n}.signature.json")), &text).unwrap();
        let signature = mcp_resolve_host::Signature::from_json(&text).unwrap();
        let mut calls = String::new();
        let mut wanted = Vec::new();
        for (name, args) in sample_calls(server, &mut rng, 8, exact).0 {
            let line = serde_json::to_string(&json!([name, args])).unwrap();
            let _ = writeln!(calls, "{line}");
            wanted.push((line, host_expected(&signature, &name, &args)));
        }
        std::fs::write(work.join(format!("s{n}.calls.jsonl")), calls).unwrap();
        expectations.push(wanted);
    }

    let script = work.join("host.mjs");
    std::fs::copy(repo().join("tests/golden-crate/ts/host.mjs"), &script).unwrap();
    run_harness(&script, &work, sets.len());

    let mut compared = 0usize;
    let mut refused = Vec::new();
    for (n, path) in sets.iter().enumerate() {
        // The runtime's reading of which schemas bound the nesting is the
        // Rust runtime's.
        let project = mcp_resolve::load(std::slice::from_ref(path)).unwrap();
        let want: Vec<bool> = project
            .single_server()
            .unwrap()
            .tools
            .iter()
            .map(|t| mcp_resolve_runtime::schema_bounds_depth(&t.input_schema))
            .collect();
        let got: Vec<bool> = serde_json::from_str(
            &std::fs::read_to_string(work.join(format!("s{n}.bounds.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(got, want, "schemaBoundsDepth on {}", path.display());
    }
    for (n, wanted) in expectations.iter().enumerate() {
        let got = std::fs::read_to_string(work.join(format!("s{n}.host.jsonl"))).unwrap();
        let got: Vec<&str> = got.lines().collect();
        if let [only] = got.as_slice()
            && let Ok(Value::Object(refusal)) = serde_json::from_str::<Value>(only)
            && let Some(Value::String(why)) = refusal.get("refused")
        {
            // Only a pattern JavaScript reads otherwise may be refused.
            assert!(
                why.contains("cannot be evaluated in JavaScript exactly as in Rust"),
                "{}: the host library refused the signature: {why}",
                sets[n].display()
            );
            refused.push(sets[n].display().to_string());
            continue;
        }
        assert_eq!(got.len(), wanted.len(), "{}", sets[n].display());
        for ((call, want), got) in wanted.iter().zip(&got) {
            if got != want {
                panic!(
                    "the TypeScript host differs from the Rust host on {}\ncall: {call}\nTypeScript: {got}\nRust:       {want}\nsignature: {}",
                    sets[n].display(),
                    std::fs::read_to_string(work.join(format!("s{n}.signature.json")))
                        .unwrap_or_default()
                );
            }
            compared += 1;
        }
    }
    eprintln!(
        "typescript host: {compared} calls over {} rule sets agree with the Rust host (seed {SEED}); {} signatures refused as not portable",
        sets.len(),
        refused.len(),
    );
    assert!(compared >= 100_000, "only {compared} calls compared");
    assert!(
        refused.len() * 3 < sets.len(),
        "too many signatures refused: {refused:?}"
    );
    let _ = std::fs::remove_dir_all(&work);
}
