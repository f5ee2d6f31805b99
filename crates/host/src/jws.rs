//! Publisher signatures over signature documents: detached JWS (RFC 7515,
//! appendix F) over exactly the bytes a fingerprint covers
//! ([`fingerprinted_text`](crate::signature::fingerprinted_text)), with
//! Ed25519 (`alg: Ed25519`, RFC 9864; RFC 8037's `EdDSA` is accepted) or
//! P-256 (`ES256`) keys, public keys as JWKs
//! whose `kid` is their RFC 7638 thumbprint.
//!
//! The cryptography is the RustCrypto / dalek crates'; this module only puts
//! their keys and signatures into JOSE's shapes, and refuses what a verifier
//! must refuse: `alg: none`, an unknown algorithm, a critical header it does
//! not understand, a key whose type is not the header's algorithm.
//!
//! ```
//! use mcp_resolve_host::jws::{Algorithm, PrivateKey, verify_detached};
//!
//! let key = PrivateKey::generate(Algorithm::Ed25519)?;
//! let payload = br#"{"tools":[]}"#;
//! let jws = key.sign_detached(payload, 1_795_000_000);
//! let keys = [key.public().clone()];
//! let verified = verify_detached(&jws, payload, &keys)?;
//! assert_eq!(verified.key.kid(), key.public().kid());
//! assert!(verify_detached(&jws, br#"{"tools":[1]}"#, &keys).is_err());
//! # Ok::<(), mcp_resolve_host::jws::JwsError>(())
//! ```

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use p256::ecdsa::signature::{Signer as _, Verifier as _};
use p256::elliptic_curve::Generate;
use serde_json::{Map, Value, json};

/// A signing algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Ed25519: `alg: Ed25519` (RFC 9864's fully specified name; RFC
    /// 8037's `EdDSA` is accepted when verifying).
    Ed25519,
    /// ECDSA on P-256 with SHA-256.
    ES256,
}

impl Algorithm {
    /// The JOSE name (`Ed25519`, `ES256`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ed25519 => "Ed25519",
            Algorithm::ES256 => "ES256",
        }
    }

    /// The name SEP-3140's examples write: RFC 8037's `EdDSA` for
    /// Ed25519, `ES256`.
    pub fn sep_name(self) -> &'static str {
        match self {
            Algorithm::Ed25519 => "EdDSA",
            Algorithm::ES256 => "ES256",
        }
    }

    /// The algorithm of a JOSE name.
    pub fn parse(name: &str) -> Option<Algorithm> {
        match name {
            "Ed25519" | "EdDSA" => Some(Algorithm::Ed25519),
            "ES256" => Some(Algorithm::ES256),
            _ => None,
        }
    }
}

/// Why a key or a signature was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JwsError {
    /// Not a detached compact JWS.
    #[error("malformed JWS: {0}")]
    Malformed(String),
    /// `alg: none`.
    #[error("the JWS says `alg: none`: an unsigned JWS is never accepted")]
    AlgNone,
    /// An algorithm this verifier does not implement.
    #[error(
        "the JWS uses the algorithm `{0}`, which is not supported (Ed25519 — or EdDSA — and ES256 are)"
    )]
    UnknownAlg(String),
    /// A `crit` header (RFC 7515 §4.1.11) names extensions this verifier
    /// does not understand.
    #[error("the JWS marks {0} critical, which this verifier does not understand")]
    Critical(String),
    /// No key given has the JWS's key id (or, without one, its algorithm).
    #[error("no key given is the one that signed: the JWS names key `{0}`")]
    UnknownKey(String),
    /// The key's type is not the header's algorithm.
    #[error("key `{kid}` is an {key} key, but the JWS says `alg: {alg}`")]
    AlgMismatch {
        /// The key.
        kid: String,
        /// The key's algorithm.
        key: &'static str,
        /// The header's.
        alg: String,
    },
    /// The signature does not verify.
    #[error(
        "the signature does not verify with key `{0}`: the document changed after it was signed, or it was signed by another key"
    )]
    BadSignature(String),
    /// None of several signatures verifies.
    #[error("no signature verifies with the keys given: {}", .0.join("; "))]
    NoneVerifies(Vec<String>),
    /// A key that cannot be used.
    #[error("{0}")]
    Key(String),
}

