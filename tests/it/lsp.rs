//! `mcp-resolve lsp` driven by a scripted client over stdio: the handshake,
//! the diagnostics of an opened file (the same codes and places `check`
//! reports), an edit that clears them, one that breaks the bound, a request
//! the server does not serve, and a clean exit.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common;

/// A language server under test, its messages read on a thread.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::Receiver<Value>,
}

impl Client {
    fn start() -> Client {
        let mut child = common::bin()
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("a Content-Length header")];
                reader.read_exact(&mut body).unwrap();
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            messages,
        }
    }

    /// `shutdown`, then `exit`: the server must end with status 0.
    fn finish(mut self) {
        self.send(json!({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}));
        while self.next()["id"] != "bye" {}
        self.send(json!({"jsonrpc": "2.0", "method": "exit"}));
        drop(self.stdin.take());
        assert_eq!(
            common::wait_for(&mut self.child, Duration::from_secs(20)),
            0
        );
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        let stdin = self.stdin.as_mut().unwrap();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> Value {
        self.messages
            .recv_timeout(Duration::from_secs(60))
            .expect("a message from the server within 60 s")
    }

    /// The next diagnostics published for `uri` at `version` once the
    /// analysis ran (the second pass of a check).
    fn diagnostics(&self, uri: &str, version: i64) -> Vec<Value> {
        let mut passes = 0;
        loop {
            let message = self.next();
            if message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
                && message["params"]["version"] == version
            {
                passes += 1;
                if passes == 2 {
                    return message["params"]["diagnostics"].as_array().unwrap().clone();
                }
            }
        }
    }
}

fn rules(path: &str) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_language_server_reports_what_check_reports_as_the_file_changes() {
    let dir = common::scratch("lsp", "protocol");
    let path = dir.join("worst-case.yaml");
    let text = rules("tests/fixtures/invalid/worst-case-extra-hints.yaml");
    std::fs::write(&path, &text).unwrap();
    let uri = format!("file://{}", path.display());

    let mut client = Client::start();
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": {}}}));
    let answer = client.next();
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["capabilities"]["textDocumentSync"], 1);
    assert_eq!(answer["result"]["serverInfo"]["name"], "mcp-resolve");
    client.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));

    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}));
    let found = client.diagnostics(&uri, 1);
    // What `check --format json` says of the same file.
    let output = common::bin()
        .args(["check", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    let checked: Value = serde_json::from_slice(&output.stdout).unwrap();
    let checked = checked["diagnostics"].as_array().unwrap().clone();
    assert_eq!(found.len(), checked.len(), "{found:#?}\n{checked:#?}");
    for (lsp, check) in found.iter().zip(&checked) {
        assert_eq!(lsp["code"], check["code"], "{lsp}\n{check}");
        assert_eq!(lsp["source"], "mcp-resolve");
        assert!(
            lsp["message"]
                .as_str()
                .unwrap()
                .starts_with(check["message"].as_str().unwrap()),
            "{lsp}\n{check}"
        );
        // 1-based lines and columns in check, 0-based in the protocol
        // (the file is ASCII: characters and UTF-16 units agree).
        let at = |key: &str| check[key].as_u64().unwrap() - 1;
        assert_eq!(
            lsp["range"],
            json!({"start": {"line": at("line"), "character": at("column")},
                   "end": {"line": at("endLine"), "character": at("endColumn")}}),
            "{lsp}\n{check}"
        );
    }
    let worst: Vec<&Value> = found.iter().filter(|d| d["code"] == "worst-case").collect();
    assert!(!worst.is_empty(), "{found:#?}");
    assert_eq!(worst[0]["severity"], 1);
    assert!(
        worst[0]["message"].as_str().unwrap().contains("help:"),
        "{}",
        worst[0]
    );
    assert!(
        worst.iter().any(|d| d["relatedInformation"]
            .as_array()
            .is_some_and(|r| r.iter().any(|i| i["message"] == "static value"))),
        "{worst:#?}"
    );

    // The static annotations made conservative: the bound holds.
    let fixed = text.replace(
        "annotations: { openWorldHint: false, privateHint: false }",
        "annotations: { openWorldHint: true, privateHint: true, agencyHint: true }",
    );
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"text": fixed}]}}));
    let found = client.diagnostics(&uri, 2);
    assert!(
        found.iter().all(|d| d["code"] != "worst-case"),
        "{found:#?}"
    );
    // Broken again, as typed: two edits at once are checked once, as the
    // last says.
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": 3},
                   "contentChanges": [{"text": "version: 1\nserver: {"}]}}));
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": 4},
                   "contentChanges": [{"text": text}]}}));
    let found = client.diagnostics(&uri, 4);
    assert!(
        found.iter().any(|d| d["code"] == "worst-case"),
        "{found:#?}"
    );

    // Hover on the variant's name: its resolved annotations.
    let line = text
        .lines()
        .position(|l| l.contains("- name: agentic"))
        .unwrap();
    client.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": 16}}}),
    );
    loop {
        let message = client.next();
        if message["id"] == 2 {
            let value = message["result"]["contents"]["value"]
                .as_str()
                .unwrap_or_default();
            assert!(value.contains("**variant `agentic`**"), "{message}");
            assert!(value.contains("| `agencyHint` | `true` |"), "{message}");
            break;
        }
    }
    // Completion after `action: ` in a `when`: the argument's enum.
    let line = text
        .lines()
        .position(|l| l.contains("when: { action: append }"))
        .unwrap();
    let character = text.lines().nth(line).unwrap().find("append").unwrap();
    client.send(json!({"jsonrpc": "2.0", "id": 5, "method": "textDocument/completion",
        "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}}));
    loop {
        let message = client.next();
        if message["id"] == 5 {
            let labels: Vec<&str> = message["result"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["label"].as_str().unwrap())
                .collect();
            assert_eq!(labels, ["read", "append", "delete"], "{message}");
            break;
        }
    }
    // What it does not serve yet, it says so.
    client.send(
        json!({"jsonrpc": "2.0", "id": 6, "method": "textDocument/rename",
        "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0},
                   "newName": "x"}}),
    );
    loop {
        let message = client.next();
        if message["id"] == 6 {
            assert_eq!(message["error"]["code"], -32601, "{message}");
            break;
        }
    }
    // Closed: its diagnostics cleared.
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didClose",
        "params": {"textDocument": {"uri": uri}}}));
    loop {
        let message = client.next();
        if message["method"] == "textDocument/publishDiagnostics"
            && message["params"]["uri"] == uri
            && message["params"]["diagnostics"] == json!([])
        {
            break;
        }
    }
    client.finish();
}

