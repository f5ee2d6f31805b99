//! `keygen` and `verify`: publishers' signing keys, and the check a host
//! makes of a signed signature document.

use std::io::Write;
use std::path::{Path, PathBuf};

#[cfg(feature = "proxy")]
use mcp_resolve_host::Signature;
#[cfg(feature = "proxy")]
use mcp_resolve_host::jws::PublicKey;
use mcp_resolve_host::jws::{Algorithm, PrivateKey};

use super::{FAILURE, OK, USAGE, read_input};

pub(crate) use mcp_resolve_host::jws::with_extension;

/// Writes `text` to a new file (or over one, with `force`), readable by its
/// owner only when `private`.
fn create(path: &Path, text: &str, private: bool, force: bool) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let mut file = options.open(path)?;
        // An existing file keeps its mode through `truncate`: set it.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        return file.write_all(text.as_bytes());
    }
    let _ = private;
    options.open(path)?.write_all(text.as_bytes())
}

/// `keygen --state`: NAME.key, 32 random bytes as hex (mode 0600), what
/// `proxy --state-key-file` reads.
#[cfg(feature = "proxy")]
pub(crate) fn state_keygen(name: &Path, force: bool) -> u8 {
    let path = with_extension(name, "key");
    if !force && path.exists() {
        eprintln!(
            "error: `{}` exists; it is left as it is (--force replaces it)",
            path.display()
        );
        return USAGE;
    }
    let text = match mcp_resolve_proxy::state::new_key_text() {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: {e}");
            return FAILURE;
        }
    };
    if let Err(e) = create(&path, &text, true, force) {
        eprintln!("error: cannot write `{}`: {e}", path.display());
        return USAGE;
    }
    eprintln!(
        "wrote {} (the request-state key: keep it secret; give it to every proxy instance with --state-key-file)",
        path.display()
    );
    OK
}

pub(crate) fn keygen(name: &Path, algorithm: Algorithm, force: bool) -> u8 {
    let (pem_path, jwk_path) = (with_extension(name, "pem"), with_extension(name, "jwk"));
    if !force {
        for path in [&pem_path, &jwk_path] {
            if path.exists() {
                eprintln!(
                    "error: `{}` exists; it is left as it is (--force replaces it)",
                    path.display()
                );
                return USAGE;
            }
        }
    }
    let key = match PrivateKey::generate(algorithm) {
        Ok(key) => key,
        Err(e) => {
            eprintln!("error: {e}");
            return FAILURE;
        }
    };
    let pem = match key.to_pem() {
        Ok(pem) => pem,
        Err(e) => {
            eprintln!("error: {e}");
            return FAILURE;
        }
    };
    let jwk = format!(
        "{}\n",
        serde_json::to_string_pretty(&key.public().to_jwk()).unwrap_or_default()
    );
    for (path, text, private) in [(&pem_path, pem.as_str(), true), (&jwk_path, &jwk, false)] {
        if let Err(e) = create(path, text, private, force) {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            return USAGE;
        }
    }
    eprintln!(
        "wrote {} (the private key: keep it secret) and {} (the public key: publish it)",
        pem_path.display(),
        jwk_path.display()
    );
    println!("{}", key.public().kid());
    OK
}

/// Reads private keys (PKCS#8 PEM files).
pub(crate) fn private_keys(paths: &[PathBuf]) -> Result<Vec<PrivateKey>, u8> {
    paths
        .iter()
        .map(|path| {
            let text = read_input(path)?;
            PrivateKey::from_pem(&text).map_err(|e| {
                eprintln!("error: {}: {e}", path.display());
                USAGE
            })
        })
        .collect()
}

/// Reads public keys: JWK files and JWKS files.
#[cfg(feature = "proxy")]
pub(crate) fn public_keys(paths: &[&Path]) -> Result<Vec<PublicKey>, u8> {
    let mut keys = Vec::new();
    for path in paths {
        let text = read_input(path)?;
        keys.extend(mcp_resolve_host::jws::read_keys(&text).map_err(|e| {
            eprintln!("error: {}: {e}", path.display());
            USAGE
        })?);
    }
    Ok(keys)
}

/// Public keys from JWK and JWKS files, or from JWKS URLs (an argument
/// that starts with `https://` or `http://`, fetched with
/// [`mcp_resolve_proxy::jwks::fetch`]'s protections; `loopback`: loopback
/// addresses allowed).
#[cfg(feature = "proxy")]
pub(crate) fn jwks_keys(sources: &[PathBuf], loopback: bool) -> Result<Vec<PublicKey>, u8> {
    let mut keys = Vec::new();
    for source in sources {
        let text = source.to_string_lossy();
        if text.starts_with("https://") || text.starts_with("http://") {
            match mcp_resolve_proxy::jwks::fetch_blocking(&text, loopback) {
                Ok(fetched) => keys.extend(fetched),
                Err(e) => {
                    eprintln!("error: {e}");
                    return Err(USAGE);
                }
            }
        } else {
            keys.extend(public_keys(&[source.as_path()])?);
        }
    }
    Ok(keys)
}

/// [`jwks_keys`] of `sources`; without any, the keys `resource`'s
/// Protected Resource Metadata names (`mcp_signing_jwks_uri`,
/// [`mcp_resolve_proxy::jwks::discover`]).
#[cfg(feature = "proxy")]
pub(crate) fn discovered_or(
    sources: &[PathBuf],
    resource: &str,
    loopback: bool,
) -> Result<Vec<PublicKey>, u8> {
    if !sources.is_empty() {
        return jwks_keys(sources, loopback);
    }
    mcp_resolve_proxy::jwks::discover_blocking(resource, loopback).map_err(|e| {
        eprintln!("error: the signing keys of `{resource}` (no --jwks given): {e}");
        USAGE
    })
}

/// Reads a signature document whose fingerprint holds, and checks its
/// publisher's signature (`jws`, default `DOCUMENT.jws`) against `keys`
/// ([`mcp_resolve_proxy::pin::verified_document`]): the document and what
/// verified it, or the exit code and why not.
#[cfg(feature = "proxy")]
pub(crate) fn verified_document(
    document: &Path,
    jws: Option<&Path>,
    keys: &[PublicKey],
) -> Result<(Signature, String), (u8, String)> {
    mcp_resolve_proxy::pin::verified_document(document, jws, keys, super::document_limit())
        .map_err(|e| (if e.is_usage() { USAGE } else { FAILURE }, e.to_string()))
}

#[cfg(feature = "proxy")]
pub(crate) fn verify(document: &Path, jws: Option<&Path>, key: &[PathBuf], sets: &[PathBuf]) -> u8 {
    let paths: Vec<&Path> = key.iter().chain(sets).map(PathBuf::as_path).collect();
    let keys = match public_keys(&paths) {
        Ok(keys) => keys,
        Err(code) => return code,
    };
    if keys.is_empty() {
        eprintln!("error: no key given (--key JWK or --keys JWKS)");
        return USAGE;
    }
    match verified_document(document, jws, &keys) {
        Ok((signature, by)) => {
            println!(
                "{}: {}, {by}",
                document.display(),
                signature.fingerprint().unwrap_or_default()
            );
            OK
        }
        Err((code, why)) => {
            eprintln!("error: {why}");
            code
        }
    }
}
