//! Code generation from the CLI and the library: goldens in sync, the CLI and
//! the build.rs `Builder` writing the same bytes, deterministic output,
//! write-only-when-changed, and errors that point at the rules.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mcp_resolve::Builder;

fn bundled() -> Vec<PathBuf> {
    common::bundled_rules()
}

fn golden_path(rules: &Path) -> PathBuf {
    let stem = rules.file_stem().unwrap().to_str().unwrap();
    Path::new("generated").join(format!("{stem}_resolve.rs"))
}

fn builder_output(rules: &Path) -> String {
    Builder::new()
        .rules(rules)
        .cargo_instructions(false)
        .generate()
        .unwrap()
}

#[test]
fn goldens_are_up_to_date() {
    for rules in bundled() {
        common::expect_file(&golden_path(&rules), &builder_output(&rules));
    }
}

#[test]
fn every_golden_is_compiled_by_the_golden_crate() {
    let lib = std::fs::read_to_string("tests/golden-crate/src/lib.rs").unwrap();
    for rules in bundled() {
        let golden = golden_path(&rules);
        let include = format!(
            "include!(\"../../../generated/{}\")",
            golden.file_name().unwrap().to_str().unwrap()
        );
        assert!(
            lib.contains(&include),
            "tests/golden-crate/src/lib.rs does not compile {}",
            golden.display()
        );
    }
}

#[test]
fn cli_and_builder_write_the_same_bytes_in_every_run() {
    for rules in bundled() {
        let run = || common::bin().arg("generate").arg(&rules).output().unwrap();
        let (a, b) = (run(), run());
        assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
        assert_eq!(a.stdout, b.stdout);
        assert_eq!(String::from_utf8(a.stdout).unwrap(), builder_output(&rules));
    }
    // The header names inputs by file name, so the directory they are given
    // from does not change the output.
    let absolute = std::fs::canonicalize("rules/file-server.yaml").unwrap();
    assert_eq!(
        builder_output(&absolute),
        builder_output(Path::new("rules/file-server.yaml"))
    );
}

#[test]
fn generated_code_has_the_promised_shape() {
    for rules in bundled() {
        let code = builder_output(&rules);
        assert!(code.starts_with("// @generated"), "{}", rules.display());
        assert!(!code.contains("unsafe"));
        for forbidden in [".unwrap()", ".expect(", "panic!", "unreachable!", "todo!"] {
            assert!(
                !code.contains(forbidden),
                "{forbidden} in {}",
                rules.display()
            );
        }
        syn::parse_file(&code).unwrap();
    }
}