/// The text `text` with `edit` (an LSP `TextEdit`, ASCII text) applied.
fn apply(text: &str, edit: &Value) -> String {
    let offset = |position: &Value| {
        let line = position["line"].as_u64().unwrap() as usize;
        let character = position["character"].as_u64().unwrap() as usize;
        text.split_inclusive('\n')
            .take(line)
            .map(str::len)
            .sum::<usize>()
            + character
    };
    let (start, end) = (
        offset(&edit["range"]["start"]),
        offset(&edit["range"]["end"]),
    );
    format!(
        "{}{}{}",
        &text[..start],
        edit["newText"].as_str().unwrap(),
        &text[end..]
    )
}

#[test]
fn a_worst_case_error_is_fixed_by_its_code_action() {
    let text = rules("tests/fixtures/invalid/worst-case-extra-hints.yaml");
    let uri = "file:///rules/worst-case.yaml";
    let mut client = Client::start();
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": {}}}));
    let answer = client.next();
    assert_eq!(
        answer["result"]["capabilities"]["codeActionProvider"], true,
        "{answer}"
    );
    client.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}));
    let found = client.diagnostics(uri, 1);
    let open_world = found
        .iter()
        .find(|d| {
            d["message"]
                .as_str()
                .unwrap()
                .contains("`openWorldHint: true`")
        })
        .unwrap_or_else(|| panic!("{found:#?}"));
    client.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction",
        "params": {"textDocument": {"uri": uri}, "range": open_world["range"],
                   "context": {"diagnostics": [open_world]}}}),
    );
    let actions = loop {
        let message = client.next();
        if message["id"] == 2 {
            break message["result"].as_array().unwrap().clone();
        }
    };
    let action = actions
        .iter()
        .find(|a| a["title"].as_str().unwrap().contains("openWorldHint"))
        .unwrap_or_else(|| panic!("{actions:#?}"));
    assert_eq!(action["kind"], "quickfix");
    assert_eq!(action["isPreferred"], true);
    let edits = action["edit"]["changes"][uri].as_array().unwrap();
    assert_eq!(edits.len(), 1, "{action:#}");
    assert_eq!(edits[0]["newText"], "openWorldHint: true");
    let fixed = apply(&text, &edits[0]);
    assert!(
        fixed.contains("annotations: { openWorldHint: true, privateHint: false }"),
        "{fixed}"
    );
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"text": fixed}]}}));
    let found = client.diagnostics(uri, 2);
    assert!(
        !found.iter().any(|d| d["message"]
            .as_str()
            .unwrap()
            .contains("`openWorldHint: true`")),
        "{found:#?}"
    );
    // The other findings of the file stay, with fixes of their own.
    assert!(
        found.iter().any(|d| d["code"] == "worst-case"),
        "{found:#?}"
    );
    // A YAML file that is not a rules file (a policy) is left alone.
    let policy = "file:///rules/ask-destructive.yaml";
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": policy, "languageId": "yaml", "version": 1,
                                    "text": rules("docs/policies/ask-destructive.yaml")}}}));
    loop {
        let message = client.next();
        if message["params"]["uri"] == policy {
            assert_eq!(message["params"]["diagnostics"], json!([]), "{message}");
            break;
        }
    }
    // A range with nothing in it: no action.
    client.send(json!({"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction",
        "params": {"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                   "context": {"diagnostics": []}}}));
    loop {
        let message = client.next();
        if message["id"] == 3 {
            assert_eq!(message["result"], json!([]), "{message}");
            break;
        }
    }
    client.finish();
}

/// Neovim's own LSP client, headless: an author opens a rules file, types
/// an edit that breaks the bound, reads the diagnostic, applies the code
/// action and sees the diagnostic cleared
/// (`tests/fixtures/lsp/nvim_client.lua`).
#[test]
fn in_neovim_a_worst_case_error_is_typed_seen_and_fixed() {
    let Some(nvim) = common::component("MCP_RESOLVE_NVIM", "the Neovim LSP client test") else {
        return;
    };
    let dir = common::scratch("lsp", "neovim");
    let file = dir.join("file-server.yaml");
    std::fs::write(&file, rules("rules/file-server.yaml")).unwrap();
    let out = dir.join("seen.txt");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/nvim_client.lua");
    let mut child = std::process::Command::new(nvim)
        .args(["--headless", "--clean", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("MCP_RESOLVE_BIN", env!("CARGO_BIN_EXE_mcp-resolve"))
        .env("RULES_FILE", &file)
        .env("NVIM_OUT", &out)
        .env("HOME", &dir)
        .env("XDG_STATE_HOME", &dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let status = common::wait_for(&mut child, Duration::from_secs(180));
    let seen = std::fs::read_to_string(&out).unwrap_or_default();
    assert_eq!(status, 0, "{seen}");
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(lines.last(), Some(&"ok"), "{seen}");
    assert!(
        lines.iter().any(|l| l.starts_with(
            "diagnostic: variant `append` of tool `manage_files` resolves to `openWorldHint: true`"
        )),
        "{seen}"
    );
    assert!(
        lines.contains(
            &"action: raise the static `openWorldHint` to the worst case: `openWorldHint: true`"
        ),
        "{seen}"
    );
    assert!(lines.contains(&"static: openWorldHint: true"), "{seen}");
    assert!(lines.contains(&"cleared"), "{seen}");
    // The file on disk is the author's to save: untouched.
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        rules("rules/file-server.yaml")
    );
}

/// Go to definition from `inputSchemaFile` to the schema file, and
/// formatting as `mcp-resolve fmt` prints the file.
#[test]
fn definitions_and_formatting_through_the_protocol() {
    let path = std::path::absolute("rules/filesystem.yaml").unwrap();
    let uri = format!("file://{}", path.display());
    let text = rules("rules/filesystem.yaml");
    let messy = text.replacen("version: 1", "version:    1", 1);
    let mut client = Client::start();
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": {}}}));
    let answer = client.next();
    let capabilities = &answer["result"]["capabilities"];
    assert_eq!(capabilities["definitionProvider"], true, "{answer}");
    assert_eq!(capabilities["documentFormattingProvider"], true, "{answer}");
    client.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": messy}}}));
    let line = messy
        .lines()
        .position(|l| l.contains("inputSchemaFile"))
        .unwrap();
    let character = messy.lines().nth(line).unwrap().find("schemas/").unwrap() + 2;
    client.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/definition",
        "params": {"textDocument": {"uri": uri},
                   "position": {"line": line, "character": character}}}),
    );
    client.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "textDocument/formatting",
        "params": {"textDocument": {"uri": uri},
                   "options": {"tabSize": 2, "insertSpaces": true}}}),
    );
    let (mut definition, mut formatting) = (None, None);
    while definition.is_none() || formatting.is_none() {
        let message = client.next();
        match message["id"].as_i64() {
            Some(2) => definition = Some(message),
            Some(3) => formatting = Some(message),
            _ => {}
        }
    }
    let definition = definition.unwrap();
    assert!(
        definition["result"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("/rules/schemas/filesystem.json"),
        "{definition}"
    );
    let formatting = formatting.unwrap();
    let edits = formatting["result"].as_array().unwrap();
    assert_eq!(edits.len(), 1, "{formatting}");
    let dir = common::scratch("lsp", "formatting");
    let messy_file = dir.join("filesystem.yaml");
    std::fs::write(&messy_file, &messy).unwrap();
    std::fs::create_dir_all(dir.join("schemas")).unwrap();
    std::fs::copy(
        "rules/schemas/filesystem.json",
        dir.join("schemas/filesystem.json"),
    )
    .unwrap();
    let printed = common::bin().arg("fmt").arg(&messy_file).output().unwrap();
    assert!(printed.status.success(), "{printed:?}");
    assert_eq!(
        edits[0]["newText"].as_str().unwrap(),
        String::from_utf8(printed.stdout).unwrap()
    );
    client.finish();
}

