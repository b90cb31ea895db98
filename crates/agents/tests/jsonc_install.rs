//! The `jsonc_install` fuzz target's properties (`fuzz/props/jsonc.rs`, included by path) on
//! hand-made hostile configuration files, for every agent whose file is JSON: comments in every
//! place, CRLF line ends, tabs, duplicate keys, a user's `"hooks": {}`, entries of other tools,
//! files cut short. Findings of the fuzz target are kept here as cases.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers may panic: a panic is a failed test"
)]

#[path = "../../../fuzz/props/jsonc.rs"]
mod jsonc_props;

const FILES: &[&str] = &[
    "",
    "{}",
    "{}\n",
    "  {  }  ",
    "// top\n{\n  // before\n  \"theme\": \"dark\" /* after */,\n  \"hooks\": {} // end\n}\n",
    "{\r\n  \"hooks\": {\r\n    \"PreToolUse\": [\r\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}\r\n    ]\r\n  }\r\n}\r\n",
    "{\n\t\"hooks\": {\n\t\t\"Stop\": []\n\t}\n}",
    "{\"hooks\": {\"PreToolUse\": []}, \"hooks\": {\"Stop\": []}}",
    "{\"version\": 1, \"hooks\": {\"preToolUse\": [{\"command\": \"./mine.sh\"}], \"stop\": [ /* none */ ]}}",
    "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"othertool hook --agent claude --plugin x\"}]}]}}",
    "{\"ünïcode\": \"✓\", \"hooks\": {\"BeforeTool\": [/* a */ /* b */]}}",
    "{\"a\": [1, 2, {\"b\": null}], \"hooks\": {\n}}",
    "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"/usr/bin/hookbox hook --agent claude --event PreToolUse --plugin /old\"}, {\"type\": \"command\", \"command\": \"./mine.sh\"}]}\n    ]\n  }\n}",
    "{\"hooks\": {\"PreToolUse\": [{\"hooks\": []}]}}",
    "{\"hooks\"",
    "[]",
    "{\"hooks\": []}",
    "/* only a comment */",
];

#[test]
fn every_hostile_file_keeps_every_byte_outside_hookboxs_entries() {
    for agent in jsonc_props::JSON_AGENTS {
        for text in FILES {
            for two in [false, true] {
                jsonc_props::check(agent, text, two);
            }
        }
    }
}
