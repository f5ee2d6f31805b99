//! The runtime's RFC 8785 writer (`mcp_resolve_host::jcs`, what every
//! fingerprint and signature text goes through) against its references on
//! any JSON: the canonical text is `serde_json_canonicalizer`'s, byte for
//! byte, and the pretty text is serde_json's pretty printer over that
//! canonical text read back (serde_json keeps the order read: the
//! compiler's `preserve-order` feature is on in this build).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve_host::jcs;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(reference) = serde_json_canonicalizer::to_string(&value) else {
        return;
    };
    assert_eq!(jcs::canonical(&value), reference);
    let read: Value = serde_json::from_str(&reference).expect("canonical text reads back");
    assert_eq!(
        jcs::pretty(&value),
        serde_json::to_string_pretty(&read).expect("a value prints")
    );
});
