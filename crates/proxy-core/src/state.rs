//! Sealed request state: what the proxy puts in a 2026-07-28
//! `input_required` answer's `requestState`, so that any proxy instance
//! holding the key can check the host's retry — none keeps the question in
//! memory.
//!
//! A state is authenticated encryption (XChaCha20-Poly1305, a random
//! 192-bit nonce per state) of what the question was about: the tool, a
//! digest of the arguments (SHA-256 of their RFC 8785 canonical form), the
//! question, the expiry, whether the user accepted already, and the
//! server's own `requestState` (kept opaque inside). It is written
//! `mcp-resolve.v1.` and the base64url of the key's id (4 bytes), the nonce
//! and the ciphertext. Keys come from `--state-key-file` (the first seals;
//! every one given opens, so a key can be rotated with the old one still
//! read), else one random key per process; the proxy crate reads the files
//! and the operating system's randomness, and hands both in
//! ([`StateKeys::new`]): nothing here reads a file or the OS's entropy.
//!
//! What a state cannot do is be used once only on its own: that is the
//! [`Spent`] set's (per process; shared across instances with Redis).

use std::collections::HashMap;
use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What every sealed state begins with.
pub const PREFIX: &str = "mcp-resolve.v1.";

/// The additional data every state is sealed with (binds the format).
const AAD: &[u8] = b"mcp-resolve request state v1";

/// The most spent states remembered per process; past it the one closest to
/// expiring is forgotten (it can be replayed only until it expires).
const MOST_SPENT: usize = 100_000;

/// Where a state's nonce and id come from: fills the bytes with randomness
/// a guess cannot find (the proxy passes the operating system's), or says
/// why it cannot.
pub type Entropy = fn(&mut [u8]) -> Result<(), NoEntropy>;

/// The entropy source gave no randomness: its own words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoEntropy(pub String);

/// Why no state was sealed.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// The entropy source gave no randomness for a nonce or an id.
    #[error("no randomness from the operating system: {0}")]
    Random(#[from] NoEntropy),
    /// There is no key to seal with.
    #[error("no key to seal request states with")]
    NoKey,
    /// The cipher refused (it does not, for a ticket's size).
    #[error("the cipher refused to seal")]
    Cipher,
}

/// What a request state says, sealed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ticket {
    /// Its own id (what single use spends): 16 random bytes, hex.
    #[serde(rename = "i")]
    pub id: String,
    /// The tool called.
    #[serde(rename = "t")]
    pub tool: String,
    /// The SHA-256 of the arguments' canonical form, hex.
    #[serde(rename = "a")]
    pub arguments: String,
    /// The question: the proxy's own (`mcp-resolve/confirm`), or the
    /// server's after the user accepted (`server`).
    #[serde(rename = "q")]
    pub question: String,
    /// When it expires, in seconds since the epoch.
    #[serde(rename = "e")]
    pub expires: u64,
    /// The server's own `requestState`, after the user accepted and the
    /// server asked a question of its own.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub server_state: Option<Value>,
}

/// Why a state was not opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unsealed {
    /// Not a proxy state (no prefix): the server's, or garbage.
    NotOurs,
    /// Sealed with a key this proxy does not hold.
    Foreign,
    /// Changed, cut, or not sealed by a proxy at all.
    Tampered,
    /// Past its expiry.
    Expired,
}

impl Unsealed {
    /// The audit outcome, and the reason the host is given.
    pub fn outcome(self) -> (&'static str, &'static str) {
        match self {
            Unsealed::NotOurs | Unsealed::Tampered => (
                "tampered",
                "carries a request state that is not one the proxy sealed, or was changed (call again to be asked)",
            ),
            Unsealed::Foreign => (
                "foreign",
                "carries a request state sealed with a key this proxy does not hold (call again to be asked)",
            ),
            Unsealed::Expired => (
                "expired",
                "carries a request state that has expired (call again to be asked)",
            ),
        }
    }
}

/// The keys request states are sealed and opened with, and the entropy
/// their nonces and ids are drawn from.
pub struct StateKeys {
    /// The first seals; every one opens.
    keys: Vec<([u8; 4], XChaCha20Poly1305)>,
    entropy: Entropy,
}

impl std::fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<String> = self.keys.iter().map(|(id, _)| hex(id)).collect();
        f.debug_struct("StateKeys").field("ids", &ids).finish()
    }
}

impl StateKeys {
    /// Keys of 32 bytes each (the first seals, all open), drawing nonces
    /// and ids from `entropy`. With no key, nothing seals and nothing
    /// opens.
    pub fn new(keys: &[[u8; 32]], entropy: Entropy) -> StateKeys {
        StateKeys {
            entropy,
            keys: keys
                .iter()
                .map(|key| {
                    let id: [u8; 4] = Sha256::digest(key)[..4].try_into().unwrap_or([0; 4]);
                    let cipher = XChaCha20Poly1305::new_from_slice(key)
                        .unwrap_or_else(|_| unreachable!("a 32-byte key"));
                    (id, cipher)
                })
                .collect(),
        }
    }

