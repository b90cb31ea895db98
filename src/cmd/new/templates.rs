//! The plugin templates of `hookbox new`, compiled into the binary from `templates/` (and, for the
//! wasm languages, from the repository's own guest SDK, WIT and lock files, so a generated guest
//! builds against exactly the contract this hookbox runs): nothing is downloaded to start a
//! plugin. [`plugin`] renders the files of one kind in one language; `{{name}}`, `{{snake}}`,
//! `{{kind}}`, `{{lang}}` and a few per-template values are filled in.

/// What the plugin does: one hook of one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `PreToolUse` on `Bash`: deny commands matching a list.
    Guard,
    /// `UserPromptSubmit`: add context.
    Context,
    /// `Stop`: one more round after an empty answer.
    Stop,
    /// `PostToolUse` on every tool: record the call.
    Audit,
}

/// The language of the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    /// A POSIX `sh` script.
    Sh,
    /// A `python3` script.
    Python,
    /// A `node` script (ES module).
    Node,
    /// A Rust component (cargo, the guest SDK).
    Rust,
    /// A JavaScript component: QuickJS, pre-initialised (`hookbox build-js`, else componentize-qjs).
    Js,
    /// A Python component (componentize-py).
    PythonWasm,
}

impl Kind {
    /// Every kind.
    #[cfg(test)]
    pub(crate) const ALL: [Kind; 4] = [Kind::Guard, Kind::Context, Kind::Stop, Kind::Audit];

