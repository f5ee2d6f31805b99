//! `--trust`: the server's signed declarations verified before a host sees
//! them ([`crate::trust`]). A `tools/list` answer (the host's, or a page of
//! the proxy's own listing) waits while the proxy asks the server for its
//! manifest, when it has none that is fresh; then every listed tool is
//! checked against it, and the ones that fail are withheld.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use mcp_resolve_host::declarations::{self, Manifest};
use mcp_resolve_protocol::{Envelope, id_key};
use serde_json::{Value, json};

use super::{Clock, Effect, Pending, Session, unix_seconds};
use crate::declare::MANIFEST_METHOD;

/// An answer held until the manifest is verified.
pub(super) enum HeldListing {
    /// The server's answer (`text`) to the host's `tools/list` (the key
    /// of whose id is given).
    Host(String, Box<Pending>, String),
    /// A page (its result's JSON text, if a result) of the proxy's own
    /// listing, the answer's text, and the key of the page's request id.
    Relist(Option<String>, String, String),
}

/// What one session knows of the server's signed declarations.
#[derive(Default)]
pub(super) struct Verification {
    /// The manifest that verified last.
    manifest: Option<Manifest>,
    /// Why the last manifest was refused (every tool is withheld then).
    refused: Option<String>,
    /// The server announced a change: the manifest is asked for again.
    stale: bool,
    /// The key of the proxy's `declarations/manifest` request out, and
    /// when it is given up.
    asked: Option<(String, Option<Instant>)>,
    asks: u64,
    /// Answers waiting for the manifest.
    held: Vec<HeldListing>,
    /// Each tool's material hash when it first verified in this session.
    first: HashMap<String, String>,
    /// Tools withheld from the host, and why.
    withheld: BTreeMap<String, String>,
    /// Tools whose declarations verified.
    verified: HashSet<String>,
    /// Tools whose verified declaration changed materially, listed to a
    /// host that can be asked: the user is asked before the next call
    /// (its new material hash, and what changed).
    regate: HashMap<String, (String, String)>,
}

impl Verification {
    /// The deadline of the manifest request out, if any.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.asked.as_ref().and_then(|(_, deadline)| *deadline)
    }

    /// The server announced a change.
    pub(super) fn changed(&mut self) {
        self.stale = true;
    }

    /// The ids (keys) of the host's listings waiting, taken out.
    pub(super) fn take_held_requests(&mut self) -> Vec<String> {
        std::mem::take(&mut self.held)
            .into_iter()
            .filter_map(|held| match held {
                HeldListing::Host(key, ..) => Some(key),
                HeldListing::Relist(..) => None,
            })
            .collect()
    }

    /// The user accepted `tool`'s changed declaration: it is the one this
    /// session holds it to now.
    pub(super) fn accept(&mut self, tool: &str) {
        if let Some((material, _)) = self.regate.remove(tool) {
            self.first.insert(tool.to_owned(), material);
        }
    }

    /// Why the user must be asked before a call to `tool`, if they must.
    pub(super) fn regate(&self, tool: &str) -> Option<&str> {
        self.regate.get(tool).map(|(_, why)| why.as_str())
    }

    /// Whether `key` is the id of the proxy's manifest request.
    pub(super) fn is_asked(&self, key: &str) -> bool {
        self.asked.as_ref().is_some_and(|(k, _)| k == key)
    }
}

