//! The proxy's reading of what a host sends: any bytes, split into lines as
//! the proxy splits them, through the JSON-RPC screen (both its checking and
//! its per-message form) and the envelope reader. The oracle is what
//! JSON-RPC 2.0 asks of an answer: the screen answers only what it cannot
//! pass on, with an error response (`"jsonrpc": "2.0"`, an integer code of
//! the reserved range, a message) that carries the request's id, or null
//! when it has none that can be read; it never answers a notification or a
//! response; and it passes on only JSON objects. The screen that parses
//! the params as it screens (`Screen::read_parsing`, the proxy's) decides
//! every line as the screen does, and gives the params a tree reader gives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve_runtime::framing::{Screen, Screened};
use mcp_resolve_protocol::Envelope;
use serde_json::Value;

fn check(line: &str, screened: &Screened) {
    let message = serde_json::from_str::<Value>(line).ok();
    let object = message.as_ref().and_then(Value::as_object);
    match screened {
        Screened::Forward => assert!(object.is_some(), "forwarded a non-object: {line}"),
        Screened::Drop(_) => {}
        Screened::Reply(reply) => {
            assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
            let code = reply["error"]["code"].as_i64().expect("an integer code");
            assert!((-32768..=-32000).contains(&code), "{code} for {line}");
            assert!(reply["error"]["message"].is_string(), "{reply}");
            if let Some(object) = object {
                // Never an answer to a notification or a response.
                assert!(object.contains_key("id"), "answered {line} with {reply}");
                assert!(
                    object.contains_key("method")
                        || !(object.contains_key("result") || object.contains_key("error")),
                    "answered a response {line}"
                );
                let id = &reply["id"];
                assert!(
                    id.is_null() || Some(id) == object.get("id"),
                    "id {id} for {line}"
                );
            } else {
                assert!(reply["id"].is_null(), "{reply} for {line}");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut screens = [
        Screen::default(),
        Screen::checking("tools/resolve"),
        Screen::checking("tools/resolve").per_message(),
    ];
    let mut parsing = [Screen::default(), Screen::checking("tools/resolve")];
    for line in data.split(|&b| b == b'\n') {
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let mut decided = Vec::new();
        for screen in &mut screens {
            let screened = screen.line(line);
            check(line, &screened);
            decided.push(screened);
        }
        for (screen, expected) in parsing.iter_mut().zip(&decided) {
            match (screen.read_parsing(line, |m| m != "initialize"), expected) {
                (Ok((message, params)), Screened::Forward) => {
                    let parsed = message.params().filter(|_| {
                        message.method.as_deref().is_some_and(|m| m != "initialize")
                    });
                    assert_eq!(params, parsed, "{line}");
                }
                (Err(screened), expected) => assert_eq!(&screened, expected, "{line}"),
                (Ok(_), expected) => panic!("{line}: passed, where the screen gave {expected:?}"),
            }
        }
        if let Some(envelope) = Envelope::of(line) {
            let _ = (
                envelope.is_request(),
                envelope.is_response(),
                envelope.params(),
            );
        }
    }
});
