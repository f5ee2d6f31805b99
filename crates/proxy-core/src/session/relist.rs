//! The proxy's own reading of the server's tools after
//! `notifications/tools/list_changed` (or for a `declarations/manifest`
//! asked before the host listed anything): its `tools/list` requests (a
//! page at a time), and what waits for the listing — the notification held
//! back from the host, so the pin and the policy judge the calls that
//! follow by what the server lists now, and the host's requests for the
//! signed manifest.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mcp_resolve_protocol::id_key;

/// One reading of the server's tools.
pub(super) struct Relist {
    /// Which reading this is (request ids are `mcp-resolve-list-N-P`).
    n: u64,
    /// The page asked for last.
    page: u32,
    /// Another change was announced while this one was read.
    pub(super) again: bool,
    /// The page asked for last starts a reading of the whole list.
    fresh: bool,
    /// The notification held back from the host, if a change started this.
    pub(super) held: Option<String>,
    /// The ids of the host's `declarations/manifest` requests waiting.
    pub(super) waiting: Vec<Value>,
    meta: Option<Value>,
    wait: Duration,
    deadline: Instant,
}

impl Relist {
    /// The most pages read in one listing (a server whose cursors never
    /// end is not followed for ever).
    const MOST_PAGES: u32 = 1000;

    /// Reading `n`, holding `notification` back (if a change started it);
    /// `meta` is the `_meta` of the host's last `tools/list`.
    pub(super) fn start(
        n: u64,
        notification: Option<String>,
        meta: Option<&Value>,
        timeout: Option<Duration>,
        now: Instant,
    ) -> Relist {
        let wait = timeout.unwrap_or(Duration::from_secs(30));
        Relist {
            n,
            page: 0,
            again: false,
            fresh: true,
            held: notification,
            waiting: Vec::new(),
            meta: meta.cloned(),
            wait,
            deadline: now + wait,
        }
    }

    /// When the page asked for last is given up.
    pub(super) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the page asked for last starts a reading of the whole list.
    pub(super) fn fresh(&self) -> bool {
        self.fresh
    }

    fn id(&self) -> String {
        format!("mcp-resolve-list-{}-{}", self.n, self.page)
    }

    /// The key of the id of the page asked for last.
    pub(super) fn key(&self) -> String {
        id_key(&Value::String(self.id()))
    }

    /// The request for the current page, at `cursor`.
    pub(super) fn request(&self, cursor: Option<&str>) -> String {
        let mut params = serde_json::Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), Value::String(cursor.into()));
        }
        if let Some(meta) = &self.meta {
            params.insert("_meta".into(), meta.clone());
        }
        json!({"jsonrpc": "2.0", "id": self.id(), "method": "tools/list", "params": params})
            .to_string()
    }

    /// The request that goes on after a page (the next page, or the list
    /// from the start when another change was announced meanwhile), or
    /// `None` when the listing is read.
    pub(super) fn next(&mut self, cursor: Option<String>, now: Instant) -> Option<String> {
        let cursor = cursor.filter(|_| self.page + 1 < Self::MOST_PAGES);
        if cursor.is_none() && !self.again {
            return None;
        }
        self.fresh = cursor.is_none();
        if cursor.is_none() {
            self.again = false;
        }
        self.page += 1;
        self.deadline = now + self.wait;
        Some(self.request(cursor.as_deref()))
    }
}