/// A server written over several files: the document is checked with the
/// other files of its directory that declare the same server (a hint
/// declared in one and used in another), and not with a file of another
/// server.
#[test]
fn a_server_over_several_files_is_checked_as_one() {
    let dir = common::scratch("lsp", "several-files");
    let file = |name: &str, server: &str, body: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!("version: 1\nserver: {{ name: {server}, version: \"1\" }}\n{body}"),
        )
        .unwrap();
        path
    };
    file(
        "a.yaml",
        "s",
        "hints:\n  privateHint: { worst: true, default: false }\ntools:\n  - name: a\n    inputSchema: { type: object }\n    annotations: { readOnlyHint: true, privateHint: false }\n",
    );
    file(
        "c.yaml",
        "other",
        "tools:\n  - name: b\n    inputSchema: { type: object }\n    annotations: { readOnlyHint: true }\n",
    );
    let b = file(
        "b.yaml",
        "s",
        "tools:\n  - name: b\n    inputSchema: { type: object }\n    annotations: { readOnlyHint: true, privateHint: true }\n",
    );
    let text = std::fs::read_to_string(&b).unwrap();
    let uri = format!("file://{}", b.display());
    let mut client = Client::start();
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": {}}}));
    client.next();
    client.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}));
    let found = client.diagnostics(&uri, 1);
    assert!(
        found.iter().all(|d| d["severity"] != 1),
        "the hint a.yaml declares is known: {found:#?}"
    );
    // The same tool name as a.yaml's: a duplicate within the server.
    let twice = text.replace("name: b", "name: a");
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"text": twice}]}}));
    let found = client.diagnostics(&uri, 2);
    assert!(
        found.iter().any(|d| d["code"] == "duplicate-tool"),
        "{found:#?}"
    );
    client.finish();
}