/// A public key, as a JWK with a `kid`.
#[derive(Clone, Debug)]
pub struct PublicKey {
    kid: String,
    key: Verifying,
}

#[derive(Clone, Debug)]
enum Verifying {
    Ed25519(ed25519_dalek::VerifyingKey),
    P256(p256::ecdsa::VerifyingKey),
}

impl PublicKey {
    fn new(key: Verifying) -> PublicKey {
        let mut key = PublicKey {
            kid: String::new(),
            key,
        };
        key.kid = thumbprint(&key.members());
        key
    }

    /// The key a JWK describes (`OKP`/`Ed25519` or `EC`/`P-256`). Its `kid`
    /// is the JWK's own when it has one, else its RFC 7638 thumbprint. A
    /// JWK with a private part (`d`) is refused: give the public key.
    pub fn from_jwk(jwk: &Value) -> Result<PublicKey, JwsError> {
        let text = |name: &str| -> Result<&str, JwsError> {
            jwk.get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| JwsError::Key(format!("the JWK has no string member `{name}`")))
        };
        let bytes = |name: &str, len: usize| -> Result<Vec<u8>, JwsError> {
            let bytes = B64
                .decode(text(name)?)
                .map_err(|e| JwsError::Key(format!("the JWK's `{name}` is not base64url: {e}")))?;
            if bytes.len() != len {
                return Err(JwsError::Key(format!(
                    "the JWK's `{name}` has {} bytes, not {len}",
                    bytes.len()
                )));
            }
            Ok(bytes)
        };
        if jwk.get("d").is_some() {
            return Err(JwsError::Key(
                "the JWK holds a private key (`d`); give its public key".into(),
            ));
        }
        let key = match (text("kty")?, text("crv")?) {
            ("OKP", "Ed25519") => {
                let x: [u8; 32] = bytes("x", 32)?.try_into().unwrap_or([0; 32]);
                Verifying::Ed25519(
                    ed25519_dalek::VerifyingKey::from_bytes(&x)
                        .map_err(|e| JwsError::Key(format!("not an Ed25519 public key: {e}")))?,
                )
            }
            ("EC", "P-256") => {
                let mut sec1 = vec![4u8];
                sec1.extend(bytes("x", 32)?);
                sec1.extend(bytes("y", 32)?);
                Verifying::P256(
                    p256::ecdsa::VerifyingKey::from_sec1_bytes(&sec1)
                        .map_err(|e| JwsError::Key(format!("not a P-256 public key: {e}")))?,
                )
            }
            (kty, crv) => {
                return Err(JwsError::Key(format!(
                    "unsupported key type `{kty}`/`{crv}` (OKP/Ed25519 and EC/P-256 are supported)"
                )));
            }
        };
        let mut key = PublicKey::new(key);
        if let Some(alg) = jwk.get("alg").and_then(Value::as_str)
            && Algorithm::parse(alg) != Some(key.algorithm())
        {
            return Err(JwsError::Key(format!(
                "the JWK says `alg: {alg}`, but it is a {} key",
                key.algorithm().name()
            )));
        }
        if let Some(kid) = jwk.get("kid").and_then(Value::as_str) {
            key.kid = kid.to_string();
        }
        Ok(key)
    }

    /// The key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The algorithm it verifies.
    pub fn algorithm(&self) -> Algorithm {
        match self.key {
            Verifying::Ed25519(_) => Algorithm::Ed25519,
            Verifying::P256(_) => Algorithm::ES256,
        }
    }

    /// The members RFC 7638 requires, which identify the key.
    fn members(&self) -> Map<String, Value> {
        let value = match &self.key {
            Verifying::Ed25519(key) => {
                json!({"kty": "OKP", "crv": "Ed25519", "x": B64.encode(key.as_bytes())})
            }
            Verifying::P256(key) => {
                let point = key.to_sec1_point(false);
                let coordinate = |c: Option<&[u8]>| B64.encode(c.unwrap_or_default());
                json!({"kty": "EC", "crv": "P-256",
                       "x": coordinate(point.x().map(|x| x.as_slice())),
                       "y": coordinate(point.y().map(|y| y.as_slice()))})
            }
        };
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// The JWK: its members, `kid`, `alg` and `use: sig`.
    pub fn to_jwk(&self) -> Value {
        self.to_jwk_as(self.algorithm().name())
    }

    /// [`PublicKey::to_jwk`] with `alg` written as `alg` (one of the
    /// algorithm's names, say `EdDSA` for a key whose signatures say so:
    /// a verifier that holds a key to its JWK's `alg` then accepts them).
    pub fn to_jwk_as(&self, alg: &str) -> Value {
        let mut jwk = self.members();
        jwk.insert("kid".into(), Value::String(self.kid.clone()));
        jwk.insert("alg".into(), Value::String(alg.into()));
        jwk.insert("use".into(), Value::String("sig".into()));
        Value::Object(jwk)
    }

    fn verify(&self, input: &[u8], signature: &[u8]) -> bool {
        match &self.key {
            Verifying::Ed25519(key) => ed25519_dalek::Signature::from_slice(signature)
                .is_ok_and(|s| key.verify_strict(input, &s).is_ok()),
            Verifying::P256(key) => p256::ecdsa::Signature::from_slice(signature)
                .is_ok_and(|s| key.verify(input, &s).is_ok()),
        }
    }
}

