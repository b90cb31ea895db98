//! Codex runs a command hook only once it is *trusted*: its `/hooks` screen records, in the user's
//! `config.toml`, `[hooks.state."<key>"] trusted_hash = "<hash>"` for each entry, and an entry
//! whose hash is not recorded is skipped without a word. `hookbox install --agent codex
//! --trust-codex` records that trust for hookbox's own entries — shown before anything is
//! written, and only on that explicit flag.
//!
//! Codex's own scheme (openai/codex 0.169.0, checked against its `app-server` `hooks/list`, which
//! reports each entry's `key` and `currentHash`):
//! - the key is `<hooks.json path>:<event in snake_case>:<group index>:<handler index>`;
//! - the hash is `sha256:` and the hex SHA-256 of the compact JSON, keys sorted, of the entry's
//!   identity: `{"event_name", "hooks": [{"async", "command", "timeout", "type"}], "matcher"?}`
//!   with Codex's defaults filled in (`async: false`).
//!
//! The records live in one block between two marker comments at the end of `config.toml`
//! (a table header is valid anywhere), replaced whole by a later install and removed by uninstall;
//! the user's own tables and comments are never touched, and a key the user's file already has
//! outside the block is refused rather than duplicated (TOML forbids it, and Codex would then
//! load no configuration at all).

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::InstallError;
use super::command::is_ours;
use super::jsonc;
use super::toml_block::{Markers, toml_string};

const BLOCK: Markers = Markers {
    begin: "# >>> hookbox: Codex's trust in hookbox's hook entries, recorded by `hookbox install --agent codex --trust-codex`; `hookbox uninstall --agent codex` removes it",
    end: "# <<< hookbox trust",
};

/// One trust record: Codex's key of an entry and the hash it must have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustRecord {
    /// `<hooks.json path>:<event_snake>:<group>:<handler>`.
    pub key: String,
    /// `sha256:<hex>`.
    pub hash: String,
    /// The entry's command, for the screen shown before writing.
    pub command: String,
}

