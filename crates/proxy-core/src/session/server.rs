//! Messages from the server: answers matched to the requests in flight and
//! rewritten where the proxy owns part of them, the proxy's own listing
//! after `notifications/tools/list_changed`, and everything else passed on
//! exactly as the server wrote it.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use mcp_resolve_runtime::{Annotations, Listed};

use super::relist::Relist;
use super::verify::HeldListing;
use super::{Answer, Clock, Effect, Pending, Session, range_in};
use crate::raw::{self, Members};
use crate::rules::Rewrite;
use crate::{excerpt, judge};
use mcp_resolve_protocol::{Envelope, id_key, splice};

impl Session<'_> {
    /// One line from the server.
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per kind of server message, in the order an answer is matched"
    )]
    pub(super) fn server_line(&mut self, text: String, clock: Clock, out: &mut Vec<Effect>) {
        // (A message starts with its `{`: only anything else is trimmed.)
        if !text.starts_with('{') && text.trim().is_empty() {
            return;
        }
        // A listing the proxy annotates is read with its envelope, in one
        // pass; anything else (or a listing that cannot be read so) as an
        // envelope with its result raw.
        let (message, listing) = match self
            .expects_listing()
            .then(|| raw::read_listing(&text))
            .flatten()
        {
            Some(read) => read,
            None => match Envelope::of(&text) {
                Some(message) => (message, None),
                None => {
                    out.push(Effect::Log(format!(
                        "the server wrote something that is not JSON-RPC; skipped: {}",
                        excerpt(&text)
                    )));
                    return;
                }
            },
        };
        let result = match listing {
            Some(listing) => Some(raw::Read::Listing(listing)),
            None => message.result_raw.map(|raw| raw::Read::Raw(raw.get())),
        };
        // The server announced a new list: the proxy reads it before the
        // host hears of it, so the pin and the policy judge the calls that
        // follow by what the server lists now.
        if self.guard.watches()
            && message.id.is_none()
            && message.method.as_deref() == Some("notifications/tools/list_changed")
        {
            drop(message);
            self.list_changed(text, clock, out);
            return;
        }
        let key = match (&message.id, message.is_response()) {
            (Some(id), true) => Some(id_key(id)),
            _ => None,
        };
        if let Some(key) = &key
            && self.verification.is_asked(key)
        {
            drop(message);
            self.manifest_answered(&text, clock, out);
            return;
        }
        if let (Some(listing), Some(key)) = (&self.relist, &key)
            && *key == listing.key()
        {
            let page = result.as_ref().map(|r| r.text().to_string());
            drop(message);
            if page.is_some() && self.needs_manifest(clock) {
                let key = listing.key();
                self.hold_listing(HeldListing::Relist(page, text, key), clock, out);
            } else {
                self.listing_page(page, &text, clock, out);
            }
            return;
        }
        let waiting = match key {
            Some(key) => {
                // (An empty map is not asked: a lookup hashes the key.)
                if !self.expired.is_empty()
                    && let Some(token) = self.expired.remove(&key)
                {
                    if let Some(token) = token {
                        self.silenced.remove(&token);
                    }
                    let id = message
                        .id
                        .as_ref()
                        .map(Value::to_string)
                        .unwrap_or_default();
                    out.push(Effect::Log(format!(
                        "a late answer to request {id}, which already timed out, was dropped"
                    )));
                    return;
                }
                self.pending.remove(&key)
            }
            None => None,
        };
        // A progress notification's token, read once: for the requests the
        // host was told timed out, and for a transport that routes it.
        let progress = (message.id.is_none()
            && (self.routes_answers || !self.silenced.is_empty())
            && message.method.as_deref() == Some("notifications/progress"))
        .then(|| progress_token(&text, message.params?))
        .flatten();
        // Progress for a request the host was told timed out: it has its
        // answer, and no more is coming for it.
        if let Some((_, token)) = &progress
            && self.silenced.contains(token)
        {
            return;
        }
        let Some(mut waiting) = waiting else {
            drop(message);
            match progress.filter(|_| self.routes_answers) {
                Some((id_at, to)) => {
                    out.push(Effect::Progress(Box::new(Answer { text, to, id_at })));
                }
                // Everything else exactly as the server wrote it.
                None => out.push(Effect::Host(text)),
            }
            return;
        };
        // A listing waits for the server's manifest under `--trust`.
        if matches!(waiting.rewrite, Rewrite::Tools { .. })
            && result.is_some()
            && self.needs_manifest(clock)
        {
            let key = message.id.as_ref().map(id_key).unwrap_or_default();
            drop(message);
            self.hold_listing(HeldListing::Host(key, Box::new(waiting), text), clock, out);
            return;
        }
        let error = message.error;
        // Where the id and the result are written, for a transport that
        // routes answers by the id (`None`: it reads the answer again).
        let at = self
            .routes_answers
            .then(|| {
                let raw = message.id_raw?.get();
                let id = range_in(&text, raw)?;
                let result = result.as_ref().and_then(|r| range_in(&text, r.text()));
                Some((id, result, raw.to_string()))
            })
            .flatten();
        let key = message.id.as_ref().map(id_key);
        let answer = self.deliver(&mut waiting, &text, error, result, clock, out);
        drop(message);
        let written = text.len();
        let text = answer.unwrap_or(text);
        let id_at = at.and_then(|(id, result, raw)| id_in_answer(&text, written, id, result, &raw));
        match (id_at, key) {
            (Some(id_at), Some(to)) => {
                out.push(Effect::Answer(Box::new(Answer { text, to, id_at })))
            }
            _ => out.push(Effect::Host(text)),
        }
    }

    /// The server's answer `text` to `waiting` (an error, or the result
    /// `result`, a slice of `text`, as it was read with the envelope): the
    /// call audited, and the answer rewritten where the proxy changes it
    /// (`None`: as written).
    pub(super) fn deliver(
        &mut self,
        waiting: &mut Pending,
        text: &str,
        error: bool,
        result: Option<raw::Read<'_>>,
        clock: Clock,
        out: &mut Vec<Effect>,
    ) -> Option<String> {
        let from = out.len();
        if let Some(call) = waiting.call.take() {
            let outcome = if error { "error" } else { call.outcome };
            self.audit_call(call, clock, outcome, true, out);
        }
        if let Some(traced) = waiting.trace.take() {
            // A JSON-RPC error's code, or `tool_error`: `isError` is a tool
            // result's, and no other result is searched for it.
            let result = result.as_ref().filter(|_| !error).map(raw::Read::text);
            let error = match result {
                Some(_) if !traced.is_call() => None,
                result => super::trace::error_type_of(text, result),
            };
            self.end_spans(traced, clock, error, from, out);
        }
        self.rewritten(waiting, text, result?, clock, out)
    }

    /// The answer to `waiting` whose result is `read` (its JSON text a
    /// slice of `text`), changed where the proxy changes it; `None` when
    /// it goes to the host as the server wrote it.
    fn rewritten(
        &mut self,
        waiting: &Pending,
        text: &str,
        read: raw::Read<'_>,
        clock: Clock,
        out: &mut Vec<Effect>,
    ) -> Option<String> {
        let result = read.text();
        // A listing whose tools the text could not read.
        let mut unread = false;
        if matches!(waiting.rewrite, Rewrite::Tools { .. }) && self.compare_pending {
            // The start-up comparison, on the host's own first listing.
            self.compare_pending = false;
            if let Some(Value::Array(tools)) = mcp_resolve_protocol::json::from_str::<Value>(result)
                .ok()
                .and_then(|mut r| r.get_mut("tools").map(Value::take))
            {
                out.extend(self.rules.compare(&tools).into_iter().map(Effect::Log));
            }
        }
        if let Pending {
            rewrite: Rewrite::Tools { marked },
            consent: None,
            listed_for,
            ..
        } = waiting
            && self.guard.pin.is_none()
            && self.guard.declare.is_none()
            && self.guard.verify.is_none()
        {
            // What the text cannot read (`tools` written twice, the first
            // no array) is read as a tree, as the host's parser reads it:
            // the rules' annotations and a token's filter are never
            // skipped.
            match read.tools() {
                Some(tools) => {
                    if let OnText::Answer(answer) =
                        self.annotated_list(text, tools, *marked, listed_for.as_ref())
                    {
                        return answer;
                    }
                }
                None => unread = true,
            }
        }
        if let Pending {
            rewrite: Rewrite::None,
            consent: None,
            ..
        } = waiting
        {
            // Most answers: as the server wrote them, never parsed.
            return None;
        }
        let mut value: Value = mcp_resolve_protocol::json::from_str(result).ok()?;
        if unread && !matches!(value.get("tools"), Some(Value::Array(_))) {
            // No list of tools at all: nothing to annotate, and the answer
            // goes as the server wrote it.
            return None;
        }
        match waiting {
            // The server asks a question of its own about a call the user
            // accepted: its state rides in a ticket.
            Pending {
                consent: Some((tool, arguments)),
                ..
            } => {
                let Value::Object(map) = &mut value else {
                    return None;
                };
                if !self
                    .tickets()
                    .carry(super::unix_seconds(clock), tool, arguments, map)
                {
                    return None;
                }
            }
            Pending {
                rewrite: Rewrite::None,
                ..
            } => return None,
            Pending {
                rewrite: Rewrite::Tools { marked },
                first_page,
                listed_for,
                ..
            } => {
                remember_listing(&mut self.listed, &value);
                value = self.shown_listing(&value, *marked, *first_page, out);
                if let (Some(granted), Some(Value::Array(tools))) =
                    (listed_for, value.get_mut("tools"))
                {
                    tools.retain(|tool| match tool.get("name").and_then(Value::as_str) {
                        Some(name) => judge::listed_to(self.rules, name, granted),
                        None => true,
                    });
                }
                if value.get("nextCursor").is_none()
                    && let Some(declarer) = &self.guard.declare
                {
                    declarer.read(&mut self.declared);
                }
            }
            Pending { rewrite, .. } => {
                if matches!(rewrite, Rewrite::Capabilities) {
                    self.server_resolves = self.rules.server_resolves(&value);
                    if let Some(declarer) = &self.guard.declare {
                        declarer.advertise(&mut value);
                    }
                }
                self.rules.rewrite(rewrite, &mut value);
            }
        }
        splice(text, result, &value.to_string())
    }

    /// A `tools/list` result (`raw`, the server's) as the host is shown it
    /// (`marked`: with the extension's markers): the rules' annotations
    /// and markers, the markers of tools no rules describe taken off where
    /// the proxy would refuse their resolution, what the pin withholds
    /// left out, and (with a signing key) each tool declared; `fresh`: this
    /// page starts a reading of the whole list.
    fn shown_listing(
        &mut self,
        raw: &Value,
        marked: bool,
        fresh: bool,
        out: &mut Vec<Effect>,
    ) -> Value {
        let mut notes = Vec::new();
        let mut checked;
        let raw = if self.guard.verify.is_some() {
            checked = raw.clone();
            let before = tool_count(&checked);
            self.verify_listing(&mut checked, &mut notes);
            self.withheld("trust", before, tool_count(&checked), out);
            &checked
        } else {
            raw
        };
        let mut value = raw.clone();
        self.rules.rewrite(&Rewrite::Tools { marked }, &mut value);
        if let Some(Value::Array(tools)) = value.get_mut("tools") {
            for tool in tools.iter_mut() {
                if let Some(unmarked) = self.unmarked(&tool.to_string())
                    && let Ok(unmarked) = mcp_resolve_protocol::json::from_str(&unmarked)
                {
                    *tool = unmarked;
                }
            }
        }
        let before = tool_count(&value);
        self.guard.check_listing(
            &mut self.pins,
            raw,
            &mut value,
            self.baselines.take().as_ref(),
            &mut notes,
        );
        self.withheld("pin", before, tool_count(&value), out);
        if let Some(declarer) = &self.guard.declare {
            self.declared.marked = marked;
            declarer.declare(&mut self.declared, &mut value, marked, fresh, &mut notes);
        }
        out.extend(notes.into_iter().map(Effect::Log));
        value
    }

    /// Counts the tools `by` left out of a listing (`before` → `after`).
    fn withheld(&self, by: &'static str, before: u64, after: u64, out: &mut Vec<Effect>) {
        if after < before {
            self.measure(
                mcp_resolve_telemetry::Measure::Withheld {
                    by,
                    tools: before - after,
                },
                out,
            );
        }
    }

    /// A listed tool (JSON text) the rules do not describe, without the
    /// resolvable markers it carries, when the server did not declare that
    /// it resolves calls: the proxy would refuse its resolution, so a host
    /// must not be told to ask for one. `None` when it stays as it is.
    fn unmarked(&self, tool: &str) -> Option<String> {
        // Most tools carry no marker: their text is not parsed.
        let marked = [
            "\"resolve\"",
            "\"dynamicAnnotations\"",
            mcp_resolve_runtime::EXTENSION_ID,
        ]
        .iter()
        .any(|marker| tool.contains(marker));
        if self.server_resolves || !marked {
            return None;
        }
        let Ok(Value::Object(map)) = mcp_resolve_protocol::json::from_str::<Value>(tool) else {
            return None;
        };
        let name = map.get("name").and_then(Value::as_str)?;
        if self.rules.describes(name) {
            return None;
        }
        let unmarked = mcp_resolve_runtime::Dialect::unmark(&map);
        (unmarked != map).then(|| Value::Object(unmarked).to_string())
    }

    /// Whether an answer is likely a listing the proxy annotates as text
    /// (a plain `tools/list` in flight, without a pin, declarations or
    /// verification), so that it is worth reading the result as one with
    /// the envelope. Only a few requests in flight are looked at: with
    /// many, the answer is read in two passes.
    fn expects_listing(&self) -> bool {
        self.guard.pin.is_none()
            && self.guard.declare.is_none()
            && self.guard.verify.is_none()
            && self.pending.len() <= 8
            && self.pending.values().any(|waiting| {
                matches!(waiting.rewrite, Rewrite::Tools { .. }) && waiting.consent.is_none()
            })
    }

    /// A `tools/list` answer without a pin to check: each tool the rules
    /// describe annotated as text (schemas and every other member left as
    /// written, [`ProxyRules::annotate_members`]) and spliced back in; the
    /// listed static annotations remembered; with `listed_for`, the tools a
    /// token granting those scopes cannot call cut out. `None` when nothing
    /// changes.
    fn annotated_list<'t>(
        &mut self,
        text: &'t str,
        tools: Vec<(&'t str, Option<raw::Tool<'t>>)>,
        marked: bool,
        listed_for: Option<&BTreeSet<String>>,
    ) -> OnText {
        let mut annotated = Vec::with_capacity(tools.len());
        let mut cut = Vec::new();
        for (at, (tool, read)) in tools.iter().enumerate() {
            let Some(raw::Tool {
                members,
                annotations,
            }) = read
            else {
                continue;
            };
            let Some(name) = members.get("name").and_then(raw::string_of) else {
                if let Some(unmarked) = self.unmarked(tool) {
                    annotated.push((*tool, unmarked));
                }
                continue;
            };
            if listed_for.is_some_and(|granted| !judge::listed_to(self.rules, &name, granted)) {
                cut.push(at);
                continue;
            }
            if self.rules.annotate_members(
                tool,
                &name,
                members,
                annotations.as_ref(),
                marked,
                &mut annotated,
            ) {
                continue;
            }
            // (Only a call to a tool the rules do not describe is judged by
            // what the server lists.)
            remember_listed(&mut self.listed, &name, annotations.as_ref());
            if let Some(unmarked) = self.unmarked(tool) {
                annotated.push((*tool, unmarked));
            }
        }
        if !cut.is_empty() {
            let texts: Vec<&str> = tools.iter().map(|(tool, _)| *tool).collect();
            let Some(cuts) = raw::cuts(text, &texts, &cut) else {
                return OnText::Tree;
            };
            annotated.extend(cuts.into_iter().map(|c| (c, String::new())));
            annotated.sort_by_key(|(part, _)| part.as_ptr() as usize);
        }
        if annotated.is_empty() {
            return OnText::Answer(None);
        }
        match raw::splice_all(text, &annotated) {
            None if !cut.is_empty() => OnText::Tree,
            answer => OnText::Answer(answer),
        }
    }

    /// `notifications/tools/list_changed` while the guard follows the list:
    /// held back, and the proxy reads the list (once more after the
    /// current reading when one is under way; a server that repeats the
    /// notice cannot grow what the proxy holds).
    fn list_changed(&mut self, notification: String, clock: Clock, out: &mut Vec<Effect>) {
        self.verification.changed();
        match &mut self.relist {
            Some(listing) => {
                listing.again = true;
                listing.held.get_or_insert(notification);
            }
            None => {
                self.relists += 1;
                let listing = Relist::start(
                    self.relists,
                    Some(notification),
                    self.list_meta.as_ref(),
                    self.timeout,
                    clock.now,
                );
                out.push(Effect::Server(listing.request(None)));
                self.relist = Some(listing);
            }
        }
    }

    /// A page of the proxy's own listing (`result`, its JSON text, when the
    /// answer is a result): remembered and checked by the pin; then the
    /// next page is asked for, or the held notification goes to the host.
    pub(super) fn listing_page(
        &mut self,
        result: Option<String>,
        text: &str,
        clock: Clock,
        out: &mut Vec<Effect>,
    ) {
        let mut next = None;
        let fresh = self.relist.as_ref().is_some_and(Relist::fresh);
        match result.and_then(|r| mcp_resolve_protocol::json::from_str::<Value>(&r).ok()) {
            Some(raw) => {
                remember_listing(&mut self.listed, &raw);
                // The form the host is shown: with the extension's markers
                // (what the pin checks), or, with a signing key, the form
                // the host listed last, which the hashes cover.
                let marked = self.guard.declare.is_none() || self.declared.marked;
                self.shown_listing(&raw, marked, fresh, out);
                next = raw
                    .get("nextCursor")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            None => out.push(Effect::Log(format!(
                "the server did not list its tools for the proxy: {}",
                excerpt(text)
            ))),
        }
        let request = self
            .relist
            .as_mut()
            .and_then(|listing| listing.next(next, clock.now));
        match request {
            Some(request) => out.push(Effect::Server(request)),
            None => {
                if let Some(listing) = self.relist.take() {
                    self.listing_read(listing, clock, out);
                }
            }
        }
    }

    /// The proxy's own listing is read: the held notification goes to the
    /// host (with a signing key, extended with what changed), and the
    /// manifest requests waiting for it are answered.
    fn listing_read(&mut self, listing: Relist, clock: Clock, out: &mut Vec<Effect>) {
        let Some(declarer) = &self.guard.declare else {
            out.extend(listing.held.map(Effect::Host));
            return;
        };
        let changed = declarer.read(&mut self.declared);
        if let Some(held) = listing.held {
            let extended = crate::declare::Declarer::notification(&held, changed);
            out.push(Effect::Host(extended));
        }
        if !listing.waiting.is_empty() {
            let now = super::unix_seconds(clock);
            let signed = declarer.manifest(&mut self.declared, now).to_string();
            for id in listing.waiting {
                out.push(Effect::Host(super::host::result_line(&id, &signed)));
            }
        }
    }
}

