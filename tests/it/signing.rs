//! Publisher signatures end to end: `keygen`, `signature --sign`, `verify`,
//! `--server-json`, the proxy's `--pin-key`, and the cross-check with an
//! independent JOSE implementation.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{Value, json};

const RULES: &str = "rules/file-server.yaml";

fn run(args: &[&str]) -> Output {
    common::bin().args(args).output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

/// A key pair `NAME.pem` / `NAME.jwk` in `dir`.
fn keygen(dir: &Path, name: &str, alg: &str) -> String {
    let out = run(&["keygen", "-o", &path(dir, name), "--alg", alg]);
    assert!(out.status.success(), "{}", stderr(&out));
    path(dir, name)
}

/// Signs the bundled rules into `dir/doc` with each key.
fn sign(dir: &Path, doc: &str, keys: &[&str]) -> Output {
    let mut args = vec!["signature".to_string(), RULES.to_string()];
    for key in keys {
        args.push("--sign".into());
        args.push(format!("{key}.pem"));
    }
    args.extend(["-o".to_string(), path(dir, doc)]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

fn verify(dir: &Path, doc: &str, keys: &[&str]) -> Output {
    let mut args = vec!["verify".to_string(), path(dir, doc)];
    for key in keys {
        args.push("--key".into());
        args.push(format!("{key}.jwk"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

#[test]
fn keygen_writes_a_private_pem_and_a_public_jwk_and_never_overwrites() {
    let dir = common::scratch("signing", "keygen");
    for alg in ["Ed25519", "ES256"] {
        let key = keygen(&dir, alg, alg);
        let pem = std::fs::read_to_string(format!("{key}.pem")).unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "{pem}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(format!("{key}.pem"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{alg}");
        }
        let jwk: Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{key}.jwk")).unwrap()).unwrap();
        assert_eq!(jwk["alg"], alg);
        assert!(jwk.get("d").is_none(), "the JWK is public: {jwk}");
        assert_eq!(
            jwk["kid"].as_str().unwrap().len(),
            43,
            "a base64url SHA-256: {jwk}"
        );
        // Never overwritten without --force.
        let again = run(&["keygen", "-o", &key, "--alg", alg]);
        assert_eq!(again.status.code(), Some(2));
        assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
        assert_eq!(std::fs::read_to_string(format!("{key}.pem")).unwrap(), pem);
        let forced = run(&["keygen", "-o", &key, "--alg", alg, "--force"]);
        assert!(forced.status.success());
        assert_ne!(std::fs::read_to_string(format!("{key}.pem")).unwrap(), pem);
    }
}

#[test]
fn a_signed_document_verifies_and_every_tampering_is_refused() {
    let dir = common::scratch("signing", "verify");
    let ed = keygen(&dir, "ed", "Ed25519");
    let ec = keygen(&dir, "ec", "ES256");
    let stranger = keygen(&dir, "stranger", "Ed25519");
    let out = sign(&dir, "sig.json", &[&ed]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ok = verify(&dir, "sig.json", &[&ed]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let said = String::from_utf8_lossy(&ok.stdout);
    assert!(
        said.contains("sha256:") && said.contains("(Ed25519)"),
        "{said}"
    );

    // A key that did not sign.
    let wrong = verify(&dir, "sig.json", &[&stranger]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        stderr(&wrong).contains("no key given is the one that signed"),
        "{}",
        stderr(&wrong)
    );

    // A document changed after signing, its fingerprint left: the
    // fingerprint does not hold.
    let doc_path = dir.join("sig.json");
    let original = std::fs::read_to_string(&doc_path).unwrap();
    let mut doc: Value = serde_json::from_str(&original).unwrap();
    doc["tools"][0]["description"] = json!("Reads files. Only reads.");
    std::fs::write(&doc_path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let tampered = verify(&dir, "sig.json", &[&ed]);
    assert_eq!(tampered.status.code(), Some(1));
    assert!(
        stderr(&tampered).contains("fingerprint does not verify"),
        "{}",
        stderr(&tampered)
    );
    // … and with its fingerprint recomputed: the signature does not hold.
    doc["fingerprint"] = json!(mcp_resolve_host::fingerprint(&doc));
    std::fs::write(&doc_path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let tampered = verify(&dir, "sig.json", &[&ed]);
    assert_eq!(tampered.status.code(), Some(1));
    assert!(
        stderr(&tampered).contains("does not verify with key"),
        "{}",
        stderr(&tampered)
    );
    std::fs::write(&doc_path, &original).unwrap();

    // Broken signature files.
    let jws_path = dir.join("sig.json.jws");
    let line = std::fs::read_to_string(&jws_path).unwrap();
    let header = |h: Value| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(h.to_string())
    };
    let signature = line.trim().split_once("..").unwrap().1.to_string();
    let cases = [
        (format!("{}..", header(json!({"alg": "none"}))), "alg: none"),
        (
            format!("{}..{signature}", header(json!({"alg": "HS256"}))),
            "`HS256`, which is not supported",
        ),
        ("not a jws".to_string(), "malformed JWS"),
        (line.replace("..", ".e30."), "not empty"),
    ];
    for (text, expected) in cases {
        std::fs::write(&jws_path, format!("{text}\n")).unwrap();
        let out = verify(&dir, "sig.json", &[&ed]);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            stderr(&out).contains(expected),
            "{expected}: {}",
            stderr(&out)
        );
    }
    std::fs::remove_file(&jws_path).unwrap();
    let missing = verify(&dir, "sig.json", &[&ed]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("sig.json.jws"),
        "{}",
        stderr(&missing)
    );

    // Two signers; a JWKS with either key verifies.
    let out = sign(&dir, "sig.json", &[ed.as_str(), ec.as_str()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&jws_path).unwrap().lines().count(),
        2
    );
    let jwks = json!({"keys": [
        serde_json::from_str::<Value>(&std::fs::read_to_string(format!("{stranger}.jwk")).unwrap()).unwrap(),
        serde_json::from_str::<Value>(&std::fs::read_to_string(format!("{ec}.jwk")).unwrap()).unwrap(),
    ]});
    std::fs::write(dir.join("keys.jwks"), jwks.to_string()).unwrap();
    let out = run(&[
        "verify",
        &path(&dir, "sig.json"),
        "--keys",
        &path(&dir, "keys.jwks"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("(ES256)"));
}

#[test]
fn co_signers_keep_each_others_signatures_until_the_document_changes() {
    let dir = common::scratch("signing", "co-sign");
    let a = keygen(&dir, "a", "Ed25519");
    let b = keygen(&dir, "b", "ES256");
    assert!(sign(&dir, "sig.json", &[&a]).status.success());
    assert!(sign(&dir, "sig.json", &[&b]).status.success());
    let jws_path = dir.join("sig.json.jws");
    assert_eq!(
        std::fs::read_to_string(&jws_path).unwrap().lines().count(),
        2
    );
    assert!(verify(&dir, "sig.json", &[&a]).status.success());
    assert!(verify(&dir, "sig.json", &[&b]).status.success());
    // Signing again with `a` replaces its line, keeps `b`'s.
    assert!(sign(&dir, "sig.json", &[&a]).status.success());
    assert_eq!(
        std::fs::read_to_string(&jws_path).unwrap().lines().count(),
        2
    );
    // Another document: `b`'s signature was over the old one; dropped.
    std::fs::write(dir.join("sig.json"), "{}").unwrap();
    let out = sign(&dir, "sig.json", &[&a]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("over another document"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&jws_path).unwrap().lines().count(),
        1
    );
    assert_eq!(verify(&dir, "sig.json", &[&b]).status.code(), Some(1));
}

#[test]
fn server_json_carries_the_signatures_and_stays_under_the_registry_limit() {
    let dir = common::scratch("signing", "server-json");
    let a = keygen(&dir, "a", "Ed25519");
    let b = keygen(&dir, "b", "ES256");
    let server_json = dir.join("server.json");
    std::fs::copy("tests/fixtures/registry/server.json", &server_json).unwrap();
    let out = run(&[
        "signature",
        RULES,
        "--sign",
        &format!("{a}.pem"),
        "--sign",
        &format!("{b}.pem"),
        "-o",
        &path(&dir, "sig.json"),
        "--server-json",
        server_json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&server_json).unwrap();
    assert!(text.len() <= 4096, "{} bytes", text.len());
    let doc: Value = serde_json::from_str(&text).unwrap();
    let entry = &doc["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]["io.github.mcp-resolve/signature"];
    let signatures = entry["signatures"].as_array().unwrap();
    assert_eq!(signatures.len(), 2, "{entry}");
    let lines = std::fs::read_to_string(dir.join("sig.json.jws")).unwrap();
    for signature in signatures {
        assert!(lines.contains(signature["jws"].as_str().unwrap()));
        assert_eq!(
            signature["kid"].as_str(),
            mcp_resolve_host::jws::kid_of(signature["jws"].as_str().unwrap()).as_deref()
        );
    }
    // The host library verifies the signature published in server.json.
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sig.json")).unwrap()).unwrap();
    let pinned =
        mcp_resolve_host::Signature::pinned(document, entry["fingerprint"].as_str().unwrap())
            .unwrap();
    let keys =
        mcp_resolve_host::jws::read_keys(&std::fs::read_to_string(format!("{b}.jwk")).unwrap())
            .unwrap();
    let jws = signatures[1]["jws"].as_str().unwrap();
    let verified = pinned.verify_publisher(jws, &keys).unwrap();
    assert_eq!(verified.key.kid(), signatures[1]["kid"].as_str().unwrap());
}

/// The rules' signature with one variant's annotations changed, its
/// fingerprint recomputed: an older document a host reviewed.
fn baseline(dir: &Path, name: &str, variant: &str, hint: &str, value: bool) -> PathBuf {
    let out = run(&["signature", RULES]);
    let mut doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let variants = doc["tools"][0]["resolvedVariants"].as_array_mut().unwrap();
    let entry = variants.iter_mut().find(|v| v["name"] == variant).unwrap();
    entry["annotations"][hint] = json!(value);
    doc["fingerprint"] = json!(mcp_resolve_host::fingerprint(&doc));
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

/// Starts the proxy in front of a server that answers `initialize`, and
/// closes it: the exit code, stderr.
fn proxy(args: &[&str]) -> (Option<i32>, String) {
    let server = "import sys\nfor line in sys.stdin:\n    pass\n";
    let mut child = common::bin()
        .arg("proxy")
        .args(args)
        .args(["--no-probe", "--", "python3", "-c", server])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"signature"}}"#);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (out.status.code(), stderr(&out))
}

#[test]
fn the_proxy_pins_a_publisher_and_accepts_only_narrowing_updates() {
    let dir = common::scratch("signing", "pin-key");
    let key = keygen(&dir, "publisher", "Ed25519");
    let other = keygen(&dir, "other", "Ed25519");
    assert!(sign(&dir, "sig.json", &[&key]).status.success());
    let pin = path(&dir, "sig.json");
    let jwk = format!("{key}.jwk");

    let other_jwk = format!("{other}.jwk");
    let pinned = |key: &str, baseline: Option<&Path>| {
        let mut args = vec![RULES, "--pin", &pin, "--pin-key", key];
        if let Some(baseline) = baseline {
            args.extend(["--pin-baseline", baseline.to_str().unwrap()]);
        }
        proxy(&args)
    };

    let (code, err) = pinned(&jwk, None);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("signed by key"), "{err}");
    // Another publisher's key: refused before the server starts.
    let (code, err) = pinned(&other_jwk, None);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no key given is the one that signed"), "{err}");

    // The served rules against older, reviewed documents: narrowing
    // (overwrite was not destructive before) is accepted …
    let looser = baseline(&dir, "looser.json", "overwrite", "destructiveHint", false);
    let (code, err) = pinned(&jwk, Some(&looser));
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("only narrows"), "{err}");
    // … widening (append was destructive before) is refused.
    let stricter = baseline(&dir, "stricter.json", "append", "destructiveHint", true);
    let (code, err) = pinned(&jwk, Some(&stricter));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("widens"), "{err}");

    // A signature file tampered with: refused.
    let jws = dir.join("sig.json.jws");
    let text = std::fs::read_to_string(&jws).unwrap();
    let flipped: String = text.trim().chars().rev().collect();
    std::fs::write(&jws, flipped).unwrap();
    let (code, err) = pinned(&jwk, None);
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn signatures_cross_check_with_an_independent_jose_implementation() {
    let Some(python) = common::mcp_python("the JOSE cross-check (joserfc)") else {
        return;
    };
    let dir = common::scratch("signing", "jose");
    let out = std::process::Command::new(python)
        .arg("tests/fixtures/jose_cross.py")
        .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
        .arg(RULES)
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("ok every cross-check"),
        "{stdout}\n{}",
        stderr(&out)
    );
}
