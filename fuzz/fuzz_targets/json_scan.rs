//! The scanner the proxy reads messages with, against serde_json: any
//! bytes, line by line. A value the scanner walks is one serde_json's walk
//! reads, to the same text; a message's envelope (which the scanner reads
//! where it can) is the one serde_json reads; an answer whose listing the
//! scanner reads is read by serde_json to the same envelope, texts and
//! members.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve_protocol::Envelope;
use mcp_resolve_proxy_core::raw::{Listing, ListingSeed, read_listing};
use serde_json::value::RawValue;

/// Everything read of a message's envelope, with where each text lies in it.
fn envelope_shape(text: &str, envelope: &Envelope<'_>) -> String {
    let at = |part: &str| (part.as_ptr() as usize - text.as_ptr() as usize, part.len());
    format!(
        "{:?} {:?} {} {:?} {} {:?} {} {:?} {} {}",
        envelope.id,
        envelope.id_raw.map(|raw| at(raw.get())),
        envelope.jsonrpc,
        envelope.method,
        envelope.has_method,
        envelope.params.map(|raw| at(raw.get())),
        envelope.result,
        envelope.result_raw.map(|raw| at(raw.get())),
        envelope.error,
        envelope.skipped,
    )
}

/// Everything read of an answer, with where each text lies in it.
fn shape(text: &str, envelope: &Envelope<'_>, listing: &Listing<'_>) -> String {
    let at = |part: &str| (part.as_ptr() as usize - text.as_ptr() as usize, part.len());
    let tools: Vec<_> = listing
        .tools
        .iter()
        .map(|(tool, read)| {
            let read = read.as_ref().map(|read| {
                let members = |m: &mcp_resolve_proxy_core::raw::Members<'_>| -> Vec<_> {
                    m.0.iter().map(|(k, v)| (k.to_string(), at(v))).collect()
                };
                (members(&read.members), read.annotations.as_ref().map(members))
            });
            (at(tool), read)
        })
        .collect();
    format!("{} {:?} {tools:?}", envelope_shape(text, envelope), at(listing.text))
}

fuzz_target!(|data: &[u8]| {
    for line in data.split(|&b| b == b'\n') {
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let mut scanner = mcp_resolve_protocol::json::scan(line);
        if let Some(value) = scanner.value()
            && scanner.end().is_some()
        {
            let read = serde_json::from_str::<&RawValue>(line).map(RawValue::get);
            assert_eq!(read.ok(), Some(value), "{line}");
        }
        let read = Envelope::of(line).map(|e| envelope_shape(line, &e));
        let by_serde = serde_json::from_str::<Envelope<'_>>(line).map(|e| envelope_shape(line, &e));
        assert_eq!(read, by_serde.ok(), "{line}");
        if let Some((envelope, Some(listing))) = read_listing(line) {
            let (e, l) = Envelope::of_reading(line, ListingSeed(line))
                .and_then(|(e, l)| Some((e, l?)))
                .unwrap_or_else(|| panic!("serde_json does not read the listing {line}"));
            assert_eq!(shape(line, &envelope, &listing), shape(line, &e, &l), "{line}");
        }
    }
});
