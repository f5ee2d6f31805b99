//! The build.rs flow end to end, in a fresh crate outside this workspace:
//! a crate whose `build.rs` is SPEC §9's example compiles, resolves like the
//! library, reruns when a rules or schema file changes (and only then), and
//! fails with `file:line:col` errors when the rules are wrong.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use mcp_resolve::Resolver;
use mcp_resolve_runtime::Dialect;
use serde_json::{Value, json};

const BUILD_RS: &str = r#"// build.rs
fn main() {
    mcp_resolve::Builder::new().rules("rules/server.yaml").compile().unwrap_or_else(|e| {
        e.emit_cargo_errors();
        std::process::exit(1)
    });
    mcp_resolve::Builder::new().rules("rules/filesystem.yaml").compile().unwrap_or_else(|e| {
        e.emit_cargo_errors();
        std::process::exit(1)
    });
}
"#;

const MAIN_RS: &str = r#"#![deny(warnings)]
mod resolve {
    include!(concat!(env!("OUT_DIR"), "/server_resolve.rs"));
}
mod filesystem {
    include!(concat!(env!("OUT_DIR"), "/filesystem_resolve.rs"));
}

use std::io::BufRead;

// Each input line: a tool name, a tab, JSON arguments. Each output line: the
// extension-dialect result or the error object.
fn main() {
    println!("{}", filesystem::FINGERPRINT);
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap_or_default();
        let (tool, args) = line.split_once('\t').unwrap_or((&line, "null"));
        let args: serde_json::Value = serde_json::from_str(args).unwrap_or_default();
        match resolve::resolve_json(tool, &args, mcp_resolve_runtime::Dialect::Extension) {
            Ok(text) => println!("{text}"),
            Err(e) => println!("{}", e.to_json()),
        }
    }
}
"#;

fn root() -> PathBuf {
    crate::repo().to_path_buf()
}

fn crate_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("fresh-crate")
}

/// The workspace's target directory, which the fresh crate builds in too:
/// what the two share (the compiler and the runtime, their dependencies at
/// the same versions and features) is compiled once, and no second target
/// directory fills the disk. Its own artifacts are its own (cargo keys them
/// by package, features and profile), as in any target directory that
/// several workspaces share.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn cargo(dir: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut child = Command::new(cargo)
        .args(args)
        .arg("--offline")
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn setup() -> PathBuf {
    let dir = crate_dir();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("rules/schemas")).unwrap();
    let manifest = format!(
        r#"[package]
name = "fresh-server"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
mcp-resolve-runtime = {{ path = {runtime:?} }}
serde_json = "1"

[build-dependencies]
mcp-resolve = {{ path = {root:?} }}

[profile.dev]
debug = 0

[workspace]
"#,
        runtime = root().join("crates/runtime"),
        root = root().join("crates/compiler"),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock file pins the same versions, so `--offline` works.
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("build.rs"), BUILD_RS).unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN_RS).unwrap();
    std::fs::copy(
        root().join("rules/file-server.yaml"),
        dir.join("rules/server.yaml"),
    )
    .unwrap();
    std::fs::copy(
        root().join("rules/filesystem.yaml"),
        dir.join("rules/filesystem.yaml"),
    )
    .unwrap();
    std::fs::copy(
        root().join("rules/schemas/filesystem.json"),
        dir.join("rules/schemas/filesystem.json"),
    )
    .unwrap();
    dir
}

fn cases() -> Vec<(&'static str, Value)> {
    vec![
        ("manage_files", json!({"path": "a", "action": "read"})),
        (
            "manage_files",
            json!({"path": "a", "action": "append", "content": "x"}),
        ),
        ("manage_files", json!({"path": "a", "action": "replace"})),
        ("manage_files", json!({"path": "a", "action": "delete"})),
        ("manage_files", json!({"path": "", "action": "read"})),
        ("manage_files", json!({"action": "read"})),
        ("manage_files", json!({"path": "a", "action": "chmod"})),
        ("manage_files", json!([])),
        ("unknown_tool", json!({})),
    ]
}

