//! What several proxy instances share (`--redis URL`):
//!
//! - that a 2026-07-28 request state was used, so a retry replayed to
//!   another instance is refused there too. A state is claimed with one
//!   atomic `SET … NX EX` (set if absent, expiring with the state); whoever
//!   sets it first uses the state, everyone after finds it spent;
//! - with a pin, each tool as a server behind any instance first listed it
//!   (`SET … NX` then `MGET`), so a server that lists a tool changed from
//!   what another instance's server listed is caught too.
//!
//! The store is reached from the transport (the relay), never from the
//! sans-IO session: the relay claims the state of a host's retry before
//! handing the retry to its session, with the verdict beside it. A store
//! that does not answer within [`TIMEOUT`] makes the verdict
//! [`Claim::Unavailable`]: the ask is refused (fail closed), everything
//! else goes on.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

/// How long a claim may take, connecting included.
pub const TIMEOUT: Duration = Duration::from_secs(1);

/// How long a tool's first listing is kept (renewed by nothing: a server
/// that changes a tool on purpose is trusted again a day later, or at once
/// when its keys are deleted).
pub const BASELINE_TTL: Duration = Duration::from_secs(86_400);

/// Each tool as a server behind any instance first listed it, by name; or
/// why the store could not say.
pub use mcp_resolve_proxy_core::pinned::Baselines;

pub use mcp_resolve_proxy_core::state::Claim;

/// Why `--redis` was refused at start.
#[derive(Debug, thiserror::Error)]
#[error("--redis {url}: {message}")]
pub struct SharedError {
    url: String,
    message: String,
}

/// The shared store.
pub struct Shared {
    client: redis::Client,
    /// Made on first use (inside the runtime), then reconnecting on its own.
    manager: OnceCell<ConnectionManager>,
    /// Where it is, without credentials, for messages.
    shown: String,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("at", &self.shown).finish()
    }
}

/// The key of a state's claim.
fn spent_key(id: &str) -> String {
    format!("mcp-resolve:spent:{id}")
}

impl Shared {
    /// The store at `url` (`redis://HOST:PORT/DB`, `rediss://…`,
    /// `redis+unix:///PATH`); nothing is connected yet.
    pub fn open(url: &str) -> Result<Shared, SharedError> {
        let client = redis::Client::open(url).map_err(|e| SharedError {
            url: shown(url),
            message: e.to_string(),
        })?;
        Ok(Shared {
            client,
            manager: OnceCell::new(),
            shown: shown(url),
        })
    }

    /// Where the store is (credentials left out).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    async fn manager(&self) -> redis::RedisResult<ConnectionManager> {
        self.manager
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(TIMEOUT))
                    .set_response_timeout(Some(TIMEOUT))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(200));
                self.client.get_connection_manager_lazy(config)
            })
            .await
            .cloned()
    }

    /// Claims state `id` for `ttl` (at least a second): set if absent.
    pub async fn claim(&self, id: &str, ttl: Duration) -> Claim {
        let attempt = async {
            let mut connection = self.manager().await?;
            redis::cmd("SET")
                .arg(spent_key(id))
                .arg(1)
                .arg("NX")
                .arg("EX")
                .arg(ttl.as_secs().max(1))
                .query_async::<Option<String>>(&mut connection)
                .await
        };
        match tokio::time::timeout(TIMEOUT * 2, attempt).await {
            Ok(Ok(Some(_))) => Claim::Claimed,
            Ok(Ok(None)) => Claim::Spent,
            Ok(Err(e)) => Claim::Unavailable(e.to_string()),
            Err(_) => Claim::Unavailable(format!("no answer within {}s", (TIMEOUT * 2).as_secs())),
        }
    }
}

impl Shared {
    /// Records `tools` (name, the tool as listed) as first listed by
    /// `server` where no instance did before, and returns each tool's
    /// first listing.
    pub async fn baselines(&self, server: &str, tools: &[(String, Value)]) -> Baselines {
        if tools.is_empty() {
            return Ok(HashMap::new());
        }
        let keys: Vec<String> = tools
            .iter()
            .map(|(name, _)| format!("mcp-resolve:baseline:{server}:{name}"))
            .collect();
        let attempt = async {
            let mut connection = self.manager().await?;
            let mut pipe = redis::pipe();
            for (key, (_, tool)) in keys.iter().zip(tools) {
                pipe.cmd("SET")
                    .arg(key)
                    .arg(tool.to_string())
                    .arg("NX")
                    .arg("EX")
                    .arg(BASELINE_TTL.as_secs())
                    .ignore();
            }
            pipe.cmd("MGET").arg(&keys);
            pipe.query_async::<(Vec<Option<String>>,)>(&mut connection)
                .await
        };
        match tokio::time::timeout(TIMEOUT * 2, attempt).await {
            Ok(Ok((firsts,))) => Ok(tools
                .iter()
                .zip(firsts)
                .filter_map(|((name, _), first)| {
                    Some((
                        name.clone(),
                        mcp_resolve_protocol::json::from_str(&first?).ok()?,
                    ))
                })
                .collect()),
            Ok(Err(e)) => Err(format!(
                "the shared store ({}) did not answer: {e}",
                self.shown
            )),
            Err(_) => Err(format!(
                "the shared store ({}) did not answer within {}s",
                self.shown,
                (TIMEOUT * 2).as_secs()
            )),
        }
    }
}

/// `url` without a password.
fn shown(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_stay_out_of_messages() {
        assert_eq!(
            shown("redis://:secret@10.0.0.1:6379/0"),
            "redis://…@10.0.0.1:6379/0"
        );
        assert_eq!(
            shown("redis+unix:///run/redis.sock"),
            "redis+unix:///run/redis.sock"
        );
        assert!(Shared::open("not a url").is_err());
        assert_eq!(spent_key("ab"), "mcp-resolve:spent:ab");
    }
}