/// `PreToolUse` → `pre_tool_use`: Codex's spelling of an event in keys and hashes.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Codex's hash of one command handler of `event` in a group with `matcher`.
pub fn entry_hash(event: &str, matcher: Option<&str>, command: &str, timeout_secs: u64) -> String {
    // Written out by hand, keys in sorted order, so the bytes hashed cannot depend on how a map
    // orders its keys.
    let mut identity = format!(
        r#"{{"event_name":{},"hooks":[{{"async":false,"command":{},"timeout":{timeout_secs},"type":"command"}}]"#,
        Value::from(snake(event)),
        Value::from(command),
    );
    if let Some(m) = matcher {
        identity.push_str(&format!(r#","matcher":{}"#, Value::from(m)));
    }
    identity.push('}');
    let digest = Sha256::digest(identity.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The trust records of hookbox's entries in `hooks_text`, the final text of the `hooks.json` at
/// `hooks_path` (its absolute path, as Codex keys it).
pub fn records(hooks_path: &str, hooks_text: &str) -> Result<Vec<TrustRecord>, InstallError> {
    let root = jsonc::parse(hooks_text).map_err(|source| InstallError::Syntax {
        file: hooks_path.to_owned(),
        source,
    })?;
    let mut out = Vec::new();
    let Some(hooks) = root.member("hooks") else {
        return Ok(out);
    };
    for event in hooks.value.members().unwrap_or(&[]) {
        for (g, group) in event.value.items().unwrap_or(&[]).iter().enumerate() {
            let group = jsonc::value_of(hooks_text, group);
            let matcher = group.get("matcher").and_then(Value::as_str);
            let handlers = group.get("hooks").and_then(Value::as_array);
            for (h, handler) in handlers.into_iter().flatten().enumerate() {
                let Some(command) = handler.get("command").and_then(Value::as_str) else {
                    continue;
                };
                if !is_ours(command) {
                    continue;
                }
                // Codex's default timeout is 600 s; hookbox always writes one.
                let timeout = handler
                    .get("timeout")
                    .and_then(Value::as_u64)
                    .unwrap_or(600);
                out.push(TrustRecord {
                    key: format!("{hooks_path}:{}:{g}:{h}", snake(&event.key)),
                    hash: entry_hash(&event.key, matcher, command, timeout),
                    command: command.to_owned(),
                });
            }
        }
    }
    Ok(out)
}

/// `config` (Codex's `config.toml`, or empty) with exactly `records` in hookbox's block (no block
/// when there are none). Refuses a file that is not TOML, or that already holds one of the keys
/// outside the block.
pub fn apply(config: &str, records: &[TrustRecord], file: &str) -> Result<String, InstallError> {
    let mut out = BLOCK.without(config);
    let theirs: toml::Table = toml::from_str(&out).map_err(|e| InstallError::Toml {
        message: format!(
            "{file} is not valid TOML ({e}); fix it before hookbox records trust in it"
        ),
    })?;
    let state = theirs
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table);
    for r in records {
        if state.is_some_and(|s| s.contains_key(&r.key)) {
            return Err(InstallError::Toml {
                message: format!(
                    "{file} already has a trust record for `{}` (from Codex's /hooks screen); remove that table, or trust the changed entry in /hooks instead",
                    r.key
                ),
            });
        }
    }
    let body: String = records
        .iter()
        .map(|r| {
            format!(
                "[hooks.state.{}]\ntrusted_hash = {}\n",
                toml_string(&r.key),
                toml_string(&r.hash)
            )
        })
        .collect();
    BLOCK.append(&mut out, &body);
    if let Err(e) = toml::from_str::<toml::Table>(&out) {
        return Err(InstallError::Toml {
            message: format!(
                "{file} would not be valid TOML with hookbox's trust records (is `hooks` something other than a table there?): {e}"
            ),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from `codex app-server`'s `hooks/list` (Codex 0.169.0) for this very entry.
    #[test]
    fn the_hash_is_codex_s_own() {
        let cmd = "/usr/bin/hookbox hook --agent codex --event PreToolUse --plugin /p";
        assert_eq!(
            entry_hash("PreToolUse", None, cmd, 15),
            "sha256:476af61bfef265934fe263000cdb34005fa30e9595190c571dad05a2f7e3cd57"
        );
        let text = format!(
            r#"{{"hooks": {{"PreToolUse": [{{"hooks": [{{"type": "command", "command": "./mine.sh"}}]}}, {{"hooks": [{{"type": "command", "command": "{cmd}", "timeout": 15}}]}}]}}}}"#
        );
        let r = records("/p/.codex/hooks.json", &text).unwrap();
        assert_eq!(r.len(), 1, "only hookbox's entry: {r:?}");
        assert_eq!(r[0].key, "/p/.codex/hooks.json:pre_tool_use:1:0");
        assert_eq!(r[0].hash, entry_hash("PreToolUse", None, cmd, 15));
    }

    #[test]
    fn the_block_round_trips_and_a_users_record_is_not_duplicated() {
        let user = "# mine\nmodel = \"x\"\n\n[hooks.state.\"/other:stop:0:0\"]\ntrusted_hash = \"sha256:00\"\n";
        let rec = TrustRecord {
            key: "/p/.codex/hooks.json:pre_tool_use:0:0".into(),
            hash: "sha256:ab".into(),
            command: "c".into(),
        };
        let with = apply(user, std::slice::from_ref(&rec), "f").unwrap();
        assert!(with.starts_with(user));
        let t: toml::Table = toml::from_str(&with).unwrap();
        assert_eq!(
            t["hooks"]["state"]["/p/.codex/hooks.json:pre_tool_use:0:0"]["trusted_hash"].as_str(),
            Some("sha256:ab")
        );
        assert_eq!(apply(&with, std::slice::from_ref(&rec), "f").unwrap(), with);
        assert_eq!(apply(&with, &[], "f").unwrap(), user);
        let dup = TrustRecord {
            key: "/other:stop:0:0".into(),
            ..rec
        };
        let e = apply(user, &[dup], "f").unwrap_err();
        assert!(e.to_string().contains("already has a trust record"), "{e}");
    }
}
