//! What the session needs from the machine and never reads itself (the
//! layering test holds its source to that): the clocks, and the operating
//! system's randomness for sealed states' nonces and ids and for
//! telemetry's span and trace ids. The transports read them and hand them
//! in.

use mcp_resolve_proxy_core::state::NoEntropy;
use std::time::{Instant, SystemTime};

use crate::session::Clock;

/// The system's clocks, now.
pub fn clock() -> Clock {
    Clock {
        now: Instant::now(),
        wall: SystemTime::now(),
    }
}

/// The operating system's randomness: what the proxy seals with.
pub fn os_entropy(bytes: &mut [u8]) -> Result<(), NoEntropy> {
    getrandom::fill(bytes).map_err(|e| NoEntropy(e.to_string()))
}

/// Span and trace ids for the session's telemetry (`session::Ids`), from
/// the operating system's randomness, read 64 at a time (one system call
/// per 64 ids, not one per id: a request takes three).
pub fn random_ids() -> crate::session::Ids {
    const POOL: usize = 64;
    let mut pool = [0u8; POOL * 16];
    let mut next = POOL;
    Box::new(move || {
        if next == POOL {
            if getrandom::fill(&mut pool).is_err() {
                // No randomness from the system: one id at a time from
                // uuid's source, which says why if it fails too.
                return uuid::Uuid::new_v4().as_u128();
            }
            next = 0;
        }
        let mut id = [0u8; 16];
        id.copy_from_slice(&pool[next * 16..next * 16 + 16]);
        next += 1;
        u128::from_le_bytes(id)
    })
}
