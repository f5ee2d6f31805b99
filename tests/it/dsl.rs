//! The expression language and the `.rules` syntax end to end: the three ways
//! of writing a server agree byte for byte, `convert` round-trips every
//! bundled file, and `fmt` is canonical, idempotent and never touches a file
//! it cannot read.

use crate::common;

use std::path::{Path, PathBuf};

use mcp_resolve::emit::signature::{signature, to_pretty};
use mcp_resolve::format::{FormatError, Syntax, format_file};

fn signature_of(path: &str, text: &str) -> String {
    let project = mcp_resolve::load_str(path, text);
    let errors: Vec<_> = project
        .diagnostics
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert!(!project.has_errors(), "{path}: {errors:?}");
    let doc = signature(project.single_server().unwrap());
    to_pretty(&doc)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn structured_expression_and_rules_forms_give_byte_identical_signatures() {
    let dir = Path::new("tests/fixtures/forms");
    let structured = signature_of(
        "tests/fixtures/forms/storage.structured.yaml",
        &read(&dir.join("storage.structured.yaml")),
    );
    let expr = signature_of(
        "tests/fixtures/forms/storage.expr.yaml",
        &read(&dir.join("storage.expr.yaml")),
    );
    let rules = signature_of(
        "tests/fixtures/forms/storage.rules",
        &read(&dir.join("storage.rules")),
    );
    assert_eq!(structured, expr);
    assert_eq!(structured, rules);
    // And the same through the CLI, as bytes.
    let outputs: Vec<Vec<u8>> = [
        "storage.structured.yaml",
        "storage.expr.yaml",
        "storage.rules",
    ]
    .iter()
    .map(|f| {
        let o = common::bin()
            .arg("signature")
            .arg(dir.join(f))
            .output()
            .unwrap();
        assert!(o.status.success());
        o.stdout
    })
    .collect();
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
}

fn bundled() -> Vec<PathBuf> {
    let mut files = common::files("rules", "yaml");
    files.extend(common::files("rules", "rules"));
    files.extend(common::files("tests/fixtures/forms", "yaml"));
    files.extend(common::files("tests/fixtures/forms", "rules"));
    files.sort();
    files
}

/// `convert` to the other syntax and back: equal IR, byte-identical
/// signatures, and the printed forms are fixed points of `fmt`.
#[test]
fn convert_round_trips_every_bundled_file() {
    for path in bundled() {
        let text = read(&path);
        let from = Syntax::of(&path);
        let other = match from {
            Syntax::Yaml => Syntax::Rules,
            Syntax::Rules => Syntax::Yaml,
        };
        let ext = |s: Syntax| if s == Syntax::Yaml { "yaml" } else { "rules" };
        let there = format_file(&path, &text, other).unwrap();
        let there_path = path.with_extension(format!("converted.{}", ext(other)));
        let back = format_file(&there_path, &there, from).unwrap();

        let original = mcp_resolve::load_str(&path.to_string_lossy(), &text);
        let converted = mcp_resolve::load_str(&there_path.to_string_lossy(), &there);
        let returned = mcp_resolve::load_str(&path.to_string_lossy(), &back);
        assert_eq!(original.servers, converted.servers, "{}", path.display());
        assert_eq!(original.servers, returned.servers, "{}", path.display());
        let sig = signature_of(&path.to_string_lossy(), &text);
        assert_eq!(sig, signature_of(&there_path.to_string_lossy(), &there));
        assert_eq!(sig, signature_of(&path.to_string_lossy(), &back));
        // Converting twice changes nothing more.
        assert_eq!(
            format_file(&path, &back, other).unwrap(),
            there,
            "{}",
            path.display()
        );
    }
}

#[test]
fn bundled_files_are_canonical_and_fmt_is_idempotent() {
    for path in bundled() {
        let text = read(&path);
        let once = format_file(&path, &text, Syntax::of(&path)).unwrap();
        let twice = format_file(&path, &once, Syntax::of(&path)).unwrap();
        assert_eq!(once, twice, "{} is not idempotent", path.display());
        if path.starts_with("rules") {
            assert_eq!(
                once,
                text,
                "{} is not canonical; run `mcp-resolve fmt --write rules/`",
                path.display()
            );
        }
    }
}

#[test]
fn convert_leaves_the_yaml_language_servers_modeline_behind() {
    let path = Path::new("rules/file-server.yaml");
    let text = read(path);
    assert!(
        text.starts_with("# yaml-language-server: $schema="),
        "{text}"
    );
    let as_rules = format_file(path, &text, Syntax::Rules).unwrap();
    assert!(!as_rules.contains("yaml-language-server"), "{as_rules}");
    // Nor the empty comment line that only set it apart; the rest stays.
    assert!(!as_rules.starts_with("//\n"), "{as_rules}");
    for line in text
        .lines()
        .skip(2)
        .filter_map(|l| l.trim().strip_prefix('#'))
    {
        assert!(
            as_rules.contains(&format!("//{line}")),
            "{line}\n{as_rules}"
        );
    }
}

#[test]
fn comments_survive_fmt_and_convert() {
    let path = Path::new("tests/fixtures/forms/storage.structured.yaml");
    let text = read(path);
    let as_rules = format_file(path, &text, Syntax::Rules).unwrap();
    for line in text.lines().filter_map(|l| l.trim().strip_prefix('#')) {
        assert!(
            as_rules.contains(&format!("//{line}")),
            "lost comment {line:?}:\n{as_rules}"
        );
    }
    let rules_path = Path::new("tests/fixtures/forms/storage.rules");
    let rules_text = read(rules_path);
    let as_yaml = format_file(rules_path, &rules_text, Syntax::Yaml).unwrap();
    assert!(
        as_yaml.contains("# a recursive read is a listing\n"),
        "{as_yaml}"
    );
    assert!(as_yaml.contains("# The storage server"), "{as_yaml}");
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-dsl-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn fmt_check_and_write() {
    let dir = scratch("fmt");
    let messy = dir.join("messy.rules");
    let original = "version 1 server s version \"1\"\n// keep me\ntool t { inputSchema {\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}\nvariant v when a==\"x\"&&size(a)>1 { annotations {readOnlyHint:true} } }\n";
    std::fs::write(&messy, original).unwrap();

    let o = common::bin()
        .args(["fmt", "--check"])
        .arg(&messy)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not canonical"));
    assert_eq!(read(&messy), original, "--check must not write");

    let o = common::bin().arg("fmt").arg(&messy).output().unwrap();
    assert!(o.status.success());
    let printed = String::from_utf8(o.stdout).unwrap();
    assert!(printed.contains("// keep me\ntool t {"), "{printed}");
    assert!(
        printed.contains("variant v when a == \"x\" && size(a) > 1 {"),
        "{printed}"
    );

    let o = common::bin()
        .args(["fmt", "--write"])
        .arg(&messy)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(read(&messy), printed);
    let o = common::bin()
        .args(["fmt", "--check"])
        .arg(&messy)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn fmt_write_never_touches_a_file_with_errors() {
    let dir = scratch("broken");
    for (name, text) in [
        (
            "broken.rules",
            "version 1\nserver s version \"1\"\ntool t {\n  titel \"x\"\n}\n",
        ),
        (
            "broken.yaml",
            "version: 1\nserver: { name: s, version: '1' }\ntools:\n  - name: t\n    inputSchema: { type: object }\n    variants:\n      - name: v\n        when: 'a =='\n",
        ),
        (
            "unknown.yaml",
            "version: 1\nserver: { name: s, version: '1' }\ntools:\n  - name: t\n    inptSchema: {}\n",
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let o = common::bin()
            .args(["fmt", "--write"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("was not formatted"),
            "{name}"
        );
        assert_eq!(read(&path), text, "{name} was changed");
        match format_file(&path, text, Syntax::of(&path)) {
            Err(FormatError::Invalid(rendered)) => {
                assert!(rendered.contains("error["), "{rendered}")
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn convert_writes_the_other_syntax_and_refuses_to_overwrite() {
    let dir = scratch("convert");
    let out = dir.join("file-server.rules");
    let o = common::bin()
        .args(["convert", "rules/file-server.yaml", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = read(&out);
    assert!(written.contains("variant overwrite when action in [\"replace\", \"delete\"] {"));

    std::fs::write(&out, "mine").unwrap();
    let o = common::bin()
        .args(["convert", "rules/file-server.yaml", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        read(&out),
        "mine",
        "an existing file was replaced without --force"
    );
    let o = common::bin()
        .args(["convert", "rules/file-server.yaml", "--force", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(read(&out), written);

    // Back to YAML on standard output, and the signature agrees.
    let o = common::bin()
        .args(["convert", "--to", "yaml"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success());
    let yaml = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        signature_of("back.yaml", &yaml),
        signature_of(
            "rules/file-server.yaml",
            &read(Path::new("rules/file-server.yaml"))
        )
    );
}

#[test]
fn directories_mixing_both_syntaxes_are_one_project() {
    let o = common::bin().args(["check", "rules/"]).output().unwrap();
    assert!(o.status.success());
    let project = mcp_resolve::load(&[PathBuf::from("rules")]).unwrap();
    assert!(project.files.len() >= 5);
    assert!(
        project
            .inputs
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "rules"))
    );
    assert!(
        project
            .inputs
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "yaml"))
    );
    let o = common::bin()
        .args([
            "resolve",
            "rules/repo-contents.rules",
            "--tool",
            "get_repo_contents",
            "--args",
        ])
        .arg(r#"{"owner":"o","repo":"r","visibility":"public"}"#)
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["annotations"]["readOnlyHint"], true);
}

/// A server without tools (`tools: []`) converts to a `.rules` file that
/// checks, and back to the same YAML.
#[test]
fn a_server_without_tools_converts_both_ways() {
    let dir = scratch("convert-no-tools");
    let yaml = dir.join("empty.yaml");
    let text = "version: 1\nserver: { name: s, version: \"1\" }\ntools: []\n";
    std::fs::write(&yaml, text).unwrap();
    let rules = dir.join("empty.rules");
    let o = common::bin()
        .args(["convert"])
        .arg(&yaml)
        .arg("-o")
        .arg(&rules)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = common::bin().arg("check").arg(&rules).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let o = common::bin()
        .args(["convert", "--to", "yaml"])
        .arg(&rules)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), text);
}

/// `convert` of a file with errors the other syntax cannot express
/// (`inputSchema: null`) reports the file's errors, not an internal error.
#[test]
fn convert_of_a_file_with_errors_says_so() {
    let dir = scratch("convert-errors");
    let yaml = dir.join("null-schema.yaml");
    std::fs::write(
        &yaml,
        "version: 1\nserver: { name: s, version: \"1\" }\ntools:\n  - name: a\n    inputSchema: null\n",
    )
    .unwrap();
    let o = common::bin()
        .args(["convert", "--to", "rules"])
        .arg(&yaml)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("invalid-schema"), "{stderr}");
    assert!(
        stderr.contains("has errors; it was not converted"),
        "{stderr}"
    );
    assert!(!stderr.contains("internal error"), "{stderr}");
    assert!(o.stdout.is_empty());
}

/// Argument names that are not identifiers — empty, with a newline, a
/// backtick or a backslash — are written as quoted names with escapes in
/// `.rules`, and come back the same (a `convert` used to fail on them with
/// an internal error). The codegen fixture full of hostile names converts too.
#[test]
fn argument_names_of_any_text_convert_both_ways() {
    let dir = scratch("convert-odd-names");
    let yaml = dir.join("odd.yaml");
    std::fs::write(
        &yaml,
        r#"version: 1
server: { name: s, version: "1" }
tools:
  - name: a
    inputSchema:
      type: object
      properties:
        "": { type: string }
        "a\nb": { type: string }
        "tick`and\\slash": { type: string }
    variants:
      - name: v
        when: { "a\nb": "x", "": "y", "tick`and\\slash": "z" }
        annotations: { readOnlyHint: true }
"#,
    )
    .unwrap();
    for input in [
        yaml.clone(),
        PathBuf::from("tests/fixtures/codegen/hostile.yaml"),
    ] {
        let rules = dir.join("out.rules");
        let o = common::bin()
            .args(["convert", "--force", "-o"])
            .arg(&rules)
            .arg(&input)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let signature = |path: &Path| {
            let o = common::bin().arg("signature").arg(path).output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        };
        assert_eq!(signature(&input), signature(&rules), "{}", input.display());
    }
    let text = std::fs::read_to_string(dir.join("out.rules")).unwrap();
    assert!(text.contains(r"`path\\with\nnewline`"), "{text}");
}

/// A `.rules` comment holding a character YAML cannot (a NUL, found by the
/// `format_roundtrip` fuzz target) converts to YAML that loads, the
/// character shown as U+FFFD.
#[test]
fn comments_with_control_characters_convert_to_yaml() {
    let dir = scratch("convert-control-comment");
    let rules = dir.join("nul.rules");
    std::fs::write(
        &rules,
        "version 1\nserver s version 1\n// a\u{0}b \u{7} \u{ffff}\ntool t {\n  inputSchema { \"type\": \"object\" }\n}\n",
    )
    .unwrap();
    let yaml = dir.join("nul.yaml");
    let o = common::bin()
        .args(["convert", "-o"])
        .arg(&yaml)
        .arg(&rules)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&yaml).unwrap();
    assert!(text.contains("# a\u{fffd}b \u{fffd} \u{fffd}"), "{text}");
    let o = common::bin().arg("check").arg(&yaml).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

/// Comments inside an inline YAML `inputSchema` (found by reading the
/// format_roundtrip findings: `type: object #`): JSON holds no comment, so
/// `.rules` writes them next to the member, never inside it; an empty
/// comment gains no trailing space; and the result formats to itself.
#[test]
fn comments_inside_a_yaml_schema_convert_to_rules() {
    let yaml = "version: 1\nserver: { name: s, version: \"1\" }\ntools:\n  - name: t\n    # before\n    inputSchema: # on the key\n      type: object #\n      # own line inside\n      properties:\n        action: { type: string } # after action\n    annotations: { readOnlyHint: false } # ann\n";
    let rules = format_file(Path::new("c.yaml"), yaml, Syntax::Rules).unwrap();
    assert!(!rules.lines().any(|l| l.ends_with(' ')), "{rules}");
    for comment in [
        "// before",
        "// on the key",
        "// own line inside",
        "// after action",
        "// ann",
    ] {
        assert!(rules.contains(comment), "{comment} is lost:\n{rules}");
    }
    assert_eq!(
        format_file(Path::new("c.rules"), &rules, Syntax::Rules).unwrap(),
        rules
    );
    let back = format_file(Path::new("c.rules"), &rules, Syntax::Yaml).unwrap();
    assert_eq!(
        format_file(Path::new("d.yaml"), &back, Syntax::Yaml).unwrap(),
        back
    );
    for comment in [
        "# before",
        "# on the key",
        "# own line inside",
        "# after action",
        "# ann",
    ] {
        assert!(back.contains(comment), "{comment} is lost:\n{back}");
    }
}

/// YAML 1.2 booleans only: a property called `n` or `on` keeps its name
/// (YAML 1.1 read them as `false` and `true`), `yes` is not a boolean, and
/// the printer quotes YAML 1.1's spellings for other readers.
#[test]
fn yaml_1_1_booleans_are_strings() {
    let yaml = "version: 1\nserver: { name: n, version: \"1\" }\ntools:\n  - name: t\n    inputSchema: { type: object, properties: { on: { type: string }, n: { type: boolean } } }\n    annotations: { readOnlyHint: false }\n    variants:\n      - name: v\n        when: { on: x, n: true }\n        annotations: { readOnlyHint: true }\n";
    let project = mcp_resolve::load_str("b.yaml", yaml);
    assert!(!project.has_errors(), "{:?}", project.diagnostics);
    let doc = signature(&project.servers[0]);
    assert_eq!(doc["serverInfo"]["name"], "n");
    let properties = &doc["tools"][0]["inputSchema"]["properties"];
    assert!(
        properties.get("on").is_some() && properties.get("n").is_some(),
        "{properties}"
    );
    let printed = format_file(Path::new("b.yaml"), yaml, Syntax::Yaml).unwrap();
    assert!(printed.contains("name: \"n\""), "{printed}");
    assert!(printed.contains("\"on\":"), "{printed}");
    let yes = yaml.replace("readOnlyHint: false", "readOnlyHint: yes");
    let project = mcp_resolve::load_str("b.yaml", &yes);
    assert!(
        project
            .diagnostics
            .iter()
            .any(|d| d.code.to_string() == "invalid-value"),
        "{:?}",
        project.diagnostics
    );
}

/// Characters YAML does not allow raw in a double-quoted scalar (DEL, the C1
/// controls, the separators, the byte-order mark, U+FFFE/U+FFFF) are escaped
/// when formatting, as JSON would not; found by the `format_roundtrip`
/// campaign (`"[^\\x00-X\x7F]"` written back with a raw DEL).
#[test]
fn characters_yaml_does_not_allow_raw_are_escaped_when_formatting() {
    for escape in [
        "\\x7F", "\\x85", "\\x9f", "\\u2028", "\\u2029", "\\uFEFF", "\\uFFFE", "\\x01",
    ] {
        let yaml = format!(
            "version: 1\nserver: {{ name: s, version: \"1\" }}\ntools:\n  - name: t\n    description: \"a{escape}b\"\n    inputSchema: {{ type: object, properties: {{ \"p{escape}\": {{ type: string }} }} }}\n    variants:\n      - {{ name: v, when: {{ \"p{escape}\": {{ pattern: \"[^\\\\x00-X{escape}]\" }} }} }}\n"
        );
        let project = mcp_resolve::load_str("c.yaml", &yaml);
        assert!(!project.has_errors(), "{escape}: {:?}", project.diagnostics);
        for (to, path) in [(Syntax::Yaml, "out.yaml"), (Syntax::Rules, "out.rules")] {
            let printed = format_file(Path::new("c.yaml"), &yaml, to)
                .unwrap_or_else(|e| panic!("{escape} to {to:?}: {e:?}"));
            assert!(
                !printed.contains(|c: char| c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c)),
                "{escape}: a raw control character in\n{printed}"
            );
            let again = format_file(Path::new(path), &printed, to).unwrap();
            assert_eq!(again, printed, "{escape} to {to:?}: not idempotent");
        }
    }
}

/// A comment trailing the first key of a block `inputSchema` stays on that
/// key's line, and one trailing `inputSchema:` itself stays on its line:
/// formatting used to hang the first on `inputSchema:`, and the next run
/// moved it above (not idempotent; found by the `format_roundtrip`
/// campaign on `rules/real-mcp-server-git.yaml` with a `#` inserted).
#[test]
fn comments_trailing_a_block_schema_stay_where_they_are() {
    let cases = [
        ("      properties: # note\n", "      properties:  # note\n"),
        (
            "      type: object # note\n",
            "      type: object  # note\n",
        ),
    ];
    for (line, expected) in cases {
        let yaml = format!(
            "version: 1\nserver: {{ name: s, version: 1.0.0 }}\ntools:\n  - name: t\n    inputSchema: # key\n{line}{}",
            if line.contains("properties") {
                "        a: { type: string }\n      type: object\n"
            } else {
                "      properties:\n        a: { type: string }\n"
            }
        );
        assert!(
            !mcp_resolve::load_str("c.yaml", &yaml).has_errors(),
            "{yaml}"
        );
        let printed = format_file(Path::new("c.yaml"), &yaml, Syntax::Yaml).unwrap();
        assert!(printed.contains("    inputSchema:  # key\n"), "{printed}");
        assert!(printed.contains(expected), "{printed}");
        let again = format_file(Path::new("out.yaml"), &printed, Syntax::Yaml).unwrap();
        assert_eq!(again, printed, "not idempotent");
        // Through `.rules` and back, every comment is still there.
        let rules = format_file(Path::new("c.yaml"), &yaml, Syntax::Rules).unwrap();
        let back = format_file(Path::new("c.rules"), &rules, Syntax::Yaml).unwrap();
        assert!(back.contains("key") && back.contains("note"), "{back}");
        let again = format_file(Path::new("c.rules"), &rules, Syntax::Rules).unwrap();
        assert_eq!(again, rules, "not idempotent in .rules");
    }
}

/// An argument path in a YAML `when` has the bound a `.rules` expression
/// has (65 parts, 64 `.` in a row): a longer one is an error in the file
/// rather than a file `convert` cannot write (found by the
/// `format_roundtrip` campaign: a key of 82 parts converted to a `.rules`
/// expression its parser refuses, "internal error").
#[test]
fn argument_paths_have_the_expression_bound_in_both_syntaxes() {
    let rules = |parts: usize| {
        let path = vec!["a"; parts].join(".");
        format!(
            "version: 1\nserver: {{ name: s, version: \"1\" }}\ntools:\n  - name: t\n    inputSchema: {{ type: object }}\n    variants:\n      - {{ name: v, when: {{ \"{path}\": 1 }} }}\n"
        )
    };
    let at_limit = rules(65);
    assert!(!mcp_resolve::load_str("c.yaml", &at_limit).has_errors());
    let dsl = format_file(Path::new("c.yaml"), &at_limit, Syntax::Rules).unwrap();
    let back = format_file(Path::new("c.rules"), &dsl, Syntax::Yaml).unwrap();
    assert!(
        !mcp_resolve::load_str("back.yaml", &back).has_errors(),
        "{back}"
    );

    let over = rules(66);
    let project = mcp_resolve::load_str("c.yaml", &over);
    let codes: Vec<String> = project
        .diagnostics
        .iter()
        .map(|d| d.code.to_string())
        .collect();
    assert_eq!(codes, ["invalid-value"], "{:?}", project.diagnostics);
    assert!(
        project.diagnostics[0]
            .message
            .contains("66 `.`-separated parts")
    );
    assert!(matches!(
        format_file(Path::new("c.yaml"), &over, Syntax::Rules),
        Err(mcp_resolve::format::FormatError::Invalid(_))
    ));
}
