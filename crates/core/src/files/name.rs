//! Names from outside (session ids from payloads, plugin names from manifests, tenant-chosen
//! ids) made safe as one path component, so `../../x` stays one name inside its folder — and
//! made so that two different names never share a component: `a/b` and `a_b` must not share a
//! replay file or a data folder.

use sha2::{Digest, Sha256};

/// The most characters of the original kept before the hash.
pub const MAX_COMPONENT_CHARS: usize = 64;

/// Hex digits of the hash appended to a changed name: 128 bits of SHA-256, so nobody can craft
/// two names that collide (a 64-bit non-cryptographic hash can be collided on purpose).
const HASH_HEX_DIGITS: usize = 32;

/// `raw` as one safe path component.
///
/// ASCII letters, digits, `-`, `_` and `.` are kept; every other character becomes `_`; a name
/// of only dots (`.`, `..`) or an empty one becomes underscores; the first
/// [`MAX_COMPONENT_CHARS`] characters are kept. When anything changed, `-` and a hash of the
/// original follow, so two different names never map to the same component and the same name
/// always maps to the same one. A name that needed no change is returned as it is. The result
/// is at most 97 bytes.
pub fn safe_component(raw: &str) -> String {
    let mut out: String = raw
        .chars()
        .take(MAX_COMPONENT_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.chars().all(|c| c == '.') {
        out = "_".repeat(out.len().max(1));
    }
    if out != raw {
        let digest = Sha256::digest(raw.as_bytes());
        out.push('-');
        for b in &digest[..HASH_HEX_DIGITS / 2] {
            out.push_str(&format!("{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept() {
        assert_eq!(safe_component("my-plugin_1.2"), "my-plugin_1.2");
        assert_eq!(safe_component("3f2a9c"), "3f2a9c");
    }

    #[test]
    fn hostile_names_stay_one_component() {
        for raw in [
            "../../etc",
            "/abs",
            "a/b",
            "..",
            ".",
            "",
            "a\0b",
            "é",
            "C:\\x",
        ] {
            let s = safe_component(raw);
            assert!(!s.is_empty(), "{raw:?}");
            assert!(
                !s.contains('/') && !s.contains('\\') && !s.contains('\0'),
                "{s}"
            );
            assert!(s.chars().any(|c| c != '.'), "{raw:?} → {s}");
            assert!(s.is_ascii(), "{s}");
        }
    }

    #[test]
    fn distinct_names_never_collide() {
        // The replay files of sessions `a/b` and `a_b` once were the same file.
        assert_ne!(safe_component("a/b"), safe_component("a_b"));
        assert_ne!(safe_component("a/b"), safe_component("a:b"));
        assert_ne!(safe_component(".."), safe_component("__"));
        assert_ne!(safe_component(""), safe_component("_"));
        assert_eq!(safe_component("a/b"), safe_component("a/b"));
        // Long names share their first 64 characters, not their component.
        let long = "x".repeat(1000);
        let other = format!("{long}y");
        assert_ne!(safe_component(&long), safe_component(&other));
    }

    #[test]
    fn long_names_are_bounded() {
        let s = safe_component(&"é".repeat(10_000));
        assert_eq!(s.len(), MAX_COMPONENT_CHARS + 1 + HASH_HEX_DIGITS);
        assert!(s.len() <= 97);
    }
}