/// The RFC 7638 thumbprint of a JWK's required members: base64url of the
/// SHA-256 of their JSON with sorted keys and no whitespace.
pub fn thumbprint(members: &Map<String, Value>) -> String {
    use sha2::{Digest, Sha256};
    // The members are strings: RFC 8785's form is the RFC's canonical form.
    let canonical = crate::jcs::canonical_members(members);
    B64.encode(Sha256::digest(canonical.as_bytes()))
}

/// The keys of a JWK or a JWK set (`{"keys": [...]}`) in JSON text.
pub fn read_keys(text: &str) -> Result<Vec<PublicKey>, JwsError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| JwsError::Key(format!("not JSON: {e}")))?;
    match value.get("keys") {
        Some(Value::Array(keys)) => keys.iter().map(PublicKey::from_jwk).collect(),
        Some(_) => Err(JwsError::Key("a JWK set's `keys` must be an array".into())),
        None => Ok(vec![PublicKey::from_jwk(&value)?]),
    }
}

/// A private key, to sign with.
pub struct PrivateKey {
    key: Signing,
    public: PublicKey,
}

enum Signing {
    Ed25519(Box<ed25519_dalek::SigningKey>),
    P256(p256::ecdsa::SigningKey),
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateKey")
            .field("kid", &self.public.kid)
            .finish_non_exhaustive()
    }
}

impl PrivateKey {
    fn of(key: Signing) -> PrivateKey {
        let public = PublicKey::new(match &key {
            Signing::Ed25519(key) => Verifying::Ed25519(key.verifying_key()),
            Signing::P256(key) => Verifying::P256(*key.verifying_key()),
        });
        PrivateKey { key, public }
    }

    /// A new key from the operating system's random source.
    pub fn generate(algorithm: Algorithm) -> Result<PrivateKey, JwsError> {
        let random = |e: getrandom::Error| JwsError::Key(format!("no randomness: {e}"));
        Ok(PrivateKey::of(match algorithm {
            Algorithm::Ed25519 => {
                let mut seed = zeroize::Zeroizing::new([0u8; 32]);
                getrandom::fill(seed.as_mut()).map_err(random)?;
                Signing::Ed25519(Box::new(ed25519_dalek::SigningKey::from_bytes(&seed)))
            }
            Algorithm::ES256 => {
                let secret = p256::SecretKey::try_generate().map_err(random)?;
                Signing::P256(p256::ecdsa::SigningKey::from(&secret))
            }
        }))
    }

    /// The key in a PKCS#8 PEM text (Ed25519 or P-256).
    pub fn from_pem(text: &str) -> Result<PrivateKey, JwsError> {
        if let Ok(key) = ed25519_dalek::SigningKey::from_pkcs8_pem(text) {
            return Ok(PrivateKey::of(Signing::Ed25519(Box::new(key))));
        }
        match p256::SecretKey::from_pkcs8_pem(text) {
            Ok(secret) => Ok(PrivateKey::of(Signing::P256(
                p256::ecdsa::SigningKey::from(&secret),
            ))),
            Err(_) => Err(JwsError::Key(
                "not a PKCS#8 PEM private key of Ed25519 or P-256".into(),
            )),
        }
    }

