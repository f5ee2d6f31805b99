//! The proxy's reading of what a server sends: any bytes, split into lines,
//! through the envelope reader; a message it reads has an id, a method or a
//! result exactly when serde_json's reading of the same text has them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve_protocol::Envelope;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    for line in data.split(|&b| b == b'\n') {
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let Some(envelope) = Envelope::of(line) else {
            continue;
        };
        // What serde_json reads of the same text (the last of a repeated
        // member counts, as for the envelope).
        if let Ok(Value::Object(message)) = serde_json::from_str::<Value>(line) {
            assert_eq!(envelope.id.as_ref(), message.get("id"), "id of {line}");
            assert_eq!(
                envelope.method.as_deref(),
                message.get("method").and_then(Value::as_str),
                "method of {line}"
            );
            assert_eq!(
                envelope.result,
                message.contains_key("result"),
                "result of {line}"
            );
            assert_eq!(
                envelope.error,
                message.contains_key("error"),
                "error of {line}"
            );
        }
        let _ = envelope.params();
    }
});