fn run(dir: &Path) -> (String, Vec<Value>) {
    let input: String = cases().iter().map(|(t, a)| format!("{t}\t{a}\n")).collect();
    let out = cargo(dir, &["run", "--quiet"], &input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let fingerprint = lines.next().unwrap().to_string();
    let values = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
    (fingerprint, values)
}

fn expected(rules: &Path) -> Vec<Value> {
    let project = mcp_resolve::load(&[rules.to_path_buf()]).unwrap();
    let server = project.single_server().unwrap();
    let resolver = Resolver::new(server).unwrap();
    cases()
        .iter()
        .map(
            |(t, a)| match resolver.resolve_result(t, a, Dialect::Extension) {
                Ok(v) => v,
                Err(e) => e.to_json(),
            },
        )
        .collect()
}

fn fingerprint(rules: &Path) -> String {
    let project = mcp_resolve::load(&[rules.to_path_buf()]).unwrap();
    let doc = mcp_resolve::emit::signature::signature(project.single_server().unwrap());
    doc["fingerprint"].as_str().unwrap().to_string()
}

/// The build script's recorded stdout (its cargo instructions), from its
/// newest run.
fn build_output() -> String {
    let run = generated_file()
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("output");
    std::fs::read_to_string(run).unwrap()
}

/// The generated file of the build script's newest run: the target
/// directory is kept between runs (and shared), and a changed dependency
/// graph gives the build script a new directory.
fn generated_file() -> PathBuf {
    let build = target_dir().join("debug/build");
    std::fs::read_dir(&build)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("fresh-server-"))
        })
        .map(|path| path.join("out/server_resolve.rs"))
        .filter(|path| path.is_file())
        .max_by_key(|path| std::fs::metadata(path).unwrap().modified().unwrap())
        .unwrap_or_else(|| panic!("no server_resolve.rs under {}", build.display()))
}

#[test]
fn a_fresh_crate_builds_with_the_builder_and_resolves_like_the_library() {
    let dir = setup();

    // 1. It builds and resolves exactly like the library.
    let (fp, values) = run(&dir);
    assert_eq!(values, expected(&dir.join("rules/server.yaml")));
    assert_eq!(fp, fingerprint(&dir.join("rules/filesystem.yaml")));
    let instructions = build_output();
    for input in [
        "rules/server.yaml",
        "rules/filesystem.yaml",
        "rules/schemas/filesystem.json",
    ] {
        assert!(
            instructions.contains(&format!("cargo:rerun-if-changed={input}")),
            "no rerun-if-changed for {input}:\n{instructions}"
        );
    }
    // The Builder wrote what `mcp-resolve generate` prints.
    let generated = generated_file();
    assert_eq!(
        std::fs::read_to_string(&generated).unwrap(),
        std::fs::read_to_string(root().join("generated/file-server_resolve.rs"))
            .unwrap()
            .replace("// Input: file-server.yaml", "// Input: server.yaml")
    );

    // 2. Touching the rules without changing them reruns the build script,
    //    which leaves the generated file alone.
    let before = std::fs::metadata(&generated).unwrap().modified().unwrap();
    let rules = dir.join("rules/server.yaml");
    let text = std::fs::read_to_string(&rules).unwrap();
    std::fs::write(&rules, &text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&rules)
        .unwrap()
        .set_modified(SystemTime::now())
        .unwrap();
    let (_, values) = run(&dir);
    assert_eq!(values, expected(&rules));
    assert_eq!(
        std::fs::metadata(&generated).unwrap().modified().unwrap(),
        before
    );

    // 3. Changing the rules changes the resolver (rerun-if-changed works).
    let changed = text.replace(
        "annotations: { destructiveHint: false }\n        requiredScopes: [files:write]",
        "annotations: { destructiveHint: false, idempotentHint: true }\n        requiredScopes: [files:write]",
    );
    assert_ne!(changed, text);
    std::fs::write(&rules, &changed).unwrap();
    let (_, values) = run(&dir);
    assert_eq!(values, expected(&rules));
    assert_eq!(values[1]["annotations"]["idempotentHint"], json!(true));

    // 4. Changing an inputSchemaFile changes the filesystem resolver.
    let schema = dir.join("rules/schemas/filesystem.json");
    let schema_text = std::fs::read_to_string(&schema).unwrap();
    let mut doc: Value = serde_json::from_str(&schema_text).unwrap();
    doc["description"] = json!("changed");
    std::fs::write(&schema, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let (fp, _) = run(&dir);
    assert_eq!(fp, fingerprint(&dir.join("rules/filesystem.yaml")));

    // 5. A mistake in the rules fails the build with file:line:col.
    let broken = changed.replace("readOnlyHint: true", "readOnlyHnt: true");
    std::fs::write(&rules, &broken).unwrap();
    let out = cargo(&dir, &["build"], "");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = broken
        .lines()
        .position(|l| l.contains("readOnlyHnt"))
        .unwrap()
        + 1;
    assert!(
        stderr.contains(&format!("rules/server.yaml:{line}:"))
            && stderr.contains("error[unknown-field]"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `readOnlyHint`"), "{stderr}");

    // Leave the crate buildable for the next run, which then builds only
    // the crate itself.
    std::fs::write(&rules, &text).unwrap();
    std::fs::write(&schema, &schema_text).unwrap();
}