    /// `ticket`, sealed with the first key.
    pub fn seal(&self, ticket: &Ticket) -> Result<String, SealError> {
        let (id, cipher) = self.keys.first().ok_or(SealError::NoKey)?;
        let mut nonce = [0u8; 24];
        (self.entropy)(&mut nonce)?;
        let plain = serde_json::to_vec(ticket).unwrap_or_default();
        let sealed = cipher
            .encrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: &plain,
                    aad: AAD,
                },
            )
            .map_err(|_| SealError::Cipher)?;
        let mut bytes = Vec::with_capacity(4 + 24 + sealed.len());
        bytes.extend_from_slice(id);
        bytes.extend_from_slice(&nonce);
        bytes.extend_from_slice(&sealed);
        Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// Opens a state at `now` (seconds since the epoch).
    pub fn open(&self, state: &str, now: u64) -> Result<Ticket, Unsealed> {
        let body = state.strip_prefix(PREFIX).ok_or(Unsealed::NotOurs)?;
        let bytes = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| Unsealed::Tampered)?;
        if bytes.len() < 4 + 24 + 16 {
            return Err(Unsealed::Tampered);
        }
        let (id, rest) = bytes.split_at(4);
        let (nonce, sealed) = rest.split_at(24);
        let (_, cipher) = self
            .keys
            .iter()
            .find(|(key_id, _)| key_id[..] == *id)
            .ok_or(Unsealed::Foreign)?;
        let nonce: [u8; 24] = nonce.try_into().map_err(|_| Unsealed::Tampered)?;
        let plain = cipher
            .decrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: sealed,
                    aad: AAD,
                },
            )
            .map_err(|_| Unsealed::Tampered)?;
        let ticket: Ticket =
            mcp_resolve_protocol::json::from_slice(&plain).map_err(|_| Unsealed::Tampered)?;
        if ticket.expires <= now {
            return Err(Unsealed::Expired);
        }
        Ok(ticket)
    }

    /// A new state id: 16 random bytes, hex.
    pub fn new_id(&self) -> Result<String, SealError> {
        let mut id = [0u8; 16];
        (self.entropy)(&mut id)?;
        Ok(hex(&id))
    }
}

/// The id and expiry of the proxy's request state in the host's message
/// `text`, if it is a `tools/call` retry carrying one that opens: what the
/// transport claims in the shared store before the session sees it.
pub fn retry_state(keys: &StateKeys, text: &str, now: u64) -> Option<(String, u64)> {
    if !text.contains(PREFIX) {
        return None;
    }
    let message = mcp_resolve_protocol::Envelope::of(text)?;
    if message.method.as_deref() != Some("tools/call") {
        return None;
    }
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "requestState", borrow)]
        request_state: Option<std::borrow::Cow<'a, str>>,
    }
    let params: Params<'_> = mcp_resolve_protocol::json::from_str(message.params?.get()).ok()?;
    let ticket = keys.open(&params.request_state?, now).ok()?;
    Some((ticket.id, ticket.expires))
}

/// A key file's 32 bytes: 64 hex digits, surrounding whitespace allowed.
pub fn parse_key(text: &[u8]) -> Option<[u8; 32]> {
    let text = std::str::from_utf8(text).ok()?.trim();
    if text.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(key)
}

/// A key file's text: the key's 32 bytes as hex, and a newline.
pub fn key_text(key: &[u8; 32]) -> String {
    format!("{}\n", hex(key))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The digest a state binds the arguments with: SHA-256 of their RFC 8785
/// canonical form, hex (member order and spacing do not matter).
pub fn arguments_digest(arguments: &Value) -> String {
    hex(&Sha256::digest(
        mcp_resolve_host::jcs::canonical(arguments).as_bytes(),
    ))
}

/// What the store several proxy instances share (`--redis`) said of a
/// state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// This instance is the first to use it.
    Claimed,
    /// Used already (by any instance).
    Spent,
    /// The store did not answer: why.
    Unavailable(String),
}

/// The states spent in this process (each is used once), until they expire.
#[derive(Debug, Default)]
pub struct Spent {
    ids: Mutex<HashMap<String, u64>>,
}

