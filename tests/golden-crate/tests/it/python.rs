//! The Python resolver against the Rust engines: for every rules file in
//! `rules/` and `tests/fixtures/` that makes one clean server, and for the
//! random rule sets of `build.rs`, `mcp-resolve generate --lang python`'s
//! module (type-checked with `mypy --strict`, run with the runtime package)
//! gives byte-identical answers to the library resolver on over 100,000
//! calls: the variant, the annotations, the scopes, every dialect's result
//! text, and errors with their code, message and data — the validator's
//! report included, entry for entry, since the runtime validates with the
//! same `jsonschema` crate. Only order may differ, since the Python binding
//! holds objects with their keys sorted: a schema's `properties` are checked
//! in name order rather than as declared, and a message that quotes an
//! object lists its members by name. So entries are compared as a set, a
//! message by its characters in any order, and a report cut at its 16
//! entries by its length alone. A set the generator
//! refuses must be refused with `not-portable` diagnostics only.
//!
//! Needs the runtime package installed with its dependencies
//! (`scripts/install-py-runtime.sh`, `MCP_RESOLVE_PY_RUNTIME`).
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use crate::agreement::{entries, expected, host_expected, repo, rules_files, sample_calls};
use crate::random_rules::Rng;
use mcp_resolve::Resolver;
use mcp_resolve::diagnostic::Code;
use mcp_resolve_golden::random::{SEED, SETS};
use serde_json::{Value, json};

/// An empty scratch directory for `name` under cargo's scratch space for
/// integration tests (the runtime's environment is shared: nothing is
/// written into it).
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("python")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn runtime() -> Option<PathBuf> {
    match std::env::var_os("MCP_RESOLVE_PY_RUNTIME") {
        Some(dir) => Some(PathBuf::from(dir)),
        None if std::env::var_os("CI").is_some() => {
            panic!(
                "MCP_RESOLVE_PY_RUNTIME is not set: run scripts/install-py-runtime.sh (scripts/test.sh does)"
            )
        }
        None => {
            eprintln!("skipped: MCP_RESOLVE_PY_RUNTIME is not set (scripts/install-py-runtime.sh)");
            None
        }
    }
}