    /// The name on the command line.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Guard => "guard",
            Kind::Context => "context",
            Kind::Stop => "stop",
            Kind::Audit => "audit",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Kind::Guard => {
                "Refuses dangerous shell commands (rm -rf /, git push --force, mkfs) before they run."
            }
            Kind::Context => "Adds the project's conventions to every prompt.",
            Kind::Stop => "Keeps a turn going once when the model ends it with an empty answer.",
            Kind::Audit => "Records every tool call.",
        }
    }

    /// The `hookbox dispatch` arguments of the README's "record a case" line.
    fn record_command(self) -> &'static str {
        match self {
            Kind::Guard => {
                "hookbox dispatch --event PreToolUse --plugin . --tool Bash --tool-input '{\"command\":\"mkfs /dev/sda\"}' --save-case tests/my-case.json"
            }
            Kind::Context => {
                "hookbox dispatch --event UserPromptSubmit --plugin . --prompt 'Can I deploy?' --save-case tests/my-case.json"
            }
            Kind::Stop => {
                "echo '{\"last_assistant_message\": \"\"}' | hookbox dispatch --event Stop --plugin . --payload - --save-case tests/my-case.json"
            }
            Kind::Audit => {
                "hookbox dispatch --event PostToolUse --plugin . --tool Read --tool-input '{\"file_path\":\"README.md\"}' --save-case tests/my-case.json"
            }
        }
    }

    fn what(self, wasm: bool) -> &'static str {
        match (self, wasm) {
            (Kind::Guard, _) => {
                "**Decides:** on `PreToolUse` of `Bash`, a **deny** (the reason is shown to the model) when the \
command contains `rm -rf /`, `git push --force` or `mkfs`; otherwise no decision, so the agent's \
own permission flow applies. Edit the list of patterns to make it yours."
            }
            (Kind::Context, false) => {
                "**Decides:** nothing to block — on every `UserPromptSubmit` it adds a line to the \
conversation, then the project's `CONTEXT.md` when there is one (its first 4000 bytes)."
            }
            (Kind::Context, true) => {
                "**Decides:** nothing to block — on every `UserPromptSubmit` it adds the rule's \
`config.context` (in `hooks/hooks.json`) to the conversation. The sandbox grants no files."
            }
            (Kind::Stop, _) => {
                "**Decides:** on `Stop`, when the model's last answer is empty, the turn **continues** \
once with a follow-up asking for the final answer; a turn that already continues because of a \
Stop hook (`stop_hook_active`) ends, so it cannot loop."
            }
            (Kind::Audit, false) => {
                "**Decides:** nothing — on every `PostToolUse` it appends the time and the tool's name \
to `audit.log` in the plugin's data folder (`CLAUDE_PLUGIN_DATA`, which hookbox keeps outside \
the project)."
            }
            (Kind::Audit, true) => {
                "**Decides:** nothing — on every `PostToolUse` it logs the tool's name through the \
host's `log` (shown with `HOOKBOX_LOG=info`). The sandbox grants no files."
            }
        }
    }

    /// The cases every plugin of this kind starts with: the behaviour is the same in every
    /// language, so are the cases (the wasm context takes its text from the rule's config).
    fn tests(self, wasm: bool) -> &'static [(&'static str, &'static str)] {
        match (self, wasm) {
            (Kind::Guard, _) => &[
                (
                    "denies-rm-rf.json",
                    include_str!("../../../templates/tests/guard/denies-rm-rf.json"),
                ),
                (
                    "denies-force-push-in-a-compound-command.json",
                    include_str!(
                        "../../../templates/tests/guard/denies-force-push-in-a-compound-command.json"
                    ),
                ),
                (
                    "lets-a-harmless-command-through.json",
                    include_str!(
                        "../../../templates/tests/guard/lets-a-harmless-command-through.json"
                    ),
                ),
            ],
            (Kind::Context, false) => &[
                (
                    "adds-context-to-every-prompt.json",
                    include_str!(
                        "../../../templates/tests/context-native/adds-context-to-every-prompt.json"
                    ),
                ),
                (
                    "adds-the-projects-notes.json",
                    include_str!(
                        "../../../templates/tests/context-native/adds-the-projects-notes.json"
                    ),
                ),
            ],
            (Kind::Context, true) => &[(
                "adds-context-to-every-prompt.json",
                include_str!(
                    "../../../templates/tests/context-wasm/adds-context-to-every-prompt.json"
                ),
            )],
            (Kind::Stop, _) => &[
                (
                    "an-empty-answer-gets-another-round.json",
                    include_str!(
                        "../../../templates/tests/stop/an-empty-answer-gets-another-round.json"
                    ),
                ),
                (
                    "an-answer-ends-the-turn.json",
                    include_str!("../../../templates/tests/stop/an-answer-ends-the-turn.json"),
                ),
                (
                    "no-second-round.json",
                    include_str!("../../../templates/tests/stop/no-second-round.json"),
                ),
                (
                    "no-last-message-is-left-alone.json",
                    include_str!(
                        "../../../templates/tests/stop/no-last-message-is-left-alone.json"
                    ),
                ),
            ],
            (Kind::Audit, _) => &[
                (
                    "records-a-tool-call.json",
                    include_str!("../../../templates/tests/audit/records-a-tool-call.json"),
                ),
                (
                    "survives-a-hostile-tool-name.json",
                    include_str!(
                        "../../../templates/tests/audit/survives-a-hostile-tool-name.json"
                    ),
                ),
            ],
        }
    }

    fn hooks_json(self, wasm: bool) -> &'static str {
        match (self, wasm) {
            (Kind::Guard, false) => include_str!("../../../templates/hooks/guard-native.json"),
            (Kind::Context, false) => include_str!("../../../templates/hooks/context-native.json"),
            (Kind::Stop, false) => include_str!("../../../templates/hooks/stop-native.json"),
            (Kind::Audit, false) => include_str!("../../../templates/hooks/audit-native.json"),
            (Kind::Guard, true) => include_str!("../../../templates/hooks/guard-wasm.json"),
            (Kind::Context, true) => include_str!("../../../templates/hooks/context-wasm.json"),
            (Kind::Stop, true) => include_str!("../../../templates/hooks/stop-wasm.json"),
            (Kind::Audit, true) => include_str!("../../../templates/hooks/audit-wasm.json"),
        }
    }
}

impl Lang {
    /// Every language.
    #[cfg(test)]
    pub(crate) const ALL: [Lang; 6] = [
        Lang::Sh,
        Lang::Python,
        Lang::Node,
        Lang::Rust,
        Lang::Js,
        Lang::PythonWasm,
    ];