/// A listing annotated on its text ([`Session::annotated_list`]).
enum OnText {
    /// The answer as the host gets it (`None`: as the server wrote it).
    Answer(Option<String>),
    /// Tools to leave out that the text could not cut: the answer is
    /// filtered as a tree instead.
    Tree,
}

/// How many tools a `tools/list` result lists.
fn tool_count(result: &Value) -> u64 {
    result
        .get("tools")
        .and_then(Value::as_array)
        .map_or(0, |tools| tools.len() as u64)
}

/// Remembers the static annotations a `tools/list` result lists (defaults
/// applied), for calls to tools the rules do not describe.
fn remember_listing(listed: &mut HashMap<String, Annotations>, result: &Value) {
    let Some(Value::Array(tools)) = result.get("tools") else {
        return;
    };
    for tool in tools {
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            let annotations = tool
                .get("annotations")
                .and_then(|a| serde_json::from_value(a.clone()).ok())
                .unwrap_or_else(Annotations::defaults);
            listed.insert(name.to_string(), annotations);
        }
    }
}

/// [`remember_listing`] of one tool as written: its name, and its
/// annotations' members when they are an object.
fn remember_listed(
    listed: &mut HashMap<String, Annotations>,
    name: &str,
    annotations: Option<&Members<'_>>,
) {
    let annotations = annotations
        .and_then(|members| {
            Annotations::from_entries(members.0.iter().map(|(hint, raw)| {
                // A member's value as written: `true`, `false`, a string.
                let value = match *raw {
                    "true" => Listed::Bool(true),
                    "false" => Listed::Bool(false),
                    text if text.starts_with('"') => Listed::String,
                    _ => Listed::Other,
                };
                (hint.as_ref(), value)
            }))
            .ok()
        })
        .unwrap_or_else(Annotations::defaults);
    // The same tools listed again: their entries replaced in place.
    match listed.get_mut(name) {
        Some(entry) => *entry = annotations,
        None => {
            listed.insert(name.to_string(), annotations);
        }
    }
}

