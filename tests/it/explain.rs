//! `mcp-resolve explain`: the reviewer's view of a server, as text,
//! Markdown and HTML; the HTML opened in a real headless Chromium (through
//! ChromeDriver, the W3C WebDriver protocol) and its rendered tables read
//! back.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

fn bundled() -> Vec<PathBuf> {
    common::bundled_rules()
}

fn explain(path: &Path, args: &[&str]) -> String {
    let out = common::bin()
        .arg("explain")
        .arg(path)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every bundled server in the three formats, committed under generated/
/// (Markdown; HTML for one) and kept in sync; every tool and variant of it is
/// in each, in match order; the HTML needs nothing from the network.
#[test]
fn bundled_servers_in_every_format_are_up_to_date() {
    for path in bundled() {
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
        let server = project.single_server().unwrap();
        let text = explain(&path, &[]);
        let markdown = explain(&path, &["--format", "markdown"]);
        let html = explain(&path, &["--format", "html"]);
        for tool in &server.tools {
            for (format, out) in [("text", &text), ("markdown", &markdown), ("html", &html)] {
                assert!(
                    out.contains(&tool.name),
                    "{stem} {format}: no {}",
                    tool.name
                );
                let mut at = 0;
                for v in &tool.variants {
                    let found = out[at..].find(&v.name);
                    let found = found.unwrap_or_else(|| {
                        panic!("{stem} {format}: variant {} not after {at}", v.name)
                    });
                    at += found;
                }
            }
        }
        // Every Markdown table row has as many cells as its header.
        let mut columns = 0;
        for line in markdown.lines() {
            if !line.starts_with('|') {
                columns = 0;
                continue;
            }
            let cells = line.replace("\\|", "").matches('|').count();
            if columns == 0 {
                columns = cells;
            }
            assert_eq!(cells, columns, "{stem}: {line}");
        }
        // Self-contained: no script, no external asset, no network address.
        for needle in [
            "<script", "<link", "src=", "http://", "https://", "@import", "url(",
        ] {
            assert!(!html.contains(needle), "{stem}: the page has `{needle}`");
        }
        common::expect_file(
            &Path::new("generated").join(format!("{stem}.explain.md")),
            &markdown,
        );
        // One page committed as the example (each page carries its own
        // style, so the others would repeat it).
        if stem == "github-api" {
            common::expect_file(Path::new("generated/github-api.explain.html"), &html);
        }
    }
}

/// What the analysis found is in the table: an unreachable variant names
/// the variant that takes its calls, with an example call; a tool with
/// calls that match no variant shows one; a tool without variants says
/// every call gets its static set; `n/a` where a hint means nothing; and a
/// tool name with Markdown's and HTML's own characters stays inert.
#[test]
fn analysis_findings_and_hostile_names() {
    let path = Path::new("tests/fixtures/explain/shadowed.yaml");
    let text = explain(path, &[]);
    assert!(
        text.contains("reachable: no: its calls go to `any-a`, e.g. `{\"mode\":\"a\""),
        "{text}"
    );
    assert!(
        text.contains("calls that match no variant get here, e.g. `{\"mode\":\"c\"}`"),
        "{text}"
    );
    assert!(
        text.contains("no variants: every call gets the static annotations"),
        "{text}"
    );
    assert!(text.contains("destructiveHint n/a"), "{text}");
    assert!(text.contains("2 tools (1 with variants), 3 variants (1 unreachable); 1 tool with calls that match no variant"), "{text}");

    let md = explain(path, &["--format", "markdown"]);
    assert!(md.contains("## ``odd\\|name`x``"), "{md}");
    let html = explain(path, &["--format", "html"]);
    assert!(html.contains("<code>odd|name`x</code>"), "{html}");

    // One tool; an unknown one is a usage error with a suggestion.
    let one = explain(path, &["--tool", "plain"]);
    assert!(
        one.contains("tool plain") && !one.contains("odd|name"),
        "{one}"
    );
    let out = common::bin()
        .args(["explain", path.to_str().unwrap(), "--tool", "plian"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no tool `plian`") && err.contains("did you mean `plain`"),
        "{err}"
    );

    // Rules with errors: the diagnostics, exit 1, no page.
    let dir = common::scratch("explain", "errors");
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "version: 1\nserver: { name: x, version: 1.0.0 }\ntools: [ { name: t } ]\n",
    )
    .unwrap();
    let out = common::bin()
        .args(["explain", bad.to_str().unwrap(), "--format", "html"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("error["));
}

/// A W3C WebDriver session with ChromeDriver driving headless Chromium.
struct Browser {
    driver: Child,
    base: String,
    session: String,
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl Browser {
    /// ChromeDriver and its browser, their temporary files in `tmp` (the
    /// test's scratch directory: a browser killed at the end would leave
    /// its profile directories in the system's).
    fn start(chromedriver: &Path, tmp: &Path, width: u32, height: u32) -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .env("TMPDIR", tmp)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", chromedriver.display()));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut browser = Browser {
            driver,
            base: format!("http://127.0.0.1:{port}"),
            session: String::new(),
            runtime,
            client: reqwest::Client::new(),
        };
        // ChromeDriver answers `/status` once it listens.
        let start = std::time::Instant::now();
        while browser.call("GET", "/status", None).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let chromium =
            std::env::var("MCP_RESOLVE_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let session = browser
            .call(
                "POST",
                "/session",
                Some(json!({"capabilities": {"alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium,
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                 "--disable-dev-shm-usage", "--hide-scrollbars",
                                 format!("--window-size={width},{height}")]
                    }
                }}})),
            )
            .unwrap();
        browser.session = session["sessionId"].as_str().unwrap().to_string();
        browser
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let url = format!("{}{path}", self.base);
        self.runtime.block_on(async {
            let request = match method {
                "GET" => self.client.get(&url),
                "DELETE" => self.client.delete(&url),
                _ => self
                    .client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.unwrap_or(json!({})).to_string()),
            };
            let response = request
                .timeout(Duration::from_secs(60))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status();
            let text = response.text().await.map_err(|e| e.to_string())?;
            let value: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
            if !status.is_success() {
                return Err(format!("{status}: {text}"));
            }
            Ok(value["value"].clone())
        })
    }

    fn session(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    fn open(&self, file: &Path) {
        let url = format!("file://{}", file.canonicalize().unwrap().display());
        self.session("POST", "/url", Some(json!({ "url": url })));
    }

    fn eval(&self, script: &str) -> Value {
        self.session(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    fn screenshot(&self) -> Vec<u8> {
        use base64::Engine as _;
        let data = self.session("GET", "/screenshot", None);
        base64::engine::general_purpose::STANDARD
            .decode(data.as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.call("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// The page in a real browser: the rendered text of every decision table
/// (read back with `innerText`, so what CSS shows) has each variant with
/// its condition in words and a yes/no per hint; the summary counts; no
/// resource is fetched; on a phone-sized window the page does not scroll
/// sideways (tables scroll inside their box). A screenshot is kept under
/// the test's scratch directory (and written to docs/ when blessing).
#[test]
fn the_html_page_renders_its_tables_in_a_real_browser() {
    let Some(chromedriver) = common::component(
        "MCP_RESOLVE_CHROMEDRIVER",
        "the explain page in a real browser",
    ) else {
        return;
    };
    let dir = common::scratch("explain", "browser");
    let page = dir.join("github-api.html");
    std::fs::write(
        &page,
        explain(Path::new("rules/github-api.yaml"), &["--format", "html"]),
    )
    .unwrap();

    let phone = Browser::start(&chromedriver, &dir, 390, 844);
    // The browser's profile is in the scratch directory, not the system's
    // temporary directory (where a killed browser would leave it).
    let profiles = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("org.chromium.")
        })
        .count();
    assert!(profiles > 0, "no browser profile in {}", dir.display());
    phone.open(&page);
    let tables = phone.eval(
        "return Array.from(document.querySelectorAll('table')).map(t => \
           Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.innerText.trim())))",
    );
    let tables = tables.as_array().unwrap();
    assert_eq!(tables.len(), 2, "{tables:?}");
    // The summary: one row per hint after the header.
    let summary = tables[0].as_array().unwrap();
    assert_eq!(
        summary[0],
        json!(["hint", "true in reachable variants", "true in static sets"])
    );
    assert_eq!(summary[1], json!(["readOnlyHint", "1 of 5", "0 of 1"]));
    assert_eq!(summary[4], json!(["openWorldHint", "5 of 5", "1 of 1"]));
    // The decision table: header, five variants in order, the static row.
    let decision = tables[1].as_array().unwrap();
    assert_eq!(
        decision[0],
        json!([
            "#",
            "variant",
            "when",
            "readOnly",
            "destructive",
            "idempotent",
            "openWorld",
            "agency",
            "scopes",
            "reachable"
        ])
    );
    assert_eq!(
        decision[1],
        json!([
            "1",
            "read",
            "method is \"GET\"",
            "yes",
            "n/a",
            "n/a",
            "yes",
            "no",
            "repo",
            "yes"
        ])
    );
    assert_eq!(
        decision[4],
        json!([
            "4",
            "delete-repository",
            "method is \"DELETE\" and path matches the pattern ^/repos/[^/]+/[^/]+$",
            "no",
            "yes",
            "yes",
            "yes",
            "no",
            "delete_repo",
            "yes"
        ])
    );
    let last = decision.last().unwrap().as_array().unwrap();
    assert_eq!(last[1], "static");
    assert_eq!(
        last[2],
        "calls that match no variant, e.g. {\"method\":\"PATCH\",\"path\":\"/\"}"
    );
    assert_eq!(decision.len(), 7);

    // Nothing fetched; nothing wider than the phone's screen.
    assert_eq!(
        phone.eval("return performance.getEntriesByType('resource').length"),
        json!(0)
    );
    let widths = phone.eval("return [document.documentElement.scrollWidth, window.innerWidth]");
    let (page_width, screen) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
    assert!(
        page_width <= screen,
        "the page scrolls sideways on a phone: {page_width} > {screen}"
    );
    let shot = phone.screenshot();
    assert!(shot.starts_with(b"\x89PNG"), "not a PNG");
    std::fs::write(dir.join("phone.png"), &shot).unwrap();
    drop(phone);

    let desktop = Browser::start(&chromedriver, &dir, 1100, 1300);
    desktop.open(&page);
    let shot = desktop.screenshot();
    std::fs::write(dir.join("desktop.png"), &shot).unwrap();
    if common::bless() {
        std::fs::write("docs/explain.png", &shot).unwrap();
    }
}