#[test]
fn python_resolvers_answer_as_the_rust_engines_do() {
    let Some(venv) = runtime() else {
        return;
    };
    let work = scratch("agree");

    let mut sets: Vec<PathBuf> = SETS.iter().map(|(path, _)| PathBuf::from(path)).collect();
    let files = rules_files();
    assert!(files.len() >= 10, "only {} rules files", files.len());
    sets.extend(files);

    let mut rng = Rng(SEED ^ 0x9e);
    let mut expectations: Vec<Option<(Vec<String>, Vec<Value>)>> = Vec::new();
    let mut refused = Vec::new();
    for (n, path) in sets.iter().enumerate() {
        let project = mcp_resolve::load(std::slice::from_ref(path)).unwrap();
        let server = project.single_server().unwrap();
        let code = match mcp_resolve::python::generate(server, &Default::default()) {
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
        std::fs::write(work.join(format!("s{n}.py")), code).unwrap();
        let resolver = Resolver::new(server).unwrap();
        let entries = entries(server);
        let mut calls = String::new();
        let mut lines = Vec::new();
        let mut wanted = Vec::new();
        // Every number a Rust value holds (an i64, a u64 or a double) is the
        // same number in Python: no call is left out.
        let (sample, _) = sample_calls(server, &mut rng, 4, |_| true);
        for (name, args) in &sample {
            let line = serde_json::to_string(&json!([name, args])).unwrap();
            let _ = writeln!(calls, "{line}");
            lines.push(line);
            wanted.push(expected(&resolver, &entries, name, args));
        }
        std::fs::write(work.join(format!("s{n}.calls.jsonl")), calls).unwrap();
        expectations.push(Some((lines, wanted)));
    }

    // Every module type-checks under mypy's strictest settings.
    let mypy = Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir=/dev/null",
        ])
        .arg(".")
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(
        mypy.status.success(),
        "mypy --strict refuses generated code:\n{}{}",
        String::from_utf8_lossy(&mypy.stdout),
        String::from_utf8_lossy(&mypy.stderr)
    );

    let harness = Command::new(venv.join("bin/python"))
        .arg(repo().join("tests/golden-crate/py/agree.py"))
        .arg(&work)
        .arg(sets.len().to_string())
        .output()
        .unwrap();
    assert!(
        harness.status.success(),
        "the harness failed:\n{}",
        String::from_utf8_lossy(&harness.stderr)
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
                    "the Python resolver differs from the library on {}\ncall: {line}\nPython: {got}\nRust:   {want}\nrules:\n{}",
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
        "python: {compared} calls over {} rule sets agree (seed {SEED}); variant/static/error {outcomes:?}; {} sets refused as not portable {refused:?}",
        sets.len(),
        refused.len(),
    );
    assert!(compared >= 100_000, "only {compared} calls compared");
    assert!(
        refused.len() * 10 < sets.len(),
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

/// An answer with its validation report in a canonical order (a report cut
/// at 16 entries holds some 16 of the errors: only its length compares).
fn comparable(answer: &Value) -> Value {
    let mut answer = answer.clone();
    if let Some(Value::Array(report)) = answer.pointer_mut("/error/data") {
        if report.len() >= 16 {
            *report = vec![json!(report.len())];
        } else {
            for entry in report.iter_mut() {
                if let Some(Value::String(message)) = entry.get_mut("message") {
                    let mut chars: Vec<char> = message.chars().collect();
                    chars.sort_unstable();
                    *message = chars.into_iter().collect();
                }
            }
            report.sort_by_key(|entry| entry.to_string());
        }
    }
    answer
}

/// The patterns rules may use, translated for Python's `re` (the backend's
/// `regex` module), accept exactly the strings the `regex` crate accepts:
/// word boundaries of both kinds, line anchors of both modes, Unicode and
/// case-folded classes, `.` with and without `s`, on strings of the
/// characters where engines disagree (`\r`, `\n`, U+2028, non-ASCII letters
/// and digits, astral code points).
#[test]
fn python_patterns_match_as_the_regex_crate_does() {
    let Some(venv) = runtime() else {
        return;
    };
    let patterns = [
        r"\bfoo\b",
        r"\Bo",
        r"\b",
        r"\B",
        r"(?m)^a$",
        r"(?m)$",
        r"(?Rm)^a$",
        r"(?Rm)^$",
        r"(?Rm)$",
        r"^$",
        r"a$",
        r"^a",
        r"(?i)straße",
        r"(?i)σ",
        r"\w+\s\w",
        r".",
        r"(?s)a.b",
        r"a.b",
        r"\d{2,3}",
        r"[^a-z]",
        r"\<f",
        r"o\>",
        r"\b{start-half}o",
        r"o\b{end-half}",
        r"(?-u:\b)é",
        r"(?-u:\w)+",
        r"[[:alpha:]]{2}",
        r"\p{Greek}",
        r"\PL",
        r"(?x) a b # a comment",
        r"a*?b",
        r"(a|ab)(c|bcd)(d*)",
        r"^(?:[a-z]+\.)*[a-z]+$",
        r"🙂|é",
        r"[\x{2028}\r]",
        r"^\s*$",
        r"x{0}",
    ];
    let alphabet: Vec<char> = "abfoxsS _-1\u{663}\n\r\u{2028}éÉßΣσς🙂.".chars().collect();
    let mut rng = Rng(SEED ^ 0x7e);
    let mut input = String::new();
    let mut want: Vec<Vec<bool>> = Vec::new();
    for pattern in patterns {
        let regex = mcp_resolve_runtime::pattern::compile_pattern(pattern).unwrap();
        let source = mcp_resolve::python::regex::to_python(pattern)
            .unwrap_or_else(|e| panic!("{pattern}: {e:?}"));
        let mut strings = vec![String::new()];
        for _ in 0..3_000 {
            let len = rng.below(7);
            strings.push(
                (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect(),
            );
        }
        want.push(strings.iter().map(|s| regex.is_match(s)).collect());
        let _ = writeln!(input, "{}", json!([pattern, source, strings]));
    }
    // Through a file: a pipe each way would fill one while the other waits.
    let work = scratch("patterns").join("patterns.jsonl");
    std::fs::write(&work, &input).unwrap();
    let output = Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import json, re, sys\n\
             for line in open(sys.argv[1], encoding='utf-8'):\n    \
                 _, source, strings = json.loads(line)\n    \
                 r = re.compile(source)\n    \
                 print(json.dumps([r.search(s) is not None for s in strings]))\n",
        ])
        .arg(&work)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&work);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let got: Vec<Vec<bool>> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), patterns.len());
    let lines: Vec<&str> = input.lines().collect();
    let mut compared = 0;
    for (i, pattern) in patterns.iter().enumerate() {
        let strings: Value = serde_json::from_str::<Value>(lines[i]).unwrap()[2].clone();
        for (j, (g, w)) in got[i].iter().zip(&want[i]).enumerate() {
            assert_eq!(
                g, w,
                "`{pattern}` on {}: Python says {g}, the regex crate {w}",
                strings[j]
            );
            compared += 1;
        }
    }
    eprintln!(
        "python patterns: {compared} matches agree over {} patterns",
        patterns.len()
    );
}