    /// The key as PKCS#8 PEM (kept in memory that is wiped when dropped).
    pub fn to_pem(&self) -> Result<zeroize::Zeroizing<String>, JwsError> {
        let failed =
            |e: ed25519_dalek::pkcs8::Error| JwsError::Key(format!("cannot encode the key: {e}"));
        let line = p256::pkcs8::LineEnding::LF;
        match &self.key {
            // PKCS#8 v1 (the private key alone), as OpenSSL writes it: some
            // readers (Python's `cryptography`) refuse v2's public key.
            Signing::Ed25519(key) => ed25519_dalek::pkcs8::KeypairBytes {
                secret_key: key.to_bytes(),
                public_key: None,
            }
            .to_pkcs8_pem(line)
            .map_err(failed),
            Signing::P256(key) => p256::SecretKey::from(key.as_nonzero_scalar())
                .to_pkcs8_pem(line)
                .map_err(failed),
        }
    }

    /// Its public key.
    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// A detached compact JWS over `payload` (`header..signature`), whose
    /// protected header has `alg`, `kid` and `iat` (the signing time, in
    /// seconds since the epoch).
    pub fn sign_detached(&self, payload: &[u8], iat: u64) -> String {
        let header =
            json!({"alg": self.public.algorithm().name(), "kid": self.public.kid, "iat": iat});
        self.sign_with_header(payload, &header)
    }

    /// A detached compact JWS over `payload` whose protected header has
    /// only `alg` (as `alg` names it: `EdDSA` or `Ed25519` for an Ed25519
    /// key) and `kid` (no signing time: the payload carries its own times,
    /// as a SEP-3140 manifest does). `alg` must name the key's algorithm.
    pub fn sign_detached_as(&self, payload: &[u8], alg: &str) -> Result<String, JwsError> {
        if alg == self.public.algorithm().sep_name() {
            return Ok(self.sign_detached_sep(payload));
        }
        if Algorithm::parse(alg) != Some(self.public.algorithm()) {
            return Err(JwsError::Malformed(format!(
                "`{alg}` does not name the key's algorithm ({})",
                self.public.algorithm().name()
            )));
        }
        let header = json!({"alg": alg, "kid": self.public.kid});
        Ok(self.sign_with_header(payload, &header))
    }

    /// [`PrivateKey::sign_detached_as`] with the algorithm named as
    /// SEP-3140's examples name it ([`Algorithm::sep_name`]).
    pub fn sign_detached_sep(&self, payload: &[u8]) -> String {
        let header = json!({"alg": self.public.algorithm().sep_name(), "kid": self.public.kid});
        self.sign_with_header(payload, &header)
    }

    fn sign_with_header(&self, payload: &[u8], header: &Value) -> String {
        let header = B64.encode(header.to_string());
        let input = format!("{header}.{}", B64.encode(payload));
        let signature = match &self.key {
            Signing::Ed25519(key) => key.sign(input.as_bytes()).to_bytes().to_vec(),
            Signing::P256(key) => {
                let signature: p256::ecdsa::Signature = key.sign(input.as_bytes());
                signature.to_bytes().to_vec()
            }
        };
        format!("{header}..{}", B64.encode(signature))
    }
}

/// A signature that verified: the key, and the protected header.
#[derive(Debug)]
pub struct Verified<'k> {
    /// The key that verified it.
    pub key: &'k PublicKey,
    /// The protected header (`alg`, `kid`, `iat`, …).
    pub header: Map<String, Value>,
}

impl Verified<'_> {
    /// When it says it was signed (`iat`), in seconds since the epoch.
    pub fn signed_at(&self) -> Option<u64> {
        self.header.get("iat").and_then(Value::as_u64)
    }
}