/// Where the id `raw`, written at `id` in a server's answer of `written`
/// bytes, is in `answer`, what the proxy made of it: moved by as much as
/// the answer grew when it follows `result` (the only part the proxy
/// rewrites); `None` when it is not found there.
fn id_in_answer(
    answer: &str,
    written: usize,
    id: std::ops::Range<usize>,
    result: Option<std::ops::Range<usize>>,
    raw: &str,
) -> Option<std::ops::Range<usize>> {
    let grew = answer.len() as isize - written as isize;
    let moved = match result {
        Some(result) if id.start >= result.end => grew,
        Some(_) => 0,
        None if grew == 0 => 0,
        None => return None,
    };
    let start = id.start.checked_add_signed(moved)?;
    let end = id.end.checked_add_signed(moved)?;
    let at = start..end;
    (answer.get(at.clone()) == Some(raw)).then_some(at)
}

/// Where a progress notification's `progressToken` is written in `text`
/// (the notification; `params`, its params, a slice of it), and the token's
/// `id_key`: the member as a parsed object has it (its last value, a name
/// with escapes read), read as members once.
fn progress_token(
    text: &str,
    params: mcp_resolve_protocol::Raw<'_>,
) -> Option<(std::ops::Range<usize>, String)> {
    let token = Members::of(params.get())?.get("progressToken")?;
    let key = id_key(&mcp_resolve_protocol::json::from_str::<Value>(token).ok()?);
    Some((range_in(text, token)?, key))
}
