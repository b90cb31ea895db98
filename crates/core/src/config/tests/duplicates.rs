//! Unit tests of duplicate-key warnings (issue 8 #20): a key written twice in one object is
//! named with both places, in every dialect, in hook files and in manifests.

use super::parse_as;
use crate::config::*;
use crate::diagnostic::Severity;

const TEXT: &str = r#"{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "first.sh", "command": "second.sh"}]}
    ],
    "PreToolUse": [
      {"hooks": [{"type": "command", "command": "other.sh"}]}
    ]
  },
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}]
  }
}"#;

/// A duplicate-key warning: message, JSON path, line, column.
type Seen<'a> = (&'a str, Option<&'a str>, Option<u32>, Option<u32>);

#[test]
fn repeated_keys_are_named_with_both_places_in_every_dialect() {
    for dialect in Dialect::ALL {
        let r = parse_as(TEXT, "hooks.json", dialect);
        let dupes: Vec<Seen<'_>> = r
            .diagnostics
            .iter()
            .filter(|d| d.message.starts_with("duplicate key"))
            .map(|d| {
                assert_eq!(d.severity, Severity::Warning, "{d}");
                (d.message.as_str(), d.json_path.as_deref(), d.line, d.column)
            })
            .collect();
        assert_eq!(
            dupes,
            vec![
                (
                    "duplicate key \"command\" (at 4:57 and again at 4:80): only the last one is read — the first is ignored",
                    Some("hooks.PreToolUse[0].hooks[0].command"),
                    Some(4),
                    Some(80)
                ),
                (
                    "duplicate key \"PreToolUse\" (at 3:5 and again at 6:5): only the last one is read — the first is ignored",
                    Some("hooks.PreToolUse"),
                    Some(6),
                    Some(5)
                ),
                (
                    "duplicate key \"hooks\" (at 2:3 and again at 10:3): only the last one is read — the first is ignored",
                    Some("hooks"),
                    Some(10),
                    Some(3)
                ),
            ],
            "{dialect}"
        );
        // What is loaded is what JSON keeps: the last of each.
        assert_eq!(r.rules.len(), 1, "{dialect}");
        assert_eq!(r.rules[0].handler.label(), "stop.sh", "{dialect}");
    }
}

#[test]
fn a_file_without_repeats_has_no_such_warning() {
    let r = parse_as(
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}], "PreToolUse": []}}"#,
        "hooks.json",
        Dialect::Claude,
    );
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
}

#[test]
fn repeated_keys_in_a_manifest_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    std::fs::write(
        root.join(".claude-plugin/plugin.json"),
        "{\"name\": \"a\",\n \"name\": \"b\"}",
    )
    .unwrap();
    let r = load_plugin(&root, &LoadOptions::default());
    let [d] = r.diagnostics.as_slice() else {
        panic!("{:#?}", r.diagnostics)
    };
    assert_eq!(
        d.message,
        "duplicate key \"name\" (at 1:2 and again at 2:2): only the last one is read — the first is ignored"
    );
    assert_eq!((d.line, d.column), (Some(2), Some(2)));
    assert!(d.file.ends_with(".claude-plugin/plugin.json"), "{d}");
    assert_eq!(r.plugins[0].name, "b");
}
