//! The proxy's reading of what a host sends: any bytes, split into lines as
//! the proxy splits them, through the JSON-RPC screen (both its checking and
//! its per-message form) and the envelope reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve::internals::envelope::Envelope;
use mcp_resolve_runtime::framing::Screen;

fuzz_target!(|data: &[u8]| {
    let mut screens = [
        Screen::default(),
        Screen::checking("tools/resolve"),
        Screen::checking("tools/resolve").per_message(),
    ];
    for line in data.split(|&b| b == b'\n') {
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        for screen in &mut screens {
            let _ = screen.line(line);
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