/// The Python host library (`mcp_resolve_host`) resolving locally from a
/// signature document answers as the Rust host library does, byte for byte
/// — variant, every hint in order, scopes, the extension's result text, and
/// the violation kind and message of a refusal — for every rules file of
/// `rules/` and `tests/fixtures/` and the random rule sets, on over 100,000
/// calls. It evaluates `argumentPatterns` with the Rust host's own validator
/// (the `jsonschema` crate, patterns on the `regex` crate), so no document
/// may be refused.
#[test]
fn the_python_host_resolves_as_the_rust_host_does() {
    let Some(venv) = runtime() else {
        return;
    };
    let work = scratch("host");

    let mut sets: Vec<PathBuf> = SETS.iter().map(|(path, _)| PathBuf::from(path)).collect();
    sets.extend(rules_files());
    let mut rng = Rng(SEED ^ 0x4058);
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
        for (name, args) in sample_calls(server, &mut rng, 8, |_| true).0 {
            let line = serde_json::to_string(&json!([name, args])).unwrap();
            let _ = writeln!(calls, "{line}");
            wanted.push((line, host_expected(&signature, &name, &args)));
        }
        std::fs::write(work.join(format!("s{n}.calls.jsonl")), calls).unwrap();
        expectations.push(wanted);
    }
    let harness = Command::new(venv.join("bin/python"))
        .arg(repo().join("tests/golden-crate/py/host.py"))
        .arg(&work)
        .arg(sets.len().to_string())
        .output()
        .unwrap();
    assert!(
        harness.status.success(),
        "the harness failed:\n{}",
        String::from_utf8_lossy(&harness.stderr)
    );
    let mut compared = 0usize;
    for (n, wanted) in expectations.iter().enumerate() {
        let got = std::fs::read_to_string(work.join(format!("s{n}.host.jsonl"))).unwrap();
        let got: Vec<&str> = got.lines().collect();
        assert_eq!(
            got.len(),
            wanted.len(),
            "{}: {:?}",
            sets[n].display(),
            got.first()
        );
        for ((call, want), got) in wanted.iter().zip(&got) {
            if got != want {
                panic!(
                    "the Python host differs from the Rust host on {}\ncall: {call}\nPython: {got}\nRust:   {want}\nsignature: {}",
                    sets[n].display(),
                    std::fs::read_to_string(work.join(format!("s{n}.signature.json")))
                        .unwrap_or_default()
                );
            }
            compared += 1;
        }
    }
    eprintln!(
        "python host: {compared} calls over {} rule sets agree with the Rust host (seed {SEED})",
        sets.len(),
    );
    assert!(compared >= 100_000, "only {compared} calls compared");
    let _ = std::fs::remove_dir_all(&work);
}
