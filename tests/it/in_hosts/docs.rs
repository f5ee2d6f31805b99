//! docs/hosts.md (and the README's Codex example) gives each host the
//! configuration these tests give it:
//! each host's section has a block (its stdio entry, the proxy's command
//! line written as a user would) and an "Over HTTP" entry, and the tests'
//! own builders, given that command line or URL, write the same.

use serde_json::Value;

use super::{
    CODEX_REQUIRED, claude_code_server, codex_approves, codex_server, gemini_server,
    opencode_server, repo,
};

/// The URL docs/hosts.md gives the listening proxy.
const URL: &str = "http://127.0.0.1:8080/mcp";

/// The section of docs/hosts.md under `heading`, up to the next one.
fn section(heading: &str) -> String {
    section_of("docs/hosts.md", heading)
}

/// The section of the repository's `file` under `heading`.
fn section_of(file: &str, heading: &str) -> String {
    let doc = std::fs::read_to_string(repo().join(file)).unwrap();
    let start = doc
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("{file} has no {heading:?}"));
    let rest = &doc[start + heading.len() + 2..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].to_string()
}

/// The first fenced block of `section`, fenced as `lang`.
fn block(section: &str, lang: &str) -> String {
    let fence = format!("```{lang}\n");
    let start = section
        .find(&fence)
        .unwrap_or_else(|| panic!("no {lang} block in {section}"))
        + fence.len();
    let end = section[start..].find("```").unwrap() + start;
    section[start..end].to_string()
}

/// The first inline code after "Over HTTP" in `section` that starts with
/// `starts` (line breaks in it read as spaces).
fn over_http(section: &str, starts: &str) -> String {
    let after = &section[section.find("Over HTTP").expect("an Over HTTP entry")..];
    after
        .split('`')
        .skip(1)
        .step_by(2)
        .find(|code| code.starts_with(starts))
        .unwrap_or_else(|| panic!("no `{starts}…` after Over HTTP in {section}"))
        .replace('\n', " ")
}

/// The proxy's command line of a stdio entry.
fn command_line(entry: &Value) -> Vec<String> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    if entry["command"].is_array() {
        return strings(&entry["command"]);
    }
    let mut line = vec![entry["command"].as_str().unwrap().to_string()];
    line.extend(strings(&entry["args"]));
    line
}

/// The `key = value` pairs of TOML `text` whose values are strings or
/// arrays of strings (written as JSON writes them), by table; comments and
/// blank lines aside.
fn toml_pairs(text: &str) -> Vec<(String, String, Value)> {
    let mut table = String::new();
    let mut out = Vec::new();
    let mut pending: Option<(String, String)> = None;
    for line in text.lines() {
        let line = line.split(" #").next().unwrap().trim();
        if let Some((key, mut value)) = pending.take() {
            value.push(' ');
            value.push_str(line);
            pending = Some((key, value));
        } else if line.is_empty() || line.starts_with('#') {
            continue;
        } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = name.to_string();
            continue;
        } else {
            let (key, value) = line.split_once(" = ").expect("key = value");
            pending = Some((key.to_string(), value.to_string()));
        }
        if let Some((key, value)) = &pending
            && let Ok(parsed) = serde_json::from_str::<Value>(value)
        {
            out.push((table.clone(), key.clone(), parsed));
            pending = None;
        }
    }
    assert!(pending.is_none(), "unfinished value in {text}");
    out
}

#[test]
fn claude_code_as_docs_hosts_md_configures_it() {
    let section = section("## Claude Code");
    let documented: Value = serde_json::from_str(&block(&section, "json")).unwrap();
    let entry = &documented["mcpServers"]["files"];
    let ours = claude_code_server(&command_line(entry), None);
    assert_eq!(
        documented,
        serde_json::json!({"mcpServers": {"files": ours}})
    );
    let http: Value = serde_json::from_str(&over_http(&section, "{")).unwrap();
    assert_eq!(http, claude_code_server(&[], Some(URL)));
}

#[test]
fn codex_as_docs_hosts_md_configures_it() {
    let section = section("## Codex CLI");
    assert_codex_block(&block(&section, "toml"));
    let http = over_http(&section, "url =");
    assert_eq!(toml_pairs(&http), toml_pairs(&codex_server(&[], Some(URL))));
}

#[test]
fn codex_as_the_readme_configures_it() {
    let section = section_of("README.md", "## Use it from your host");
    assert_codex_block(&block(&section, "toml"));
}

/// A Codex configuration block: the proxy's entry, and the tool approved,
/// as the tests write them.
fn assert_codex_block(text: &str) {
    let documented = toml_pairs(text);
    let server: Vec<_> = documented
        .iter()
        .filter(|(table, _, _)| table == "mcp_servers.files")
        .map(|(_, key, value)| (key.clone(), value.clone()))
        .collect();
    let line: Value = serde_json::json!({
        "command": server.iter().find(|(k, _)| k == "command").unwrap().1,
        "args": server.iter().find(|(k, _)| k == "args").unwrap().1,
    });
    let ours = codex_server(&command_line(&line), None) + CODEX_REQUIRED;
    let ours: Vec<_> = toml_pairs(&format!("[mcp_servers.files]\n{ours}"))
        .into_iter()
        .map(|(_, key, value)| (key, value))
        .collect();
    assert_eq!(server, ours);
    // The approval the tests give the tool.
    let approval = toml_pairs(&codex_approves("manage_files"));
    let documented_approval: Vec<_> = documented
        .iter()
        .filter(|(table, _, _)| table.starts_with("mcp_servers.files.tools."))
        .cloned()
        .collect();
    assert_eq!(documented_approval, approval);
}

#[test]
fn gemini_cli_as_docs_hosts_md_configures_it() {
    let section = section("## Gemini CLI");
    let documented: Value = serde_json::from_str(&block(&section, "json")).unwrap();
    let entry = &documented["mcpServers"]["files"];
    let ours = gemini_server(&command_line(entry), None);
    assert_eq!(
        documented,
        serde_json::json!({"mcpServers": {"files": ours}})
    );
    let http: Value = serde_json::from_str(&over_http(&section, "{")).unwrap();
    assert_eq!(http, gemini_server(&[], Some(URL)));
}

#[test]
fn opencode_as_docs_hosts_md_configures_it() {
    let section = section("## opencode");
    let documented: Value = serde_json::from_str(&block(&section, "json")).unwrap();
    let entry = &documented["mcp"]["files"];
    let ours = opencode_server(&command_line(entry), None);
    assert_eq!(documented, serde_json::json!({"mcp": {"files": ours}}));
    let http: Value = serde_json::from_str(&over_http(&section, "{")).unwrap();
    assert_eq!(http, opencode_server(&[], Some(URL)));
}

#[test]
fn the_toml_reader_reads_what_the_codex_section_writes() {
    let pairs =
        toml_pairs("[a]\nk = \"v\" # note\nl = [\"x\",\n  \"y\"]\n\n# c\n[b.c]\nm = \"n\"\n");
    assert_eq!(
        pairs,
        vec![
            ("a".into(), "k".into(), Value::from("v")),
            ("a".into(), "l".into(), serde_json::json!(["x", "y"])),
            ("b.c".into(), "m".into(), Value::from("n")),
        ]
    );
}
