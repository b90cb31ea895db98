//! Bearer tokens as the server keeps them: only their SHA-256 digest is configured
//! (`admin_token_sha256`, a tenant's `token_sha256`), so neither a config file nor a tenant
//! folder holds a usable secret. A presented token is hashed and its digest compared with the
//! configured one in constant time, so the comparison's duration says nothing about how many
//! leading bytes matched.

use std::fmt;

use serde::{Deserialize, Deserializer};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The SHA-256 digest of a bearer token (written as 64 hex digits in configuration files).
#[derive(Clone, Copy)]
pub struct TokenHash([u8; 32]);

/// A tenant's token digest is part of what its approval covers: a `tenant.toml` that swaps the
/// token alone is a change, held like a changed rule when holding is on (issue 27 item 6). The
/// digest is no secret (it is the tenant's `token_sha256`).
impl hookbox_host::TenantAttachment for TokenHash {
    fn approval_terms(&self) -> hookbox_host::tenant_trust::TenantTerms {
        hookbox_host::tenant_trust::TenantTerms::from([(
            "token_sha256".to_owned(),
            serde_json::Value::String(self.to_hex()),
        )])
    }
}

/// Why a string is not a token digest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{value}` is not a SHA-256 digest: {reason}; write the 64 hex digits of `printf %s \"$TOKEN\" | sha256sum`"
)]
pub struct TokenHashError {
    /// The value as given (cut to 80 characters, escaped).
    pub value: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl TokenHash {
    /// No token's digest (finding one would be a SHA-256 preimage): what a lookup that found no
    /// tenant compares against, so a miss takes as long as a hit.
    pub(crate) const ZERO: TokenHash = TokenHash([0; 32]);

    /// Parses 64 hex digits (either case).
    pub fn from_hex(s: &str) -> Result<TokenHash, TokenHashError> {
        let err = |reason| TokenHashError {
            value: s
                .chars()
                .take(80)
                .collect::<String>()
                .escape_default()
                .to_string(),
            reason,
        };
        let s = s.trim();
        if s.len() != 64 {
            return Err(err("it must be exactly 64 hex digits"));
        }
        let mut out = [0u8; 32];
        for (i, pair) in s.as_bytes().chunks_exact(2).enumerate() {
            let hi = hex_digit(pair[0]).ok_or_else(|| err("it holds a non-hex character"))?;
            let lo = hex_digit(pair[1]).ok_or_else(|| err("it holds a non-hex character"))?;
            out[i] = (hi << 4) | lo;
        }
        Ok(TokenHash(out))
    }

    /// The digest of a presented token.
    pub fn of_token(token: &str) -> TokenHash {
        TokenHash(Sha256::digest(token.as_bytes()).into())
    }

    /// Whether two digests are equal, in time independent of where they differ.
    pub fn matches(&self, other: &TokenHash) -> bool {
        self.0.ct_eq(&other.0).into()
    }

    /// The 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Equality for configuration comparisons; constant-time like [`TokenHash::matches`].
impl PartialEq for TokenHash {
    fn eq(&self, other: &TokenHash) -> bool {
        self.matches(other)
    }
}

impl Eq for TokenHash {}

/// Only a prefix: enough to tell digests apart in a log, not to copy one.
impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenHash({}…)", &self.to_hex()[..8])
    }
}

impl<'de> Deserialize<'de> for TokenHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        TokenHash::from_hex(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_matches_only_its_own_digest() {
        // `printf %s secret | sha256sum`
        let configured =
            TokenHash::from_hex("2BB80D537B1DA3E38BD30361AA855686BDE0EACD7162FEF6A25FE97BF527A25B")
                .unwrap();
        assert!(TokenHash::of_token("secret").matches(&configured));
        assert!(!TokenHash::of_token("secreT").matches(&configured));
        assert!(!TokenHash::of_token("").matches(&configured));
        assert_eq!(
            configured.to_hex(),
            "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
        );
    }

    #[test]
    fn malformed_digests_are_refused_with_the_value_quoted() {
        for (bad, why) in [
            ("abc", "exactly 64"),
            (&"g".repeat(64), "non-hex"),
            (&"é".repeat(32), "non-hex"),
        ] {
            let e = TokenHash::from_hex(bad).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("sha256sum"), "{bad}: {e}");
        }
        let e = TokenHash::from_hex("secret-token").unwrap_err().to_string();
        assert!(e.contains("`secret-token`"), "{e}");
    }

    #[test]
    fn debug_shows_only_a_prefix() {
        let h = TokenHash::of_token("secret");
        assert_eq!(format!("{h:?}"), "TokenHash(2bb80d53…)");
    }
}
