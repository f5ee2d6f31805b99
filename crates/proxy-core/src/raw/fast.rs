//! A `tools/list` answer read by the protocol crate's scanner: the same
//! envelope and [`Listing`] as [`Envelope::of_reading`] with a
//! [`ListingSeed`](super::ListingSeed) gives, in about a third of the
//! instructions — most of an answer is schemas passed over, and serde_json
//! walks them a token per call. What the scanner does not read (a key with
//! escapes, a member written twice, an error, a member of no meaning in a
//! listing) is read by serde_json as before; a property test holds the two
//! ways to the same result on the answers the scanner reads.

use std::borrow::Cow;

use mcp_resolve_protocol::Envelope;
use mcp_resolve_protocol::scan::Scanner;

use super::{Listing, Members, Tool};

/// The most members a tool or its annotations have on this path (more:
/// serde_json reads the answer, and indexes them).
const MEMBERS: usize = 16;

/// The envelope of a `tools/list` answer and its listing, when the scanner
/// reads it (`None`: read it with serde_json).
pub fn listing(text: &str) -> Option<(Envelope<'_>, Listing<'_>)> {
    let mut scanner = mcp_resolve_protocol::json::scan(text);
    let mut envelope = Envelope::default();
    let mut listing = None;
    let mut seen = [false; 3];
    scanner.object(|scanner, key| {
        let slot = match key {
            "jsonrpc" => 0,
            "id" => 1,
            "result" => 2,
            _ => return None,
        };
        if std::mem::replace(&mut seen[slot], true) {
            return None;
        }
        match slot {
            0 => envelope.jsonrpc = scanner.plain_string()? == "2.0",
            1 => {
                let raw = scanner.raw()?;
                envelope.id = Some(mcp_resolve_protocol::plain_id(raw.get())?);
                envelope.id_raw = Some(raw);
            }
            _ => listing = Some(result(scanner)?),
        }
        Some(())
    })?;
    scanner.end()?;
    envelope.result = true;
    envelope.skipped = true;
    Some((envelope, listing?))
}

/// A `tools/list` result: its text and its tools.
fn result<'a>(scanner: &mut Scanner<'a>) -> Option<Listing<'a>> {
    let mut tools = None;
    let text = scanner.object(|scanner, key| {
        match key {
            "tools" if tools.is_none() => {
                let mut items = Vec::with_capacity(16);
                scanner.array(|scanner| {
                    items.push(tool(scanner)?);
                    Some(())
                })?;
                tools = Some(items).filter(|items| !items.is_empty());
                tools.as_ref()?;
            }
            // A listing's other members; anything else is not a listing
            // read here (the answer to another request, most often), and
            // is given up before its value is walked.
            "nextCursor" | "_meta" => {
                scanner.value()?;
            }
            _ => return None,
        }
        Some(())
    })?;
    Some(Listing {
        text,
        tools: tools?,
    })
}

/// One listed tool: its text, its members and its annotations' members.
fn tool<'a>(scanner: &mut Scanner<'a>) -> Option<(&'a str, Option<Tool<'a>>)> {
    let mut members: Vec<(Cow<'a, str>, &'a str)> = Vec::with_capacity(8);
    let mut annotations = None;
    let text = scanner.object(|scanner, key| {
        let value = if key == "annotations" {
            let (text, read) = members_of(scanner)?;
            annotations = Some(read);
            text
        } else {
            scanner.value()?
        };
        add(&mut members, key, value)
    })?;
    (!members.is_empty()).then_some(())?;
    Some((
        text,
        Some(Tool {
            members: Members(members),
            annotations,
        }),
    ))
}

/// An object that is not empty: its text and its members.
fn members_of<'a>(scanner: &mut Scanner<'a>) -> Option<(&'a str, Members<'a>)> {
    let mut members = Vec::with_capacity(8);
    let text = scanner.object(|scanner, key| {
        let value = scanner.value()?;
        add(&mut members, key, value)
    })?;
    (!members.is_empty()).then_some((text, Members(members)))
}

/// A member added, unless its key was written before or there are too
/// many to search.
fn add<'a>(members: &mut Vec<(Cow<'a, str>, &'a str)>, key: &'a str, value: &'a str) -> Option<()> {
    (members.len() < MEMBERS && !members.iter().any(|(k, _)| k == key)).then_some(())?;
    members.push((Cow::Borrowed(key), value));
    Some(())
}

#[cfg(test)]
mod tests;
