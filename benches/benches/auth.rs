//! What `--auth-issuer` adds to a call: verifying the bearer token (from
//! the cache of verified tokens, as for every request after a host's
//! first) and checking the resolved variant's scopes, next to the same
//! resolution without authorization; and a token's first verification
//! (its Ed25519 signature). `cargo bench -p mcp-resolve-benches --bench
//! auth`; figures in docs/performance.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_resolve_host::jws::{Algorithm, PrivateKey};
use mcp_resolve_proxy::auth::Authorizer;
use mcp_resolve_proxy::rules::ProxyRules;
use mcp_resolve_runtime::Dialect;
use serde_json::json;

const ISSUER: &str = "https://auth.example";
const AUDIENCE: &str = "https://files.example/mcp";

fn authorizer(key: &PrivateKey) -> Authorizer {
    let jwks = json!({"keys": [key.public().to_jwk_as("EdDSA")]});
    Authorizer::with_keys(
        ISSUER,
        AUDIENCE,
        serde_json::from_value(jwks).unwrap(),
        vec![],
    )
}

fn bearer(key: &PrivateKey) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now + 3600,
                        "scope": "files:read files:write"})
    .to_string();
    let detached = key.sign_detached_as(claims.as_bytes(), "EdDSA").unwrap();
    let (header, signature) = detached.split_once("..").unwrap();
    format!("Bearer {header}.{}.{signature}", B64.encode(claims))
}

fn rules() -> ProxyRules {
    let project = mcp_resolve::load_str(
        "file-server.yaml",
        include_str!("../../rules/file-server.yaml"),
    );
    ProxyRules::new(
        project.servers.into_iter().next().unwrap(),
        Dialect::Extension,
    )
    .unwrap()
}

fn per_call(c: &mut Criterion) {
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let auth = authorizer(&key);
    let bearer = bearer(&key);
    let rules = rules();
    let arguments = json!({"path": "notes.md", "action": "append", "content": "x"});
    assert!(auth.check(Some(&bearer)).is_ok());
    let mut group = c.benchmark_group("auth");
    group.bench_function("resolution only", |b| {
        b.iter(|| {
            let outcome = rules
                .matcher()
                .outcome("manage_files", black_box(&arguments))
                .unwrap()
                .unwrap();
            black_box(outcome.resolution().required_scopes.len())
        })
    });
    group.bench_function("cached token + resolution + scopes", |b| {
        b.iter(|| {
            let principal = auth.check(Some(black_box(&bearer))).unwrap();
            let outcome = rules
                .matcher()
                .outcome("manage_files", black_box(&arguments))
                .unwrap()
                .unwrap();
            let missing = outcome
                .resolution()
                .required_scopes
                .iter()
                .filter(|s| !principal.scopes.contains(*s))
                .count();
            black_box(missing)
        })
    });
    group.bench_function("first verification of a token", |b| {
        b.iter_batched(
            || authorizer(&key),
            |fresh| black_box(fresh.check(Some(&bearer)).unwrap()),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = per_call
}
criterion_main!(benches);