/// Verifies a detached compact JWS over `payload` with one of `keys`: the
/// key the header's `kid` names (or, without one, any key of its
/// algorithm).
pub fn verify_detached<'k>(
    jws: &str,
    payload: &[u8],
    keys: &'k [PublicKey],
) -> Result<Verified<'k>, JwsError> {
    let malformed = |why: &str| JwsError::Malformed(why.to_string());
    let parts: Vec<&str> = jws.trim().split('.').collect();
    let [header_b64, body, signature_b64] = parts[..] else {
        return Err(malformed(
            "a compact JWS is three base64url parts separated by dots",
        ));
    };
    if !body.is_empty() {
        return Err(malformed(
            "its payload part is not empty: a signature document's JWS is detached (`header..signature`, RFC 7515 appendix F)",
        ));
    }
    let header = B64
        .decode(header_b64)
        .map_err(|e| JwsError::Malformed(format!("its header is not base64url: {e}")))?;
    let header: Map<String, Value> = serde_json::from_slice(&header)
        .map_err(|e| JwsError::Malformed(format!("its header is not a JSON object: {e}")))?;
    let alg = match header.get("alg") {
        Some(Value::String(alg)) => alg.as_str(),
        _ => return Err(malformed("its header has no `alg`")),
    };
    if alg.eq_ignore_ascii_case("none") {
        return Err(JwsError::AlgNone);
    }
    let Some(algorithm) = Algorithm::parse(alg) else {
        return Err(JwsError::UnknownAlg(alg.to_string()));
    };
    if let Some(crit) = header.get("crit") {
        let names: Vec<String> = crit
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("`{}`", c.as_str().unwrap_or("?")))
            .collect();
        return Err(JwsError::Critical(if names.is_empty() {
            "headers".into()
        } else {
            names.join(", ")
        }));
    }
    let signature = B64
        .decode(signature_b64)
        .map_err(|e| JwsError::Malformed(format!("its signature is not base64url: {e}")))?;
    let kid = header.get("kid").and_then(Value::as_str);
    let candidates: Vec<&PublicKey> = keys
        .iter()
        .filter(|k| match kid {
            Some(kid) => k.kid == kid,
            None => k.algorithm() == algorithm,
        })
        .collect();
    if candidates.is_empty() {
        return Err(JwsError::UnknownKey(kid.unwrap_or("(none)").to_string()));
    }
    let input = format!("{header_b64}.{}", B64.encode(payload));
    let mut error = None;
    for key in candidates {
        if key.algorithm() != algorithm {
            error = Some(JwsError::AlgMismatch {
                kid: key.kid.clone(),
                key: key.algorithm().name(),
                alg: alg.to_string(),
            });
            continue;
        }
        if key.verify(input.as_bytes(), &signature) {
            return Ok(Verified { key, header });
        }
        error = Some(JwsError::BadSignature(key.kid.clone()));
    }
    Err(error.unwrap_or_else(|| JwsError::UnknownKey(kid.unwrap_or("(none)").to_string())))
}

/// Verifies a `.jws` file — one detached compact JWS per line, one per
/// signer — over `payload`: the first signature that verifies with one of
/// `keys`.
pub fn verify_any<'k>(
    file: &str,
    payload: &[u8],
    keys: &'k [PublicKey],
) -> Result<Verified<'k>, JwsError> {
    let lines: Vec<&str> = file.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut errors = Vec::new();
    for line in &lines {
        match verify_detached(line, payload, keys) {
            Ok(verified) => return Ok(verified),
            Err(e) => errors.push(e),
        }
    }
    match errors.len() {
        0 => Err(JwsError::Malformed("the file has no signature".into())),
        1 => Err(errors.remove(0)),
        _ => Err(JwsError::NoneVerifies(
            errors
                .iter()
                .enumerate()
                .map(|(i, e)| format!("line {}: {e}", i + 1))
                .collect(),
        )),
    }
}

/// The `kid` a detached compact JWS's header names, if it can be read.
pub fn kid_of(jws: &str) -> Option<String> {
    let header = B64.decode(jws.trim().split('.').next()?).ok()?;
    let header: Value = serde_json::from_slice(&header).ok()?;
    header.get("kid")?.as_str().map(str::to_string)
}