impl Spent {
    /// Spends state `id` (expiring at `expires`) at `now`: `false` when it
    /// was spent already.
    pub fn spend(&self, id: &str, expires: u64, now: u64) -> bool {
        let Ok(mut ids) = self.ids.lock() else {
            // A poisoned set cannot say: refuse (fail closed).
            return false;
        };
        if ids.contains_key(id) {
            return false;
        }
        if ids.len() >= MOST_SPENT {
            ids.retain(|_, e| *e > now);
            if ids.len() >= MOST_SPENT
                && let Some(oldest) = ids.iter().min_by_key(|(_, e)| **e).map(|(k, _)| k.clone())
            {
                ids.remove(&oldest);
            }
        }
        ids.insert(id.to_string(), expires);
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// Distinct bytes on every call (a counter): what the tests need of
    /// entropy, without the operating system's.
    pub(crate) fn counter(bytes: &mut [u8]) -> Result<(), NoEntropy> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = n.to_le_bytes()[i % 8] ^ u8::try_from(i % 256).unwrap();
        }
        Ok(())
    }

    fn keyed(bytes: &[[u8; 32]]) -> StateKeys {
        StateKeys::new(bytes, counter)
    }

    fn ticket() -> Ticket {
        Ticket {
            id: "00112233445566778899aabbccddeeff".into(),
            tool: "manage_files".into(),
            arguments: arguments_digest(&json!({"path": "a", "action": "delete"})),
            question: "mcp-resolve/confirm".into(),
            expires: 1_000,
            server_state: None,
        }
    }

    #[test]
    fn a_sealed_state_opens_with_its_key_until_it_expires() {
        let keys = keyed(&[[7; 32]]);
        let state = keys.seal(&ticket()).unwrap();
        assert!(state.starts_with(PREFIX));
        assert_eq!(keys.open(&state, 999).unwrap(), ticket());
        assert_eq!(keys.open(&state, 1_000), Err(Unsealed::Expired));
        // Two seals of one ticket differ (a nonce each).
        assert_ne!(keys.seal(&ticket()).unwrap(), state);
        // Nothing of the ticket shows.
        assert!(!state.contains("manage_files"));
    }

    #[test]
    fn tampered_foreign_and_stray_states_are_told_apart() {
        let keys = keyed(&[[7; 32]]);
        let state = keys.seal(&ticket()).unwrap();
        // Every byte of the body changed in turn: never opens.
        let body = state.strip_prefix(PREFIX).unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(body).unwrap();
        for i in 4..bytes.len() {
            bytes[i] ^= 1;
            let changed = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&bytes));
            assert_eq!(keys.open(&changed, 0), Err(Unsealed::Tampered), "byte {i}");
            bytes[i] ^= 1;
        }
        assert_eq!(
            keys.open(&state[..state.len() - 3], 0),
            Err(Unsealed::Tampered)
        );
        assert_eq!(keys.open("mcp-resolve.v1.!!", 0), Err(Unsealed::Tampered));
        assert_eq!(keys.open("the server's own", 0), Err(Unsealed::NotOurs));
        let other = keyed(&[[8; 32]]);
        assert_eq!(other.open(&state, 0), Err(Unsealed::Foreign));
    }

    #[test]
    fn a_rotated_key_still_opens_what_the_old_one_sealed() {
        let old = keyed(&[[1; 32]]);
        let rotated = keyed(&[[2; 32], [1; 32]]);
        let by_old = old.seal(&ticket()).unwrap();
        assert_eq!(rotated.open(&by_old, 0).unwrap(), ticket());
        let by_new = rotated.seal(&ticket()).unwrap();
        assert_eq!(old.open(&by_new, 0), Err(Unsealed::Foreign));
        assert_eq!(keyed(&[[2; 32]]).open(&by_new, 0).unwrap(), ticket());
    }

    #[test]
    fn key_files_are_64_hex_digits() {
        let text = key_text(&[0xa5; 32]);
        assert_eq!(text.len(), 65);
        assert_eq!(parse_key(text.as_bytes()), Some([0xa5; 32]));
        assert!(
            parse_key(b"  00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n")
                .is_some()
        );
        assert!(parse_key(b"0011").is_none());
        assert!(parse_key(&[0xff; 64]).is_none());
        assert!(parse_key("é".repeat(32).as_bytes()).is_none());
    }

    #[test]
    fn arguments_bind_by_content_not_by_spelling() {
        assert_eq!(
            arguments_digest(&json!({"a": 1, "b": [true, "x"]})),
            arguments_digest(
                &mcp_resolve_protocol::json::from_str(r#"{ "b" : [ true,"x" ], "a":1.0 }"#)
                    .unwrap()
            )
        );
        assert_ne!(
            arguments_digest(&json!({"a": 1})),
            arguments_digest(&json!({"a": 2}))
        );
    }

    #[test]
    fn no_randomness_seals_nothing() {
        let keys = StateKeys::new(&[[7; 32]], |_| Err(NoEntropy("none".into())));
        assert!(matches!(keys.seal(&ticket()), Err(SealError::Random(_))));
        assert!(matches!(keys.new_id(), Err(SealError::Random(_))));
        // Without a key, nothing seals either, and the error says so.
        let none = StateKeys::new(&[], counter);
        assert!(matches!(none.seal(&ticket()), Err(SealError::NoKey)));
    }

    #[test]
    fn a_state_is_spent_once() {
        let spent = Spent::default();
        assert!(spent.spend("x", 10, 0));
        assert!(!spent.spend("x", 10, 5));
        assert!(spent.spend("y", 10, 5));
    }
}
