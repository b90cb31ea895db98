//! SHA-256 digests and the canonical JSON they are taken over.
//!
//! A rule's digest must not depend on how its record happens to be laid out: object keys are
//! sorted (by their UTF-8 bytes), nothing is indented, strings are escaped as serde_json escapes
//! them and numbers printed as it prints them (shortest round-trip form for floats). Parsing a
//! stored record and printing it canonically again gives the same bytes, so a digest can be
//! recomputed from what the store holds.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// A SHA-256 digest, written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// The first 12 hex digits, for people (the full value is in `--json`).
    pub fn short(&self) -> String {
        self.to_string()[..12].to_owned()
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

/// Text that is not 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a SHA-256 digest (64 lowercase hex digits)")]
pub struct BadDigest(pub String);

impl FromStr for Digest {
    type Err = BadDigest;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadDigest(s.chars().take(80).collect());
        if s.len() != 64 {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, pair) in s.as_bytes().chunks(2).enumerate() {
            let hi = hex_value(pair[0]).ok_or_else(bad)?;
            let lo = hex_value(pair[1]).ok_or_else(bad)?;
            out[i] = (hi << 4) | lo;
        }
        Ok(Digest(out))
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl Serialize for Digest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Digest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// `value` as canonical JSON: keys sorted, no whitespace.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        // null, booleans and numbers print the same whatever the layout.
        other => out.push_str(&other.to_string()),
    }
}

fn write_string(s: &str, out: &mut String) {
    // serde_json's escaping of a string cannot fail.
    out.push_str(&Value::String(s.to_owned()).to_string());
}

/// The digest of `domain` (a version tag such as `hookbox-trust-rule-v1`), a newline, and
/// `value` in canonical JSON: the same value always gives the same digest, and a value hashed
/// for one purpose can never be mistaken for one hashed for another.
pub fn digest_of(domain: &str, value: &Value) -> Digest {
    let mut h = Sha256::new();
    h.update(domain.as_bytes());
    h.update(b"\n");
    h.update(canonical_json(value).as_bytes());
    Digest(h.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `trust` fuzz target (input `dd 36 36 32 32 36 36 32 33 33 45 33 30`, i.e.
    /// the JSON `662266233E30`): canonical JSON prints the f64 shortest (`6.62266233e+38`), and
    /// serde_json without its `float_roundtrip` feature reads that text back one ulp off, so
    /// the canonical form — and a rule digest over content holding such a number (a wasm
    /// rule's `config`) — changes when a stored record is read back, and the record is refused
    /// as edited. Fixed by serde_json's `float_roundtrip` (the workspace turns it on).
    #[test]
    fn canonical_json_of_a_float_reads_back_the_same() {
        for text in ["662266233E30", "1e105", "0.1", "-2.5e-300"] {
            let v: Value = serde_json::from_str(text).unwrap();
            let c = canonical_json(&v);
            let back: Value = serde_json::from_str(&c).unwrap();
            assert_eq!(canonical_json(&back), c, "{text}");
        }
    }
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth_and_keeps_array_order() {
        let a: Value =
            serde_json::from_str(r#"{"b": [3, {"z": 1, "a": 2}], "a": "x", "é": null}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"é":null,"a":"x","b":[3,{"a":2,"z":1}]}"#).unwrap();
        assert_eq!(
            canonical_json(&a),
            r#"{"a":"x","b":[3,{"a":2,"z":1}],"é":null}"#
        );
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_ne!(
            canonical_json(&json!([1, 2])),
            canonical_json(&json!([2, 1]))
        );
    }

    #[test]
    fn canonical_json_survives_a_round_trip_through_text() {
        let v = json!({"timeout": 5.0, "fuel": 50_000_000u64, "ratio": 0.1, "s": "a\"b\\c\u{1}\n", "neg": -3});
        let text = canonical_json(&v);
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(canonical_json(&back), text);
        assert!(text.contains("\"timeout\":5.0"), "{text}");
    }

    #[test]
    fn digests_are_domain_separated_and_print_as_hex() {
        let v = json!({"a": 1});
        assert_ne!(digest_of("one", &v), digest_of("two", &v));
        assert_eq!(digest_of("one", &v), digest_of("one", &json!({"a": 1})));
        let d = Digest::of(b"abc");
        assert_eq!(
            d.to_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(d.short(), "ba7816bf8f01");
        assert_eq!(d.to_string().parse::<Digest>().unwrap(), d);
        for bad in [
            "",
            "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",
            "zz",
            "é",
        ] {
            assert!(bad.parse::<Digest>().is_err(), "{bad}");
        }
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<Digest>(&json).unwrap(), d);
    }
}
