//! Host verification on hostile input: an arbitrary signature document, and
//! arbitrary `tools/list` and resolve results checked against it
//! (`verify_tools_list`, `verify_resolution`). The input is the document and
//! the result as JSON, separated by a NUL byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve_host::{Signature, verify_resolution};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(2, |&b| b == 0);
    let (Some(document), Some(result)) = (parts.next(), parts.next()) else {
        return;
    };
    let Ok(document) = serde_json::from_slice::<Value>(document) else {
        return;
    };
    let result: Value = serde_json::from_slice(result).unwrap_or(Value::Null);
    let _ = Signature::verified(document.clone());
    let Ok(signature) = Signature::from_value(document) else {
        return;
    };
    let _ = signature.verify_tools_list(&result);
    let arguments = result.get("arguments").cloned().unwrap_or(Value::Null);
    let names: Vec<String> = signature
        .tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    for name in names.iter().map(String::as_str).chain(["missing"]) {
        let _ = verify_resolution(&signature, name, &arguments, &result);
        let _ = signature.expect(name, &arguments);
    }
});