/// `path` with `.extension` added (`sig.json` → `sig.json.jws`): where a
/// document's detached signature, or a key's other half, is written.
pub fn with_extension(path: &std::path::Path, extension: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(extension);
    std::path::PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_7638_example_thumbprint() {
        // RFC 7638 section 3.1.
        let jwk = json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB",
        });
        let members = jwk.as_object().unwrap().clone();
        assert_eq!(
            thumbprint(&members),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }

    #[test]
    fn the_rfc_8037_ed25519_example_verifies() {
        // RFC 8037 appendix A: its public key, thumbprint and signature.
        let jwk = json!({"kty": "OKP", "crv": "Ed25519",
                         "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
        let key = PublicKey::from_jwk(&jwk).unwrap();
        assert_eq!(key.kid(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
        let jws = "eyJhbGciOiJFZERTQSJ9..hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg";
        let keys = [key];
        assert!(verify_detached(jws, b"Example of Ed25519 signing", &keys).is_ok());
        assert_eq!(
            verify_detached(jws, b"Example of Ed25519 signinG", &keys).unwrap_err(),
            JwsError::BadSignature("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k".into())
        );
    }

    #[test]
    fn keys_round_trip_through_pem_and_jwk() {
        for algorithm in [Algorithm::Ed25519, Algorithm::ES256] {
            let key = PrivateKey::generate(algorithm).unwrap();
            let again = PrivateKey::from_pem(&key.to_pem().unwrap()).unwrap();
            assert_eq!(again.public().kid(), key.public().kid());
            let public = PublicKey::from_jwk(&key.public().to_jwk()).unwrap();
            assert_eq!(public.kid(), key.public().kid());
            assert_eq!(public.algorithm(), algorithm);
            let jws = again.sign_detached(b"{}", 7);
            let keys = [public];
            let verified = verify_detached(&jws, b"{}", &keys).unwrap();
            assert_eq!(verified.signed_at(), Some(7));
            assert_eq!(kid_of(&jws).as_deref(), Some(key.public().kid()));
        }
    }

    #[test]
    fn what_a_verifier_must_refuse() {
        let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
        let other = PrivateKey::generate(Algorithm::ES256).unwrap();
        let keys = [key.public().clone()];
        let jws = key.sign_detached(b"doc", 1);
        let (_, signature) = jws.split_once("..").unwrap();
        let forged = |header: Value| format!("{}..{signature}", B64.encode(header.to_string()));
        let kid = key.public().kid();
        assert_eq!(
            verify_detached(&forged(json!({"alg": "none"})), b"doc", &keys).unwrap_err(),
            JwsError::AlgNone
        );
        assert_eq!(
            verify_detached(&forged(json!({"alg": "HS256", "kid": kid})), b"doc", &keys)
                .unwrap_err(),
            JwsError::UnknownAlg("HS256".into())
        );
        assert!(matches!(
            verify_detached(
                &forged(json!({"alg": "EdDSA", "crit": ["b64"], "b64": false})),
                b"doc",
                &keys
            ),
            Err(JwsError::Critical(_))
        ));
        assert!(matches!(
            verify_detached(&forged(json!({"alg": "ES256", "kid": kid})), b"doc", &keys),
            Err(JwsError::AlgMismatch { .. })
        ));
        assert!(matches!(
            verify_detached(&jws, b"doc", &[other.public().clone()]),
            Err(JwsError::UnknownKey(_))
        ));
        for bad in ["", "a.b", "a.b.c", "!!..AA", "e30..AA"] {
            assert!(
                matches!(
                    verify_detached(bad, b"doc", &keys),
                    Err(JwsError::Malformed(_))
                ),
                "{bad}"
            );
        }
        // Two signers: either key verifies the file.
        let file = format!("{}\n{}\n", other.sign_detached(b"doc", 1), jws);
        assert_eq!(verify_any(&file, b"doc", &keys).unwrap().key.kid(), kid);
        let both = [other.public().clone()];
        assert!(verify_any(&file, b"doc", &both).is_ok());
        assert!(matches!(
            verify_any(&file, b"dog", &keys),
            Err(JwsError::NoneVerifies(_))
        ));
    }

    #[test]
    fn private_and_foreign_jwks_are_refused() {
        let private = json!({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
                             "d": "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"});
        assert!(PublicKey::from_jwk(&private).is_err());
        assert!(PublicKey::from_jwk(&json!({"kty": "RSA", "crv": "x"})).is_err());
        assert!(
            PublicKey::from_jwk(&json!({"kty": "OKP", "crv": "Ed25519", "x": "AAAA"})).is_err()
        );
        let jwks = format!(
            r#"{{"keys": [{}, {}]}}"#,
            PrivateKey::generate(Algorithm::Ed25519)
                .unwrap()
                .public()
                .to_jwk(),
            PrivateKey::generate(Algorithm::ES256)
                .unwrap()
                .public()
                .to_jwk()
        );
        assert_eq!(read_keys(&jwks).unwrap().len(), 2);
        assert!(read_keys("[]").is_err());
    }
}
