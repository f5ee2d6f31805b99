//! SEP-3140 through the proxy (`--sign-key`): a host on the TypeScript SDK
//! v1 in front of a server that knows nothing of it checks the proxy's
//! signed declarations with `jose` and `canonicalize`
//! (`tests/fixtures/proxy/sep3140_host.mjs`), and a listening proxy serves
//! its Protected Resource Metadata and signing keys.

use super::*;

const SERVER_URI: &str = "https://notes.example/mcp";

/// A fresh signing key in `dir`: `key.pem` and `key.jwk`.
fn keygen(dir: &Path) -> (PathBuf, PathBuf) {
    let out = common::bin()
        .args(["keygen", "-o"])
        .arg(dir.join("key"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (dir.join("key.pem"), dir.join("key.jwk"))
}

#[test]
fn a_host_gets_signed_labelled_declarations_for_a_server_that_knows_nothing_of_them() {
    let (Some(host), Some(server)) = (
        ts_script("sep3140_host.mjs"),
        ts_script("sep3140_server.mjs"),
    ) else {
        return;
    };
    let dir = common::scratch("proxy", "sep3140-host");
    let (pem, jwk) = keygen(&dir);
    for declare in ["0", "1"] {
        let output = std::process::Command::new("node")
            .arg(&host)
            .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
            .arg("tests/fixtures/proxy/sep3140.yaml")
            .arg(&pem)
            .arg(&jwk)
            .arg(SERVER_URI)
            .arg("node")
            .arg(&server)
            .env("DECLARE_EXTENSION", declare)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("21 checks pass"),
            "the SEP-3140 host (extension declared: {declare}) found:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn a_listening_proxy_serves_its_resource_metadata_and_signing_keys() {
    let dir = common::scratch("proxy", "sep3140-listen");
    let (pem, jwk) = keygen(&dir);
    let proxy = common::Listening::start(
        &[
            "tests/fixtures/proxy/sep3140.yaml",
            "--sign-key",
            pem.to_str().unwrap(),
            "--server-uri",
            SERVER_URI,
            "--publisher",
            "https://publisher.example/mcp-publisher.json",
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let (status, headers, body) = http::http_at(&proxy.addr, "GET", path, &[], "");
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(
            headers
                .iter()
                .find(|(n, _)| n == "content-type")
                .map(|(_, v)| v.as_str()),
            Some("application/json")
        );
        let metadata: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            metadata,
            json!({
                "resource": SERVER_URI,
                "mcp_signing_jwks_uri": "https://notes.example/.well-known/mcp-signing-jwks.json",
                "mcp_publisher": "https://publisher.example/mcp-publisher.json",
            })
        );
    }
    let (status, _, body) = http::http_at(
        &proxy.addr,
        "GET",
        "/.well-known/mcp-signing-jwks.json",
        &[],
        "",
    );
    assert_eq!(status, 200, "{body}");
    let jwks: Value = serde_json::from_str(&body).unwrap();
    // The key as `keygen` published it, named as the manifests name it.
    let mut published: Value =
        serde_json::from_str(&std::fs::read_to_string(&jwk).unwrap()).unwrap();
    published["alg"] = json!("EdDSA");
    assert_eq!(jwks, json!({"keys": [published]}));
    // The same DNS-rebinding guard as `/mcp`.
    let (status, _, _) = http::http_at(
        &proxy.addr,
        "GET",
        "/.well-known/mcp-signing-jwks.json",
        &[("Host", "evil.example")],
        "",
    );
    assert_eq!(status, 403);
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
}

#[test]
fn signing_options_are_checked_before_the_server_starts() {
    let dir = common::scratch("proxy", "sep3140-options");
    let (pem, _) = keygen(&dir);
    let marker = dir.join("started");
    let server = ["sh", "-c", &format!("touch {}", marker.display())];
    let cases: [(&[&str], &str); 4] = [
        (&["--sign-key", pem.to_str().unwrap()], "--server-uri"),
        (
            &[
                "--sign-key",
                pem.to_str().unwrap(),
                "--server-uri",
                "ftp://notes.example",
            ],
            "https://HOST",
        ),
        (
            &[
                "--sign-key",
                pem.to_str().unwrap(),
                "--server-uri",
                "https://notes.example/mcp#x",
            ],
            "no fragment",
        ),
        (
            &["--sign-key", "missing.pem", "--server-uri", SERVER_URI],
            "missing.pem",
        ),
    ];
    for (args, expected) in cases {
        refused_before_start(args, expected, &server, &marker);
    }
}

/// `proxy` with `args` exits 2 saying `expected`, and never starts
/// `server` (which would make `marker`).
fn refused_before_start(args: &[&str], expected: &str, server: &[&str], marker: &Path) {
    let out = common::bin()
        .arg("proxy")
        .arg("tests/fixtures/proxy/sep3140.yaml")
        .args(args)
        .arg("--")
        .args(server)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(!marker.exists(), "{args:?} started the server");
}

#[test]
fn a_host_behind_trust_sees_only_what_the_servers_signed_manifest_covers() {
    let (Some(host), Some(server)) = (
        ts_script("sep3140_trusting_host.mjs"),
        ts_script("sep3140_signed_server.mjs"),
    ) else {
        return;
    };
    let dir = common::scratch("proxy", "sep3140-trust");
    let (pem, jwk) = keygen(&dir);
    let run = |mode: &str, trust: Option<&Value>| {
        let mut command = std::process::Command::new("node");
        if let Some(trust) = trust {
            command.env("TRUST_ARGS", trust.to_string());
        }
        command
            .arg(&host)
            .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
            .arg("tests/fixtures/proxy/sep3140.yaml")
            .arg(&jwk)
            .arg(SERVER_URI)
            .arg("node")
            .arg(&server)
            .arg(&pem)
            .arg(&jwk)
            .arg(SERVER_URI)
            .env("SEP3140_MODE", mode)
            .output()
            .unwrap()
    };
    let passes = |output: std::process::Output, mode: &str, checks: usize| {
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains(&format!("{checks} checks pass")),
            "the host behind --trust ({mode}) found:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    for (mode, checks) in [("honest", 6), ("tamper", 3), ("expired", 2)] {
        passes(run(mode, None), mode, checks);
    }
    // Trust on first use, the keys fetched by URL: the key is remembered.
    let jwks = format!(
        r#"{{"keys": [{}]}}"#,
        std::fs::read_to_string(&jwk).unwrap()
    );
    let url = common::serve_json(jwks, 1, "/.well-known/jwks.json");
    let store = dir.join("trusted.json");
    let trust = json!([
        "--trust",
        format!("tofu:{}", store.display()),
        "--trust-jwks",
        url,
        "--allow-loopback-jwks",
        "--trust-audience",
        SERVER_URI
    ]);
    passes(run("honest", Some(&trust)), "tofu", 6);
    let kid: Value = serde_json::from_str(&std::fs::read_to_string(&jwk).unwrap()).unwrap();
    let remembered: Value =
        serde_json::from_str(&std::fs::read_to_string(&store).unwrap()).unwrap();
    assert_eq!(remembered, json!({SERVER_URI: kid["kid"]}));
}

#[test]
fn trust_options_are_checked_before_the_server_starts() {
    let dir = common::scratch("proxy", "sep3140-trust-options");
    let (_, jwk) = keygen(&dir);
    let jwk = jwk.to_str().unwrap().to_owned();
    let marker = dir.join("started");
    let touch = format!("touch {}", marker.display());
    let store = dir.join("bad-store.json");
    std::fs::write(&store, "[1]").unwrap();
    let tofu = format!("tofu:{}", store.display());
    let pinned = format!("pinned:{jwk}");
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["--trust", &pinned], "--trust-audience"),
        (
            vec!["--trust", "sometimes", "--trust-audience", SERVER_URI],
            "pinned:KEY.jwk",
        ),
        (
            vec![
                "--trust",
                "allow:https://p.example",
                "--trust-audience",
                "https://127.0.0.1/mcp",
            ],
            "the signing keys of `https://127.0.0.1/mcp` (no --jwks given)",
        ),
        (
            vec![
                "--trust",
                &tofu,
                "--trust-jwks",
                &jwk,
                "--trust-audience",
                SERVER_URI,
            ],
            "not a JSON object",
        ),
        (
            vec![
                "--trust",
                "pinned:missing.jwk",
                "--trust-audience",
                SERVER_URI,
            ],
            "missing.jwk",
        ),
    ];
    for (args, expected) in cases {
        refused_before_start(&args, expected, &["sh", "-c", &touch], &marker);
    }
}

#[test]
fn the_jws_names_the_algorithm_as_asked() {
    let dir = common::scratch("proxy", "sep3140-jws-alg");
    let (pem, _) = keygen(&dir);
    let serve = |alg: &[&str]| {
        let mut args = vec![
            "tests/fixtures/proxy/sep3140.yaml",
            "--sign-key",
            pem.to_str().unwrap(),
            "--server-uri",
            SERVER_URI,
        ];
        args.extend_from_slice(alg);
        common::Listening::start(&args, &["python3", fake_server().to_str().unwrap(), "well"])
    };
    let proxy = serve(&["--jws-alg", "Ed25519"]);
    let (_, _, body) = http::http_at(
        &proxy.addr,
        "GET",
        "/.well-known/mcp-signing-jwks.json",
        &[],
        "",
    );
    let jwks: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(jwks["keys"][0]["alg"], "Ed25519");
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
    // A name that is not the key's: refused at start.
    let out = common::bin()
        .args(["proxy", "tests/fixtures/proxy/sep3140.yaml", "--sign-key"])
        .arg(&pem)
        .args([
            "--server-uri",
            SERVER_URI,
            "--jws-alg",
            "ES256",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not name the key's algorithm"));
}