    /// The name on the command line.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Lang::Sh => "sh",
            Lang::Python => "python",
            Lang::Node => "node",
            Lang::Rust => "rust",
            Lang::Js => "js",
            Lang::PythonWasm => "python-wasm",
        }
    }

    /// A WebAssembly component (built), not a native script.
    pub(crate) fn is_wasm(self) -> bool {
        matches!(self, Lang::Rust | Lang::Js | Lang::PythonWasm)
    }

    fn prerequisites(self) -> &'static str {
        match self {
            Lang::Sh => "Needs `sh`. ",
            Lang::Python => "Needs `python3`. ",
            Lang::Node => "Needs `node` (18 or later). ",
            Lang::Rust => {
                "Needs cargo and, once, `rustup target add wasm32-wasip2`; `build.sh` builds \
`guest/` and copies the component to `hooks/`. "
            }
            Lang::Js => {
                "Needs nothing more when `hookbox build-js --check` says this hookbox carries its \
QuickJS runtime: `build.sh` runs `hookbox build-js` (~0.95 MB, ~0.1 ms per event). Otherwise \
needs `node` 20 or later with `npm`: the first build installs componentize-qjs 0.4.5 (pinned in \
`package-lock.json`; a prebuilt native module, no compiler) and builds with it (~1.6 MB, \
~0.25 ms per event). Either builds in about a second. "
            }
            Lang::PythonWasm => {
                "Needs componentize-py 0.25.1, once: `python3 -m venv .venv && .venv/bin/pip install \
-r requirements.txt` (`build.sh` uses `.venv/bin/componentize-py`, else the one on `PATH`). The \
component is ~18 MB; the first `hookbox test` after a build compiles it (7–50 s), later runs take \
it from the cache. "
            }
        }
    }

    fn build_command(self) -> &'static str {
        if self.is_wasm() {
            "sh build.sh"
        } else {
            "hookbox validate ."
        }
    }

    fn files_doc(self, kind: Kind) -> String {
        let hooks = "- `hooks/hooks.json`: the rule — which event, which tool, what runs (the \
agent-neutral Claude Code shape).\n";
        let body = match self {
            Lang::Sh | Lang::Python | Lang::Node => {
                let ext = self.script_ext();
                let rules = if kind == Kind::Guard {
                    format!(
                        "\n- `scripts/rules.{ext}`: the patterns it refuses, loaded by the hook \
through `CLAUDE_PLUGIN_ROOT`."
                    )
                } else {
                    String::new()
                };
                format!(
                    "- `scripts/{}.{ext}`: the hook: reads the event on stdin, answers on stdout \
(or exit 2 and stderr).{rules}",
                    kind.as_str()
                )
            }
            Lang::Rust => "- `guest/src/lib.rs`: the hook (the `Hook` trait of the guest SDK); \
`guest/hookbox-guest/` is the SDK and `wit/hook.wit` the contract, both as this hookbox ships them.\n\
- `build.sh`: builds `hooks/{{snake}}.wasm`."
                .to_owned(),
            Lang::Js => "- `src/hook.js`: the hook (an exported `handler` object); `wit/hook.wit` is \
the contract.\n- `build.sh`: builds `hooks/{{snake}}.wasm` with `hookbox build-js`, or else with \
componentize-qjs (`build.mjs`, `package.json`, `package-lock.json`)."
                .to_owned(),
            Lang::PythonWasm => "- `src/app.py`: the hook (a `Handler` class); `wit/hook.wit` is the \
contract.\n- `build.sh`, `requirements.txt`: build `hooks/{{snake}}.wasm` with componentize-py."
                .to_owned(),
        };
        format!("{hooks}{body}")
    }

    fn script_ext(self) -> &'static str {
        match self {
            Lang::Sh => "sh",
            Lang::Python => "py",
            _ => "cjs",
        }
    }

    /// The command of a native rule, as written in hooks.json.
    fn command(self, kind: Kind) -> String {
        let program = match self {
            Lang::Sh => "sh",
            Lang::Python => "python3",
            // hookbox may run the script from a sealed copy (/proc/self/fd/N): node must not
            // resolve it to its real path (a deleted memfd), and reads it as CommonJS.
            _ => "node --preserve-symlinks-main",
        };
        format!(
            "{program} \"${{CLAUDE_PLUGIN_ROOT}}/scripts/{}.{}\"",
            kind.as_str(),
            self.script_ext()
        )
    }
}

/// One file of a generated plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TemplateFile {
    /// Relative to the plugin folder, `/`-separated.
    pub(crate) path: String,
    /// The content.
    pub(crate) text: String,
    /// Written with mode 0755 (scripts), else 0644.
    pub(crate) executable: bool,
}

