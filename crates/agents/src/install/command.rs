//! The command line an installed entry runs, and reading one back: which entries are hookbox's
//! (`<hookbox> hook --agent …`) and which plugins they load. Every word is single-quoted for
//! `sh` unless it is plain, so a plugin folder with spaces or quotes stays one word.

use std::path::{Path, PathBuf};

use hookbox_core::agent::Agent;

/// What one entry runs.
pub struct HookCommand<'a> {
    /// The hookbox binary.
    pub bin: &'a Path,
    /// The agent named on the command line (Copilot's for the file Copilot and VS Code share).
    pub agent: Agent,
    /// The agent's event name (`--event`).
    pub event: &'a str,
    /// `--project-dir`, for project files.
    pub project: Option<&'a Path>,
    /// The plugins to load, in order.
    pub plugins: &'a [PathBuf],
    /// `--on-error block`: a rule of these plugins fails closed.
    pub block_on_error: bool,
}

impl HookCommand<'_> {
    /// The shell command line.
    pub fn render(&self) -> String {
        let mut words: Vec<String> = vec![
            self.bin.display().to_string(),
            "hook".into(),
            "--agent".into(),
            self.agent.as_str().into(),
            "--event".into(),
            self.event.into(),
        ];
        if let Some(p) = self.project {
            words.push("--project-dir".into());
            words.push(p.display().to_string());
        }
        for p in self.plugins {
            words.push("--plugin".into());
            words.push(p.display().to_string());
        }
        if self.block_on_error {
            words.push("--on-error".into());
            words.push("block".into());
        }
        words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
    }
}

/// `w` as one `sh` word.
pub fn quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Splits a command line as `sh` would split plain words, single and double quotes and
/// backslashes; `None` for anything else (a variable, a pipe): such a command is not one
/// hookbox wrote.
pub fn split(cmd: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => cur.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => cur.push(chars.next()?),
                        '$' | '`' => return None,
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.push(chars.next()?);
            }
            '$' | '`' | '|' | '&' | ';' | '<' | '>' | '(' | ')' | '\n' => return None,
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

/// Whether `cmd` is an entry `hookbox install` wrote: `<hookbox> hook … --agent … --plugin …`,
/// where the program is a hookbox (its file name starts with `hookbox`). Another tool's entry
/// that merely has `hook --agent` as its second word is not ours, and uninstall keeps it.
pub fn is_ours(cmd: &str) -> bool {
    split(cmd).is_some_and(|w| {
        w.len() >= 2
            && Path::new(&w[0])
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("hookbox"))
            && w[1] == "hook"
            && w.iter().any(|x| x == "--agent")
            && w.iter().any(|x| x == "--plugin")
    })
}

/// The plugins an entry of ours loads, in order.
pub fn plugins_of(cmd: &str) -> Vec<PathBuf> {
    let Some(words) = split(cmd) else {
        return Vec::new();
    };
    words
        .windows(2)
        .filter(|w| w[0] == "--plugin")
        .map(|w| PathBuf::from(&w[1]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_command_splits_back_and_is_ours() {
        let plugins = vec![PathBuf::from("/p/with space"), PathBuf::from("/p/it's")];
        let cmd = HookCommand {
            bin: Path::new("/usr/local/bin/hookbox"),
            agent: Agent::Cursor,
            event: "preToolUse",
            project: Some(Path::new("/work/my project")),
            plugins: &plugins,
            block_on_error: true,
        }
        .render();
        assert_eq!(
            cmd,
            "/usr/local/bin/hookbox hook --agent cursor --event preToolUse --project-dir '/work/my project' --plugin '/p/with space' --plugin '/p/it'\\''s' --on-error block"
        );
        assert!(is_ours(&cmd));
        assert_eq!(plugins_of(&cmd), plugins);
    }

    #[test]
    fn other_commands_are_not_ours() {
        for cmd in [
            "./guard.sh",
            "hookbox exec guard.wasm",
            "hookbox hook --agent claude $(rm -rf ~) --plugin x",
            "python3 hook.py --agent x --plugin y",
            "hookbox hook --agent claude --plugin 'unterminated",
            // Another tool's hooks with the same words.
            "othertool hook --agent claude --plugin x",
            "/usr/bin/guard hook --agent claude --plugin /p",
        ] {
            assert!(!is_ours(cmd), "{cmd}");
        }
    }
}