#[test]
fn inputs_include_schema_files() {
    let project = mcp_resolve::load(&[PathBuf::from("rules/filesystem.yaml")]).unwrap();
    assert!(
        project
            .inputs
            .iter()
            .any(|p| p.ends_with("schemas/filesystem.json")),
        "{:?}",
        project.inputs
    );
    assert!(
        builder_output(Path::new("rules/filesystem.yaml")).contains("// Input: filesystem.json")
    );
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-codegen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn files_are_written_only_when_their_content_changes() {
    let dir = temp_dir("unchanged");
    let rules = Path::new("rules/file-server.yaml");
    let out = Builder::new()
        .rules(rules)
        .out_dir(&dir)
        .cargo_instructions(false)
        .compile()
        .unwrap();
    assert_eq!(out, dir.join("file-server_resolve.rs"));
    let old = SystemTime::now() - Duration::from_secs(3600);
    let set_old = || {
        std::fs::File::options()
            .write(true)
            .open(&out)
            .unwrap()
            .set_modified(old)
            .unwrap()
    };
    set_old();
    Builder::new()
        .rules(rules)
        .out_dir(&dir)
        .cargo_instructions(false)
        .compile()
        .unwrap();
    assert_eq!(std::fs::metadata(&out).unwrap().modified().unwrap(), old);

    // The CLI does the same with -o.
    let status = common::bin()
        .args(["generate", "rules/file-server.yaml", "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::metadata(&out).unwrap().modified().unwrap(), old);

    // A change is written, and nothing else is left in the directory.
    std::fs::write(&out, "stale").unwrap();
    set_old();
    Builder::new()
        .rules(rules)
        .out_dir(&dir)
        .cargo_instructions(false)
        .compile()
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        builder_output(rules)
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn out_file_overrides_the_name() {
    let dir = temp_dir("out-file");
    let out = Builder::new()
        .rules("rules/file-server.yaml")
        .out_dir(&dir)
        .out_file("resolver.rs")
        .cargo_instructions(false)
        .compile()
        .unwrap();
    assert_eq!(out, dir.join("resolver.rs"));
    let absolute = dir.join("nested/abs.rs");
    let out = Builder::new()
        .rules("rules/file-server.yaml")
        .out_file(&absolute)
        .cargo_instructions(false)
        .compile()
        .unwrap();
    assert_eq!(out, absolute);
    assert!(absolute.is_file());
}

#[test]
fn builder_errors_point_at_the_rules_and_write_nothing() {
    let dir = temp_dir("errors");
    let rules = dir.join("broken.yaml");
    std::fs::write(
        &rules,
        "version: 1\nserver: { name: s, version: '1' }\ntools:\n  - name: t\n    inputSchema: { type: object }\n    annotaitons: {}\n",
    )
    .unwrap();
    let err = Builder::new()
        .rules(&rules)
        .out_dir(&dir)
        .cargo_instructions(false)
        .compile()
        .unwrap_err();
    let first = &err.problems[0];
    assert_eq!(
        first.location.as_deref(),
        Some(format!("{}:6:5", rules.display()).as_str())
    );
    assert!(first.message.starts_with("error[unknown-field]"), "{first}");
    assert!(
        err.to_string().contains("did you mean `annotations`"),
        "{err}"
    );
    assert!(!dir.join("broken_resolve.rs").exists());

    let err = Builder::new().out_dir(&dir).compile().unwrap_err();
    assert!(err.to_string().contains("no rules files"), "{err}");
    let err = Builder::new()
        .rules(dir.join("missing.yaml"))
        .out_dir(&dir)
        .compile()
        .unwrap_err();
    assert!(err.to_string().contains("cannot read"), "{err}");
    let err = Builder::new()
        .rules("rules/file-server.yaml")
        .runtime_path("not a path")
        .out_dir(&dir)
        .cargo_instructions(false)
        .compile()
        .unwrap_err();
    assert!(err.to_string().contains("runtime path"), "{err}");
}

#[test]
fn cli_generate_refuses_rules_with_errors() {
    let dir = temp_dir("cli-errors");
    let rules = dir.join("broken.yaml");
    std::fs::write(&rules, "version: 2\n").unwrap();
    let out = dir.join("out.rs");
    let output = common::bin()
        .arg("generate")
        .arg(&rules)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("error["));
    assert!(!out.exists());
}

#[test]
fn runtime_path_is_configurable() {
    let code = Builder::new()
        .rules("rules/file-server.yaml")
        .runtime_path("crate::rt")
        .cargo_instructions(false)
        .generate()
        .unwrap();
    assert!(code.contains("crate::rt::Resolved"));
    assert!(code.contains("use crate::rt::json;"));
    assert!(!code.contains("mcp_resolve_runtime"));
    // Written the way Rust spells it, whatever the spacing it was given in.
    let spaced = Builder::new()
        .rules("rules/file-server.yaml")
        .runtime_path(" crate :: rt ")
        .cargo_instructions(false)
        .generate()
        .unwrap();
    assert_eq!(spaced, code);
    for bad in ["crate::rt<u8>", "not a path", ""] {
        let err = Builder::new()
            .rules("rules/file-server.yaml")
            .runtime_path(bad)
            .cargo_instructions(false)
            .generate()
            .unwrap_err();
        assert!(err.to_string().contains("runtime path"), "{bad}: {err}");
    }
}

/// `Builder::max_file_bytes`, `Builder::analysis_limits` and `Builder::jobs` are the CLI's
/// `--max-file-bytes`, `--analysis-*` and `-j`.
#[test]
fn the_builder_takes_the_limits() {
    let dir = temp_dir("limits");
    let error = Builder::new()
        .rules("rules/file-server.yaml")
        .out_dir(&dir)
        .cargo_instructions(false)
        .max_file_bytes(100)
        .compile()
        .unwrap_err()
        .to_string();
    assert!(error.contains("over the limit of 100 bytes"), "{error}");
    assert!(error.contains("Builder::max_file_bytes"), "{error}");
    // A tool whose static annotations are derived: its variants cover
    // every call and are all read-only, so a conclusive analysis makes the
    // tool read-only; an inconclusive one (one search step) keeps the core
    // defaults. The limits reach the analysis when the outputs differ.
    let rules = dir.join("derived.yaml");
    std::fs::write(
        &rules,
        "version: 1\nserver: { name: derived, version: \"1\" }\ntools:\n  - name: t\n    inputSchema: { type: object, properties: { action: { type: string, enum: [a, b] } }, required: [action] }\n    variants:\n      - { name: a, when: { action: a }, annotations: { readOnlyHint: true } }\n      - { name: b, when: { action: b }, annotations: { readOnlyHint: true } }\n",
    )
    .unwrap();
    let generate = |limits: mcp_resolve::AnalysisLimits| {
        Builder::new()
            .rules(&rules)
            .cargo_instructions(false)
            .analysis_limits(limits)
            .generate()
            .unwrap()
    };
    let conclusive = generate(mcp_resolve::AnalysisLimits::default());
    let starved = generate(mcp_resolve::AnalysisLimits {
        budget: 1,
        ..Default::default()
    });
    let listed = |read_only: bool| {
        format!(r#""required":["action"]}},"annotations":{{"readOnlyHint":{read_only},"#)
    };
    assert!(conclusive.contains(&listed(true)), "{conclusive}");
    assert!(starved.contains(&listed(false)), "{starved}");
    assert!(!starved.contains(&listed(true)));
    // `Builder::jobs`: the generated file does not depend on it.
    let with_jobs = |jobs: usize| {
        Builder::new()
            .rules("rules/file-server.yaml")
            .cargo_instructions(false)
            .jobs(jobs)
            .generate()
            .unwrap()
    };
    assert_eq!(with_jobs(1), with_jobs(3));
}

/// The literal a generated `const NAME: &str = …;` holds.
fn const_text(file: &syn::File, name: &str) -> String {
    for item in &file.items {
        if let syn::Item::Const(c) = item
            && c.ident == name
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = c.expr.as_ref()
        {
            return s.value();
        }
    }
    panic!("no const {name}");
}

#[test]
fn large_texts_are_put_in_place_whatever_the_names_say() {
    // The large literals (the signature, `tools/list`, each tool's outcomes
    // and schema) are printed as placeholders, as wide as the literal up to
    // 160 columns, and put in afterwards. Tools named exactly like the
    // signature's placeholder and like a tool's outcomes placeholder make
    // both fall back to printing the literals in place.
    let spelled = |prefix: &str| format!("{prefix:_<158}");
    let (shared, own) = (
        spelled("mcp-resolve placeholder s.0"),
        spelled("mcp-resolve placeholder t.0"),
    );
    let dir = temp_dir("placeholders");
    let rules = dir.join("p.yaml");
    let tool = |name: &str| {
        format!(
            "  - name: \"{name}\"\n    inputSchema: {{ type: object, properties: {{ a: {{ type: string }} }} }}\n    annotations: {{ readOnlyHint: false, destructiveHint: true }}\n    variants:\n      - name: read\n        when: {{ a: r }}\n        annotations: {{ readOnlyHint: true }}\n"
        )
    };
    std::fs::write(
        &rules,
        format!(
            "version: 1\nserver: {{ name: s, version: '1' }}\ntools:\n{}{}",
            tool(&shared),
            tool(&own)
        ),
    )
    .unwrap();
    let code = Builder::new()
        .rules(&rules)
        .cargo_instructions(false)
        .generate()
        .unwrap();
    let file = syn::parse_file(&code).unwrap();
    let signature = common::bin()
        .args(["signature", "--canonical"])
        .arg(&rules)
        .output()
        .unwrap();
    assert!(signature.status.success());
    assert_eq!(
        const_text(&file, "SIGNATURE_JSON") + "\n",
        String::from_utf8(signature.stdout).unwrap()
    );
    // No placeholder is left: those no name spells were filled, and those
    // the names spell were never printed.
    for left in ["s.1", "s.2", "s.3", "t.1"] {
        assert!(
            !code.contains(&format!("mcp-resolve placeholder {left}")),
            "{left}"
        );
    }
    // The second tool's outcomes are in place (a resolver of two tools
    // holds them as an array of `Resolved`).
    assert!(code.contains(&format!("tool: \"{own}\",")), "{code}");
}