/// In a policy, `variant:` completes the variants of the rule's tool, from
/// the rules files at the workspace's root (`rules/`) and the open rules
/// documents' unsaved text; `decision:` the decisions.
#[test]
fn a_policys_variants_come_from_the_rules_nearby() {
    let root = common::scratch("lsp", "policy");
    std::fs::create_dir_all(root.join("rules")).unwrap();
    std::fs::create_dir_all(root.join("policies")).unwrap();
    let rules = root.join("rules/file-server.yaml");
    std::fs::copy("rules/file-server.yaml", &rules).unwrap();
    let policy = root.join("policies/writes.yaml");
    let text = "version: 1\ndefault: ask\nrules:\n  - name: reads\n    when: { tool: manage_files, variant: [] }\n    decision: \n";
    std::fs::write(&policy, text).unwrap();
    let uri = format!("file://{}", policy.display());
    let mut client = Client::start();
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": format!("file://{}", root.display()),
                   "capabilities": {}}}));
    client.next();
    client.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}));
    let mut id = 1;
    let mut complete = |client: &mut Client, line: u32, character: u32| -> Vec<String> {
        id += 1;
        client.send(json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/completion",
            "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}}));
        loop {
            let message = client.next();
            if message["id"] == id {
                let items = message["result"].as_array().cloned().unwrap_or_default();
                return items
                    .iter()
                    .map(|i| i["label"].as_str().unwrap().to_string())
                    .collect();
            }
        }
    };
    let in_list = "    when: { tool: manage_files, variant: [".len() as u32;
    assert_eq!(
        complete(&mut client, 4, in_list),
        ["append", "overwrite", "read"]
    );
    assert_eq!(complete(&mut client, 5, 14), ["allow", "deny", "ask"]);
    // The rules file opened and changed, not saved: its text counts.
    let changed = std::fs::read_to_string(&rules)
        .unwrap()
        .replace("- name: append", "- name: append-only");
    let rules_uri = format!("file://{}", rules.display());
    client.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": rules_uri, "languageId": "yaml", "version": 1, "text": changed}}}));
    client.diagnostics(&rules_uri, 1);
    assert_eq!(
        complete(&mut client, 4, in_list),
        ["append-only", "overwrite", "read"]
    );
    client.finish();
}