/// The files of a `kind` plugin in `lang` named `name` (already checked: see `new::check_name`).
pub(crate) fn plugin(name: &str, kind: Kind, lang: Lang) -> Vec<TemplateFile> {
    let wasm = lang.is_wasm();
    let mut out: Vec<(String, String, bool)> = Vec::new();
    let mut add = |path: &str, text: &str, executable: bool| {
        out.push((path.to_owned(), text.to_owned(), executable));
    };
    add(
        ".claude-plugin/plugin.json",
        include_str!("../../../templates/plugin.json"),
        false,
    );
    add(
        ".gitignore",
        include_str!("../../../templates/gitignore"),
        false,
    );
    add(
        "README.md",
        include_str!("../../../templates/readme.md"),
        false,
    );
    add("hooks/hooks.json", kind.hooks_json(wasm), false);
    for (file, text) in kind.tests(wasm) {
        add(&format!("tests/{file}"), text, false);
    }
    let script =
        |kind: Kind, lang: Lang| format!("scripts/{}.{}", kind.as_str(), lang.script_ext());
    match lang {
        Lang::Sh => {
            add(&script(kind, lang), native_sh(kind), true);
            if kind == Kind::Guard {
                add(
                    "scripts/rules.sh",
                    include_str!("../../../templates/native/guard-rules.sh"),
                    false,
                );
            }
        }
        Lang::Python => {
            add(&script(kind, lang), native_py(kind), true);
            if kind == Kind::Guard {
                add(
                    "scripts/rules.py",
                    include_str!("../../../templates/native/guard-rules.py"),
                    false,
                );
            }
        }
        Lang::Node => {
            add(&script(kind, lang), native_cjs(kind), true);
            if kind == Kind::Guard {
                add(
                    "scripts/rules.cjs",
                    include_str!("../../../templates/native/guard-rules.cjs"),
                    false,
                );
            }
        }
        Lang::Rust => {
            add(
                "build.sh",
                include_str!("../../../templates/rust/build.sh"),
                true,
            );
            add("wit/hook.wit", WIT, false);
            add(
                "guest/Cargo.toml",
                include_str!("../../../templates/rust/Cargo.toml"),
                false,
            );
            // The lock of hookbox's own guests: the same crate versions, so a build next to
            // hookbox's reuses its compiled dependencies; cargo drops the entries it does not use.
            add(
                "guest/Cargo.lock",
                include_str!("../../../guest-examples/Cargo.lock"),
                false,
            );
            add(
                "guest/.cargo/config.toml",
                include_str!("../../../templates/rust/cargo-config.toml"),
                false,
            );
            add("guest/src/lib.rs", rust_hook(kind), false);
            add(
                "guest/hookbox-guest/Cargo.toml",
                include_str!("../../../templates/rust/sdk-Cargo.toml"),
                false,
            );
            for (file, text) in SDK {
                add(&format!("guest/hookbox-guest/src/{file}"), text, false);
            }
        }
        Lang::Js => {
            add(
                "build.sh",
                include_str!("../../../templates/js/build.sh"),
                true,
            );
            add(
                "build.mjs",
                include_str!("../../../templates/js/build.mjs"),
                false,
            );
            add(
                "package.json",
                include_str!("../../../templates/js/package.json"),
                false,
            );
            add(
                "package-lock.json",
                include_str!("../../../templates/js/package-lock.json"),
                false,
            );
            add("src/hook.js", js_hook(kind), false);
            add("wit/hook.wit", WIT, false);
        }
        Lang::PythonWasm => {
            add(
                "build.sh",
                include_str!("../../../templates/python-wasm/build.sh"),
                true,
            );
            add(
                "requirements.txt",
                include_str!("../../../templates/python-wasm/requirements.txt"),
                false,
            );
            add("src/app.py", python_hook(kind), false);
            add("wit/hook.wit", WIT, false);
        }
    }
    let snake = name.replace('-', "_");
    let command = json_string_body(&lang.command(kind));
    let files_doc = lang.files_doc(kind);
    let vars: [(&str, &str); 11] = [
        // Filled first: they hold `{{name}}` and `{{snake}}` themselves.
        ("files", &files_doc),
        ("what", kind.what(wasm)),
        ("record", kind.record_command()),
        ("prereq", lang.prerequisites()),
        ("build", lang.build_command()),
        ("command", &command),
        ("description", kind.description()),
        ("kind", kind.as_str()),
        ("lang", lang.as_str()),
        ("snake", &snake),
        ("name", name),
    ];
    out.into_iter()
        .map(|(path, text, executable)| TemplateFile {
            path,
            text: fill(&text, &vars),
            executable,
        })
        .collect()
}

/// `text` with every `{{key}}` of `vars` replaced, in the order of `vars`.
fn fill(text: &str, vars: &[(&str, &str)]) -> String {
    let mut out = text.to_owned();
    for (key, value) in vars {
        out = out.replace(&format!("{{{{{key}}}}}"), value);
    }
    out
}

