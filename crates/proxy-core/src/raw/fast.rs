//! A `tools/list` answer read by the protocol crate's scanner
//! ([`Envelope::scan_reading`], with this module's reader of the result):
//! the same envelope and [`Listing`] as [`Envelope::of_reading`] with a
//! [`ListingSeed`](super::ListingSeed) gives, in about a third of the
//! instructions — most of an answer is schemas passed over, and serde_json
//! walks them a token per call. What the scanner does not read (a key with
//! escapes, a member written twice, a member of no meaning in a message or
//! a listing) is read by serde_json as before; a property test holds the
//! two ways to the same result on the answers the scanner reads.

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
    let (envelope, listing) = Envelope::scan_reading(text, result)?;
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
