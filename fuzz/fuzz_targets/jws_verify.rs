//! Publisher signatures on hostile input: any `.jws` file text against a
//! fixed payload and keys (one Ed25519, one P-256), and any JWK or JWK set.
//! Never a panic, and never a verified signature that was not made by one
//! of the keys over that payload (the keys' private halves are not in the
//! input, so a verification here would be a forgery).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_resolve_host::jws::{Algorithm, PrivateKey, PublicKey, read_keys, verify_any};

fn keys() -> &'static [PublicKey] {
    static KEYS: OnceLock<Vec<PublicKey>> = OnceLock::new();
    KEYS.get_or_init(|| {
        [Algorithm::Ed25519, Algorithm::ES256]
            .into_iter()
            .map(|alg| PrivateKey::generate(alg).expect("key").public().clone())
            .collect()
    })
}

fuzz_target!(|text: &str| {
    assert!(
        verify_any(text, br#"{"tools":[]}"#, keys()).is_err(),
        "a signature verified without the private key: {text}"
    );
    let _ = read_keys(text);
});
