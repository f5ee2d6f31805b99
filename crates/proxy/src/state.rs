//! Sealed request states (`mcp_resolve_proxy_core::state`), with what they
//! need from the machine: the key files of `--state-key-file`, and the
//! operating system's randomness for keys, nonces and ids
//! ([`crate::machine`]).

use std::path::Path;

use crate::machine::os_entropy;

pub use mcp_resolve_proxy_core::state::*;

/// A key file's trouble, or the system's.
#[derive(Debug, thiserror::Error)]
pub enum StateKeyError {
    /// The file could not be read.
    #[error("cannot read the state key `{path}`: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not 32 bytes written as 64 hex digits.
    #[error(
        "the state key `{path}` is not 32 bytes written as 64 hexadecimal digits (make one with `mcp-resolve keygen --state -o NAME`)"
    )]
    Malformed {
        /// The file.
        path: String,
    },
    /// The system gave no randomness for a key.
    #[error("no randomness from the operating system: {0}")]
    Random(String),
}

/// One random key, this process's only: states no other instance opens.
pub fn random_keys() -> StateKeys {
    let mut key = [0u8; 32];
    if getrandom::fill(&mut key).is_err() {
        // Without the system's randomness no state can be sealed
        // safely: a key of uuid's source, which panics with the reason
        // rather than seal with a guessable key.
        key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    }
    StateKeys::new(&[key], os_entropy)
}

/// Keys from files (`--state-key-file`): the first seals, all open.
pub fn keys_from_files(paths: &[impl AsRef<Path>]) -> Result<StateKeys, StateKeyError> {
    let mut keys = Vec::with_capacity(paths.len());
    for path in paths {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read(path).map_err(|source| StateKeyError::Read {
            path: shown.clone(),
            source,
        })?;
        keys.push(parse_key(&text).ok_or(StateKeyError::Malformed { path: shown })?);
    }
    Ok(StateKeys::new(&keys, os_entropy))
}

/// A new key file's text: 32 random bytes as hex, and a newline.
pub fn new_key_text() -> Result<String, StateKeyError> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| StateKeyError::Random(e.to_string()))?;
    Ok(key_text(&key))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn new_key_files_read_back_and_differ() {
        let text = new_key_text().unwrap();
        assert_eq!(text.len(), 65);
        assert!(parse_key(text.as_bytes()).is_some());
        assert_ne!(new_key_text().unwrap(), text);
    }

    #[test]
    fn key_files_are_read_or_refused_by_name() {
        let dir =
            std::env::temp_dir().join(format!("mcp-resolve-state-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.key");
        std::fs::write(&good, new_key_text().unwrap()).unwrap();
        let bad = dir.join("bad.key");
        std::fs::write(&bad, "0011").unwrap();
        let keys = keys_from_files(&[&good]).unwrap();
        let ticket = Ticket {
            id: keys.new_id().unwrap(),
            tool: "t".into(),
            arguments: arguments_digest(&serde_json::json!({})),
            question: "q".into(),
            expires: 10,
            server_state: None,
        };
        let sealed = keys.seal(&ticket).unwrap();
        assert_eq!(keys.open(&sealed, 0).unwrap(), ticket);
        assert!(
            matches!(keys_from_files(&[&good, &bad]), Err(StateKeyError::Malformed { path }) if path.ends_with("bad.key"))
        );
        assert!(matches!(
            keys_from_files(&[dir.join("none.key")]),
            Err(StateKeyError::Read { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