/// `s` as the inside of a JSON string (the template supplies the quotes).
fn json_string_body(s: &str) -> String {
    let quoted = serde_json::Value::String(s.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// hookbox's WIT contract, as this binary runs it.
const WIT: &str = include_str!("../../../wit/hook.wit");

/// The guest SDK's sources (`crates/guest/src`), copied into a Rust plugin.
const SDK: [(&str, &str); 5] = [
    ("lib.rs", include_str!("../../../crates/guest/src/lib.rs")),
    (
        "event.rs",
        include_str!("../../../crates/guest/src/event.rs"),
    ),
    ("hook.rs", include_str!("../../../crates/guest/src/hook.rs")),
    ("host.rs", include_str!("../../../crates/guest/src/host.rs")),
    (
        "response.rs",
        include_str!("../../../crates/guest/src/response.rs"),
    ),
];

fn native_sh(kind: Kind) -> &'static str {
    match kind {
        Kind::Guard => include_str!("../../../templates/native/guard.sh"),
        Kind::Context => include_str!("../../../templates/native/context.sh"),
        Kind::Stop => include_str!("../../../templates/native/stop.sh"),
        Kind::Audit => include_str!("../../../templates/native/audit.sh"),
    }
}

fn native_py(kind: Kind) -> &'static str {
    match kind {
        Kind::Guard => include_str!("../../../templates/native/guard.py"),
        Kind::Context => include_str!("../../../templates/native/context.py"),
        Kind::Stop => include_str!("../../../templates/native/stop.py"),
        Kind::Audit => include_str!("../../../templates/native/audit.py"),
    }
}

fn native_cjs(kind: Kind) -> &'static str {
    match kind {
        Kind::Guard => include_str!("../../../templates/native/guard.cjs"),
        Kind::Context => include_str!("../../../templates/native/context.cjs"),
        Kind::Stop => include_str!("../../../templates/native/stop.cjs"),
        Kind::Audit => include_str!("../../../templates/native/audit.cjs"),
    }
}

fn rust_hook(kind: Kind) -> &'static str {
    match kind {
        Kind::Guard => include_str!("../../../templates/rust/guard.rs"),
        Kind::Context => include_str!("../../../templates/rust/context.rs"),
        Kind::Stop => include_str!("../../../templates/rust/stop.rs"),
        Kind::Audit => include_str!("../../../templates/rust/audit.rs"),
    }
}

fn js_hook(kind: Kind) -> &'static str {
    match kind {
        Kind::Guard => include_str!("../../../templates/js/guard.js"),
        Kind::Context => include_str!("../../../templates/js/context.js"),
        Kind::Stop => include_str!("../../../templates/js/stop.js"),
        Kind::Audit => include_str!("../../../templates/js/audit.js"),
    }
}

fn python_hook(kind: Kind) -> &'static str {
    match kind {
        Kind::Guard => include_str!("../../../templates/python-wasm/guard.py"),
        Kind::Context => include_str!("../../../templates/python-wasm/context.py"),
        Kind::Stop => include_str!("../../../templates/python-wasm/stop.py"),
        Kind::Audit => include_str!("../../../templates/python-wasm/audit.py"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_fills_every_placeholder_and_its_json_parses() {
        for kind in Kind::ALL {
            for lang in Lang::ALL {
                let files = plugin("my-plugin", kind, lang);
                for f in &files {
                    assert!(
                        !f.text.contains("{{"),
                        "{} {} {}: a placeholder is left: {}",
                        kind.as_str(),
                        lang.as_str(),
                        f.path,
                        f.text
                    );
                    if f.path.ends_with(".json") {
                        serde_json::from_str::<serde_json::Value>(&f.text).unwrap_or_else(|e| {
                            panic!("{} {} {}: {e}", kind.as_str(), lang.as_str(), f.path)
                        });
                    }
                }
                let mut paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
                paths.sort_unstable();
                paths.dedup();
                assert_eq!(paths.len(), files.len(), "a path is written twice");
            }
        }
    }

    #[test]
    fn a_native_rule_names_its_script_through_the_plugin_root() {
        let files = plugin("g", Kind::Guard, Lang::Python);
        let hooks = files.iter().find(|f| f.path == "hooks/hooks.json").unwrap();
        let v: serde_json::Value = serde_json::from_str(&hooks.text).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "python3 \"${CLAUDE_PLUGIN_ROOT}/scripts/guard.py\""
        );
        assert!(
            files
                .iter()
                .any(|f| f.path == "scripts/guard.py" && f.executable)
        );
    }
}
