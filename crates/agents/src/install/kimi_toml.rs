//! Kimi Code CLI's `~/.kimi/config.toml`: hooks are `[[hooks]]` tables (`event`, `command`,
//! `matcher`, `timeout` in seconds, 1–600). The file holds the user's other settings and
//! comments, so hookbox never rewrites it: its tables live in one block between two marker
//! comments, appended at the end (an array-of-tables header is valid anywhere), replaced whole
//! by a later install and removed whole by uninstall. The result is parsed before it is written.

use super::command::is_ours;
use super::shape::Entry;
use super::toml_block::{Markers, toml_string};
use super::{Applied, InstallError, Owned};

const BLOCK: Markers = Markers {
    begin: "# >>> hookbox: added by `hookbox install --agent kimi`; `hookbox uninstall --agent kimi` removes it",
    end: "# <<< hookbox",
};

/// Kimi's largest hook timeout, in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 600;

/// The commands of hookbox's entries in `text`.
pub fn existing(text: &str, file: &str) -> Result<Vec<String>, InstallError> {
    let Some((s, e)) = BLOCK.range(text) else {
        return Ok(Vec::new());
    };
    let table: toml::Table = toml::from_str(&text[s..e]).map_err(|e| InstallError::Toml {
        message: format!("hookbox's block in {file} is not valid TOML ({e}); remove it by hand"),
    })?;
    let commands = table
        .get("hooks")
        .and_then(toml::Value::as_array)
        .map(|hooks| {
            hooks
                .iter()
                .filter_map(|h| h.get("command").and_then(toml::Value::as_str))
                .filter(|c| is_ours(c))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(commands)
}

/// `text` with exactly `wanted` in hookbox's block (no block when `wanted` is empty). The file
/// can be deleted only when hookbox created it (`owned.file`) and nothing else is left.
pub fn apply(
    text: &str,
    wanted: &[Entry],
    file: &str,
    owned: &Owned,
) -> Result<Applied, InstallError> {
    let owned = owned.clone();
    let mut out = BLOCK.without(text);
    let body: String = wanted
        .iter()
        .map(|e| {
            format!(
                "[[hooks]]\nevent = {}\ncommand = {}\nmatcher = \"\"\ntimeout = {}\n",
                toml_string(e.event),
                toml_string(&e.command),
                e.timeout_secs.clamp(1, MAX_TIMEOUT_SECS)
            )
        })
        .collect();
    BLOCK.append(&mut out, &body);
    if let Err(e) = toml::from_str::<toml::Table>(&out) {
        return Err(InstallError::Toml {
            message: format!(
                "{file} would not be valid TOML with hookbox's hooks (is `hooks` already something other than a list of tables?): {e}"
            ),
        });
    }
    let empty = owned.file && out.trim().is_empty();
    Ok(Applied {
        text: out,
        empty,
        owned,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(event: &'static str) -> Entry {
        Entry {
            event,
            command: "/bin/hookbox hook --agent kimi --event PreToolUse --plugin '/p q'".into(),
            timeout_secs: 15,
            fail_closed: false,
            matcher: None,
        }
    }

    #[test]
    fn the_block_round_trips_and_keeps_comments() {
        let original = "# my Kimi settings\ndefault_model = \"kimi-k2\"\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"notify-send done\"\n";
        let first = apply(original, &[entry("PreToolUse")], "f", &Owned::default()).unwrap();
        let with = first.text;
        assert!(with.starts_with(original));
        let table: toml::Table = toml::from_str(&with).unwrap();
        assert_eq!(table["hooks"].as_array().unwrap().len(), 2);
        assert_eq!(existing(&with, "f").unwrap().len(), 1);
        let again = apply(&with, &[entry("PreToolUse")], "f", &first.owned).unwrap();
        assert_eq!(again.text, with);
        let back = apply(&with, &[], "f", &first.owned).unwrap();
        assert_eq!(back.text, original);
        assert!(!back.empty);
    }

    #[test]
    fn a_conflicting_hooks_key_is_refused() {
        let e = apply(
            "hooks = \"nope\"\n",
            &[entry("PreToolUse")],
            "f",
            &Owned::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("not be valid TOML"), "{e}");
    }

    #[test]
    fn a_new_file_holds_only_the_block() {
        let new = Owned {
            file: true,
            ..Owned::default()
        };
        let first = apply("", &[entry("PreToolUse")], "f", &new).unwrap();
        assert!(first.text.starts_with(BLOCK.begin));
        let back = apply(&first.text, &[], "f", &first.owned).unwrap();
        assert!(back.empty);
    }
}