impl Session<'_> {
    /// Whether a listing must wait for a manifest: verification is on and
    /// there is none that verified, is fresh, and was not made stale.
    pub(super) fn needs_manifest(&self, clock: Clock) -> bool {
        if self.guard.verify.is_none() {
            return false;
        }
        let v = &self.verification;
        let expired = v.manifest.as_ref().is_none_or(|m| {
            declarations::parse_rfc3339(&m.expires_at).is_none_or(|t| t <= unix_seconds(clock))
        });
        v.stale || expired
    }

    /// Holds `listing` until the manifest is verified, asking the server
    /// for it unless a request is out.
    pub(super) fn hold_listing(
        &mut self,
        listing: HeldListing,
        clock: Clock,
        out: &mut Vec<Effect>,
    ) {
        self.verification.held.push(listing);
        if self.verification.asked.is_some() {
            return;
        }
        self.verification.asks += 1;
        let id = format!("mcp-resolve-manifest-{}", self.verification.asks);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": MANIFEST_METHOD, "params": {}});
        out.push(Effect::Server(request.to_string()));
        let deadline = self.timeout.map(|t| clock.now + t);
        self.verification.asked = Some((id_key(&Value::String(id)), deadline));
    }

    /// The server's answer (`text`) to the proxy's manifest request:
    /// verified or refused, then the held listings go on.
    pub(super) fn manifest_answered(&mut self, text: &str, clock: Clock, out: &mut Vec<Effect>) {
        let Some(verifier) = &self.guard.verify else {
            return;
        };
        let message = Envelope::of(text);
        let result: Option<Value> = message
            .as_ref()
            .and_then(|m| m.result_raw)
            .and_then(|raw| mcp_resolve_protocol::json::from_str(raw.get()).ok());
        let outcome = match result {
            Some(document) => verifier
                .verify(&document, unix_seconds(clock))
                .map_err(|refused| refused.to_string()),
            None => Err(format!(
                "the server does not serve a signed manifest (its answer to `{MANIFEST_METHOD}`: {})",
                crate::excerpt(text)
            )),
        };
        drop(message);
        match outcome {
            Ok(verified) => {
                if let Some(record) = verified.first {
                    out.push(Effect::Log(format!(
                        "trusting the key `{}` for {} on first use",
                        record["kid"].as_str().unwrap_or_default(),
                        verifier.audience()
                    )));
                    out.push(Effect::Trust(record));
                }
                self.settle(Ok(verified.manifest), clock, out);
            }
            Err(why) => self.settle(Err(why), clock, out),
        }
    }

    /// The manifest request is over: the manifest that verified, or why
    /// the server's declarations are not trusted; the held listings go on.
    fn settle(&mut self, outcome: Result<Manifest, String>, clock: Clock, out: &mut Vec<Effect>) {
        match outcome {
            Ok(manifest) => {
                self.verification.manifest = Some(manifest);
                self.verification.refused = None;
            }
            Err(why) => {
                out.push(Effect::Log(format!(
                    "the server's declarations are not trusted: {why}"
                )));
                self.verification.manifest = None;
                self.verification.refused = Some(why);
            }
        }
        self.verification.stale = false;
        self.verification.asked = None;
        self.release_held(clock, out);
    }

    /// The manifest request was given up: the server's declarations are
    /// not trusted, and the held listings go on.
    pub(super) fn give_up_manifest(&mut self, clock: Clock, out: &mut Vec<Effect>) {
        let Some((key, Some(deadline))) = &self.verification.asked else {
            return;
        };
        if *deadline > clock.now {
            return;
        }
        self.expired.insert(key.clone(), None);
        let why = format!("the server did not answer `{MANIFEST_METHOD}` in time");
        self.settle(Err(why), clock, out);
    }

    fn release_held(&mut self, clock: Clock, out: &mut Vec<Effect>) {
        for held in std::mem::take(&mut self.verification.held) {
            match held {
                HeldListing::Host(_, mut waiting, text) => {
                    let message = Envelope::of(&text);
                    let error = message.as_ref().is_some_and(|m| m.error);
                    let result = message
                        .as_ref()
                        .and_then(|m| m.result_raw)
                        .map(|r| crate::raw::Read::Raw(r.get()));
                    let answer = self.deliver(&mut waiting, &text, error, result, clock, out);
                    drop(message);
                    out.push(Effect::Host(answer.unwrap_or(text)));
                }
                // A page of a reading given up meanwhile (its time ran out,
                // and another reading may have begun) is not this
                // reading's: it is dropped, as a late answer is.
                HeldListing::Relist(page, text, key) => {
                    if self.relist.as_ref().is_some_and(|l| l.key() == key) {
                        self.listing_page(page, &text, clock, out);
                    } else {
                        out.push(Effect::Log(
                            "a page of the proxy's tools/list that was given up was dropped".into(),
                        ));
                    }
                }
            }
        }
    }

    /// Checks each tool of a `tools/list` result (`raw`, as the server
    /// listed it) against the verified manifest, and takes out of `raw`
    /// the tools that fail (remembered as withheld, with why; a line for
    /// the log each, in `notes`).
    pub(super) fn verify_listing(&mut self, raw: &mut Value, notes: &mut Vec<String>) {
        if self.guard.verify.is_none() {
            return;
        }
        let Some(Value::Array(tools)) = raw.get_mut("tools") else {
            return;
        };
        // A host that can be asked keeps a changed tool listed; its next
        // call is asked about (legacy sessions: the question is held).
        let ask = crate::consent::may_elicit(None, self.session_caps.as_ref());
        let v = &mut self.verification;
        tools.retain(|tool| {
            let name = tool
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let why = match (&v.manifest, &v.refused) {
                (_, Some(why)) => Some(why.clone()),
                (None, None) => Some("no signed manifest verified".into()),
                (Some(manifest), None) => {
                    let mismatches = manifest.check_tools(std::slice::from_ref(tool));
                    match (mismatches.first(), tool.as_object()) {
                        (Some(mismatch), _) => Some(mismatch.why.clone()),
                        (None, Some(map)) => {
                            let material = declarations::material_hash(map);
                            let first = v.first.entry(name.clone()).or_insert(material.clone());
                            let changed = *first != material;
                            v.regate.remove(&name);
                            match changed {
                                false => None,
                                true if ask => {
                                    let why = format!(
                                        "now version {}",
                                        map.get("version").and_then(Value::as_str).unwrap_or("?")
                                    );
                                    v.regate.insert(name.clone(), (material, why));
                                    None
                                }
                                true => Some(
                                    "its declaration changed materially since this session first verified it (a new session accepts it; a host that can be asked is asked)".to_owned(),
                                ),
                            }
                        }
                        (None, None) => Some("it is not an object".into()),
                    }
                }
            };
            match why {
                None => {
                    v.withheld.remove(&name);
                    v.verified.insert(name);
                    true
                }
                Some(why) => {
                    if v.withheld.get(&name) != Some(&why) {
                        notes.push(format!("`{name}` is withheld from the host: {why}"));
                    }
                    v.verified.remove(&name);
                    v.withheld.insert(name, why);
                    false
                }
            }
        });
    }

    /// Why a call to `tool` is refused under `--trust`, if it is.
    pub(super) fn untrusted(&self, tool: &str) -> Option<String> {
        self.guard.verify.as_ref()?;
        let v = &self.verification;
        if v.verified.contains(tool) {
            return None;
        }
        Some(match v.withheld.get(tool) {
            Some(why) => format!("`{tool}` is withheld: {why}"),
            None => format!(
                "`{tool}` has no verified declaration (the server has not listed it since its manifest was verified)"
            ),
        })
    }
}
