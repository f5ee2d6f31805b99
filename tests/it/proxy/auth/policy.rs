//! Policies under `--auth-issuer`: who a verified bearer token speaks for
//! and the scopes it grants decide calls, in the YAML form and in Cedar,
//! and audit lines name them.

use super::*;

/// A listening proxy under `--auth-issuer` that decides by the policy
/// `text` (written as `file` in the scratch directory `name`) and writes
/// an audit log, whose path comes with it.
fn policed(issuer: &str, name: &str, file: &str, text: &str) -> (common::Listening, PathBuf) {
    let root = common::scratch("proxy", name);
    let policy = root.join(file);
    std::fs::write(&policy, text).unwrap();
    let audit = root.join("audit.jsonl");
    let proxy = common::Listening::start(
        &[
            "rules/file-server.yaml",
            "--auth-issuer",
            issuer,
            "--audience",
            AUDIENCE,
            "--policy",
            policy.to_str().unwrap(),
            "--audit",
            audit.to_str().unwrap(),
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    (proxy, audit)
}

/// Opens a session on a listening proxy with `token`: its id.
fn open_session(proxy: &common::Listening, token: &str) -> String {
    let (status, headers, body) = post(proxy, Some(token), None, &initialize_body(1));
    assert_eq!(status, 200, "{body}");
    let session = header(&headers, "mcp-session-id").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(proxy, Some(token), Some(&session), initialized).0, 202);
    session
}

/// A `read` call in `session` with `token`: the JSON-RPC answer.
fn read_with(proxy: &common::Listening, token: &str, session: &str, id: u64) -> Value {
    let (status, _, body) = post(proxy, Some(token), Some(session), &call(id, "read"));
    assert_eq!(status, 200, "{body}");
    let json = body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&body);
    serde_json::from_str(json).unwrap()
}

#[test]
fn the_policy_decides_by_the_tokens_principal_and_audits_it() {
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let issuer = issuer(&key);
    let (proxy, audit) = policed(
        &issuer,
        "auth-policy",
        "policy.yaml",
        "version: 1\ndefault: allow\nrules:\n  - name: no-untrusted-clients\n    when: { client: untrusted }\n    decision: deny\n",
    );
    let token = |client: &str| {
        jwt(
            &key,
            &json!({"iss": issuer, "aud": AUDIENCE, "sub": "alice", "client_id": client,
                    "exp": now() + 300, "scope": "files:read"}),
        )
    };
    let (trusted, untrusted) = (token("host"), token("untrusted"));
    let session = open_session(&proxy, &trusted);
    let answer = |token: &str, id: u64| read_with(&proxy, token, &session, id);
    assert!(answer(&trusted, 2).get("result").is_some());
    let refused = answer(&untrusted, 3);
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no-untrusted-clients"),
        "{refused}"
    );
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
    let lines = audit_lines(&audit);
    let by_outcome = |decision: &str| {
        lines
            .iter()
            .find(|r| r["decision"] == decision)
            .unwrap_or_else(|| panic!("no {decision} line: {lines:?}"))
    };
    assert_eq!(
        by_outcome("allow")["principal"],
        json!({"sub": "alice", "client_id": "host"})
    );
    assert_eq!(by_outcome("deny")["principal"]["client_id"], "untrusted");
}

/// Cedar: the principal is the token's subject, `context.session` has the
/// scopes it grants; both decide, over HTTP with verified tokens.
#[test]
fn a_cedar_policy_decides_by_the_tokens_subject_and_granted_scopes() {
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let issuer = issuer(&key);
    let (proxy, audit) = policed(
        &issuer,
        "auth-cedar",
        "policy.cedar",
        r#"@id("reads-within-granted-scopes")
permit(principal, action, resource)
when { context.resolution.readOnlyHint
       && context.session.tokenScopes.containsAll(context.resolution.requiredScopes) };

@id("only-alice")
forbid(principal, action, resource)
unless { principal == FileServer::User::"alice" };
"#,
    );
    let token = |sub: &str| {
        jwt(
            &key,
            &json!({"iss": issuer, "aud": AUDIENCE, "sub": sub, "client_id": "host",
                    "exp": now() + 300, "scope": "files:read"}),
        )
    };
    let (alice, bob) = (token("alice"), token("bob"));
    let session = open_session(&proxy, &alice);
    let answer = |token: &str, id: u64| read_with(&proxy, token, &session, id);
    let allowed = answer(&alice, 2);
    assert!(allowed.get("result").is_some(), "{allowed}");
    let refused = answer(&bob, 3);
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    assert_eq!(refused["error"]["data"]["policies"], json!(["only-alice"]));
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
    let lines = audit_lines(&audit);
    let decided: Vec<(&str, &str, Value)> = lines
        .iter()
        .map(|l| {
            (
                l["principal"]["sub"].as_str().unwrap_or("-"),
                l["decision"].as_str().unwrap_or("-"),
                l["policies"].clone(),
            )
        })
        .collect();
    assert_eq!(
        decided,
        vec![
            ("alice", "allow", json!(["reads-within-granted-scopes"])),
            ("bob", "deny", json!(["only-alice"])),
        ],
        "{lines:#?}"
    );
}
