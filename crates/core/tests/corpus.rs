//! The real-world corpus: every hook file in `tests/corpus/hooks-real/` (verbatim copies of
//! public files, MIT/Apache-2.0, see the README there) is loaded through the public API, one
//! trial per file, against the expectations in [`EXPECTED`].
//!
//! File names encode where the file lives (`owner__repo__path__to__file`), so the suite rebuilds
//! each repository's layout in a temporary folder first: a `.github/hooks/` file is then seen
//! where Copilot keeps it, and a manifest finds its plugin's hook files beside it.
//!
//! Checked per file: Claude Code, Codex and Ghast hook files load with zero errors, the expected
//! number of rules, and exactly the listed warnings (none is malformed JSON; one uses an `agent`
//! hook, one writes timeouts in milliseconds); Cursor, Copilot and Windsurf files are reported
//! once, as their format; manifests load their plugin. A README row without an expectation, or
//! an expectation without a file, fails the suite.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use hookbox_core::Dialect;
use hookbox_core::config::{FileStatus, ForeignFormat, LoadOptions, LoadReport, load_paths};
use hookbox_core::diagnostic::Severity;
use libtest_mimic::{Arguments, Failed, Trial};

/// What loading one corpus file must give.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// A hooks file: this many rules, exactly these diagnostics (severity, message).
    Hooks {
        rules: usize,
        diags: &'static [(Severity, &'static str)],
    },
    /// Another agent's file: one warning naming the format, nothing loaded.
    Foreign(ForeignFormat),
    /// A manifest: its plugin loads with this name, dialect and rule count, and these diagnostics.
    Manifest {
        plugin: &'static str,
        dialect: Dialect,
        rules: usize,
        diags: &'static [(Severity, &'static str)],
    },
}

use Expect::{Foreign, Hooks, Manifest};
use Severity::Warning;

const NONE: &[(Severity, &str)] = &[];

const MS_3000: &str =
    "timeout 3000 looks like milliseconds: hookbox reads seconds, so this hook may run for 50 min";

/// Per-file expectations; counts are handlers in the file, checked by hand.
const EXPECTED: &[(&str, Expect)] = &[
    (
        "0x1337c0d3__claude-security__hooks__hooks.json",
        Hooks {
            rules: 5,
            diags: NONE,
        },
    ),
    (
        "0xDarkMatter__claude-mods__hooks__hooks.json",
        Hooks {
            rules: 7,
            diags: NONE,
        },
    ),
    (
        "0xrdan__claude-router__.claude-plugin__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "1Password__agent-hooks__.claude__settings.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "1Password__agent-hooks__.cursor__hooks.json",
        Foreign(ForeignFormat::Cursor),
    ),
    (
        "1Password__agent-hooks__.github__hooks__hooks.json",
        Foreign(ForeignFormat::Copilot),
    ),
    (
        "1Password__agent-hooks__.windsurf__hooks.json",
        Foreign(ForeignFormat::Windsurf),
    ),
    (
        "1c-syntax__claude-code-bsl-lsp__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "Edmonds-Commerce-Limited__claude-code-hooks-daemon__.claude__settings.json",
        Hooks {
            rules: 10,
            diags: NONE,
        },
    ),
    (
        "L3DigitalNet__Claude-Code-Plugins__.claude__settings.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "L3DigitalNet__Claude-Code-Plugins__plugins__uv-strict-python__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "Trapezohe__ghast-plugins__plugins__ponytail__hooks__hooks.json",
        Hooks {
            rules: 3,
            diags: NONE,
        },
    ),
    (
        "Trapezohe__ghast-plugins__plugins__ponytail__plugin.json",
        Manifest {
            plugin: "ponytail",
            dialect: Dialect::Ghast,
            rules: 3,
            diags: NONE,
        },
    ),
    (
        "affaan-m__everything-claude-code__.cursor__hooks.json",
        Foreign(ForeignFormat::Cursor),
    ),
    (
        "anthropics__claude-plugins-official__plugins__claude-security__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "anthropics__claude-plugins-official__plugins__explanatory-output-style__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "anthropics__claude-plugins-official__plugins__hookify__hooks__hooks.json",
        Hooks {
            rules: 4,
            diags: NONE,
        },
    ),
    (
        "anthropics__claude-plugins-official__plugins__ralph-loop__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "anthropics__claude-plugins-official__plugins__security-guidance__hooks__hooks.json",
        Hooks {
            rules: 9,
            diags: NONE,
        },
    ),
    (
        "bengous__claude-code-plugins__.claude__settings.json",
        Hooks {
            rules: 6,
            diags: NONE,
        },
    ),
    (
        "davila7__claude-code-templates__cli-tool__components__hooks__development-tools__worktree-ghostty.json",
        Hooks {
            rules: 2,
            diags: NONE,
        },
    ),
    (
        "davila7__claude-code-templates__cli-tool__components__hooks__monitoring__desktop-notification-on-stop.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "davila7__claude-code-templates__cli-tool__components__hooks__security__ai-bash-guard.json",
        Hooks {
            rules: 0,
            diags: &[(Warning, "Hook type 'agent' is not supported yet — skipped.")],
        },
    ),
    (
        "davila7__claude-code-templates__cli-tool__components__hooks__security__force-push-blocker.json",
        Hooks {
            rules: 2,
            diags: NONE,
        },
    ),
    (
        "davila7__claude-code-templates__cli-tool__templates__python__.claude__settings.json",
        Hooks {
            rules: 11,
            diags: NONE,
        },
    ),
    (
        // Group-level `description` and `profile` keys are tolerated.
        "gtapps__claude-code-hermit__plugins__claude-code-homeassistant-hermit__hooks__hooks.json",
        Hooks {
            rules: 2,
            // A `profile` on a matcher group: no agent reads it, so it limits nothing.
            diags: &[(
                Warning,
                "unknown key 'profile' in a matcher group — ignored, so it changes nothing",
            )],
        },
    ),
    (
        "karanb192__claude-code-hooks__plugins__block-dangerous-commands__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "karanb192__claude-code-hooks__plugins__config-watch__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "karanb192__claude-code-hooks__plugins__guard-pack__.claude-plugin__plugin.json",
        Manifest {
            plugin: "guard-pack",
            dialect: Dialect::Claude,
            rules: 1,
            diags: &[(
                Warning,
                "Duplicate hooks file detected: ./hooks/hooks.json resolves to already-loaded file hooks/hooks.json — loaded once",
            )],
        },
    ),
    (
        "karanb192__claude-code-hooks__plugins__guard-pack__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "karanb192__claude-code-hooks__plugins__instructions-audit__hooks__hooks.json",
        Hooks {
            rules: 3,
            diags: NONE,
        },
    ),
    (
        "karanb192__claude-code-hooks__plugins__nerf-receipts__hooks__hooks.json",
        Hooks {
            rules: 6,
            diags: NONE,
        },
    ),
    (
        "karanb192__claude-code-hooks__plugins__notify-permission__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "kenryu42__claude-code-safety-net__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        // The corpus holds the manifest but not the plugin's hooks/hooks.json.
        "melodic-software__claude-code-plugins__plugins__enterprise-architecture__.claude-plugin__plugin.json",
        Manifest {
            plugin: "enterprise-architecture",
            dialect: Dialect::Claude,
            rules: 0,
            diags: &[(
                Warning,
                "hooks file \"./hooks/hooks.json\" named by manifest field 'hooks' does not exist — not loaded",
            )],
        },
    ),
    (
        // `"hooks": {}`: an empty inline object, so no hooks and no default file.
        "obra__superpowers__.codex-plugin__plugin.json",
        Manifest {
            plugin: "superpowers",
            dialect: Dialect::Claude,
            rules: 0,
            diags: NONE,
        },
    ),
    (
        "obra__superpowers__.cursor-plugin__plugin.json",
        Foreign(ForeignFormat::CursorPlugin),
    ),
    (
        "obra__superpowers__hooks__hooks-cursor.json",
        Foreign(ForeignFormat::Cursor),
    ),
    (
        "obra__superpowers__hooks__hooks.json",
        Hooks {
            rules: 1,
            diags: NONE,
        },
    ),
    (
        "severity1__claude-code-prompt-improver__hooks__hooks.json",
        Hooks {
            rules: 2,
            diags: NONE,
        },
    ),
    (
        "terrylica__cc-skills__plugins__statusline-tools__hooks__hooks.json",
        Hooks {
            rules: 2,
            diags: &[(Warning, MS_3000), (Warning, MS_3000)],
        },
    ),
    (
        "thedotmack__claude-mem__cursor-hooks__hooks.json",
        Foreign(ForeignFormat::Cursor),
    ),
    (
        "thedotmack__claude-mem__plugin__.codex-plugin__plugin.json",
        Manifest {
            plugin: "claude-mem",
            dialect: Dialect::Claude,
            rules: 5,
            diags: NONE,
        },
    ),
    (
        "thedotmack__claude-mem__plugin__hooks__codex-hooks.json",
        Hooks {
            rules: 5,
            diags: NONE,
        },
    ),
    (
        "thedotmack__claude-mem__plugin__hooks__hooks.json",
        Hooks {
            rules: 7,
            diags: NONE,
        },
    ),
    (
        "verygoodplugins__mcp-automem__plugins__automem__hooks__hooks.json",
        Hooks {
            rules: 2,
            diags: NONE,
        },
    ),
    (
        "verygoodplugins__mcp-automem__templates__claude-code__settings.json",
        Hooks {
            rules: 2,
            diags: NONE,
        },
    ),
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/hooks-real")
}

/// `owner__repo__a__b.json` → `owner__repo/a/b.json`.
fn layout_path(name: &str) -> PathBuf {
    let parts: Vec<&str> = name.split("__").collect();
    let mut p = PathBuf::from(format!("{}__{}", parts[0], parts[1]));
    for part in &parts[2..] {
        p.push(part);
    }
    p
}

/// The README's `format` and `shape` columns, by file name.
fn readme_rows() -> BTreeMap<String, (String, String)> {
    let text = fs::read_to_string(corpus_dir().join("README.md")).expect("corpus README");
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            Some((
                cols.get(1)?.trim_matches('`').to_owned(),
                (cols.get(2)?.to_string(), cols.get(3)?.to_string()),
            ))
        })
        .collect()
}

fn diags_of(r: &LoadReport) -> Vec<(Severity, String)> {
    r.diagnostics
        .iter()
        .map(|d| (d.severity, d.message.clone()))
        .collect()
}

fn check(name: &str, expect: Expect, format: &str, shape: &str, path: &Path) -> Result<(), Failed> {
    let r = load_paths(&[path], &LoadOptions::default());
    let got = diags_of(&r);
    let want = |d: &[(Severity, &str)]| -> Vec<(Severity, String)> {
        d.iter().map(|(s, m)| (*s, (*m).to_owned())).collect()
    };
    let fail = |what: String| {
        Err(Failed::from(format!(
            "{name}: {what}\ndiagnostics: {:#?}",
            r.diagnostics
        )))
    };
    // Every diagnostic about a part of a file is located.
    if let Some(d) = r
        .diagnostics
        .iter()
        .find(|d| d.json_path.is_some() && d.line.is_none())
    {
        return fail(format!("diagnostic without line:column: {d}"));
    }
    match expect {
        Hooks { rules, diags } => {
            if !matches!(format, "Claude Code" | "Codex" | "Ghast") || shape != "nested" {
                return fail(format!(
                    "README says {format}/{shape}, expected a nested Claude-format file"
                ));
            }
            if got != want(diags) {
                return fail(format!("expected diagnostics {diags:?}"));
            }
            if r.rules.len() != rules {
                return fail(format!("{} rules, expected {rules}", r.rules.len()));
            }
            if let Some(rule) = r
                .rules
                .iter()
                .find(|x| x.source.line.is_none() || x.source.json_path.is_empty())
            {
                return fail(format!("rule without location: {:?}", rule.source));
            }
            if r.rules
                .iter()
                .enumerate()
                .any(|(i, x)| x.index != i || x.dialect != Dialect::Claude)
            {
                return fail("rules out of load order, or not in the claude dialect".to_owned());
            }
        }
        Foreign(f) => {
            let is_foreign_format = ["Cursor", "GitHub Copilot", "Windsurf", "Gemini"]
                .iter()
                .any(|p| format.starts_with(p));
            if !is_foreign_format {
                return fail(format!(
                    "README says {format}, expected another agent's format"
                ));
            }
            if got != [(Warning, f.message())] {
                return fail(format!("expected exactly one warning naming {f:?}"));
            }
            if !r.rules.is_empty() || r.foreign.len() != 1 || r.foreign[0].format != f {
                return fail(format!("expected foreign {f:?} and no rules"));
            }
            if !matches!(r.files.as_slice(), [s] if s.status == FileStatus::Foreign { format: f }) {
                return fail(format!("file summary: {:?}", r.files));
            }
        }
        Manifest {
            plugin,
            dialect,
            rules,
            diags,
        } => {
            if shape != "manifest" {
                return fail(format!("README says shape {shape}, expected manifest"));
            }
            if got != want(diags) {
                return fail(format!("expected diagnostics {diags:?}"));
            }
            let [p] = r.plugins.as_slice() else {
                return fail(format!("plugins: {:?}", r.plugins));
            };
            if (p.name.as_str(), p.dialect, r.rules.len()) != (plugin, dialect, rules) {
                return fail(format!(
                    "plugin {} ({}) with {} rules, expected {plugin} ({dialect}) with {rules}",
                    p.name,
                    p.dialect,
                    r.rules.len()
                ));
            }
            if r.rules
                .iter()
                .any(|x| x.dialect != dialect || x.plugin != 0)
            {
                return fail("rules not attributed to the plugin's dialect".to_owned());
            }
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let dir = corpus_dir();
    let tree = tempfile::tempdir().expect("temp dir");
    let rows = readme_rows();
    let mut files: Vec<String> = fs::read_dir(&dir)
        .expect("corpus folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n != "README.md")
        .collect();
    files.sort();
    for f in &files {
        let dest = tree.path().join(layout_path(f));
        fs::create_dir_all(dest.parent().expect("has a parent")).expect("mkdir");
        fs::copy(dir.join(f), &dest).expect("copy");
    }
    let mut trials: Vec<Trial> = Vec::new();
    let expected: BTreeMap<&str, Expect> = EXPECTED.iter().copied().collect();
    let names: Vec<String> = files.clone();
    let row_names: Vec<String> = rows.keys().cloned().collect();
    trials.push(Trial::test(
        "corpus::every_file_has_an_expectation_and_a_readme_row",
        move || {
            let mut problems = Vec::new();
            for f in &names {
                if !expected.contains_key(f.as_str()) {
                    problems.push(format!("no expectation for {f}"));
                }
                if !row_names.contains(f) {
                    problems.push(format!("no README row for {f}"));
                }
            }
            for (f, _) in EXPECTED {
                if !names.iter().any(|n| n == f) {
                    problems.push(format!("expectation for a missing file {f}"));
                }
            }
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join("\n").into())
            }
        },
    ));
    for (name, expect) in EXPECTED {
        let (format, shape) = rows.get(*name).cloned().unwrap_or_default();
        let path = tree.path().join(layout_path(name));
        let (name, expect) = (*name, *expect);
        trials.push(Trial::test(format!("corpus::{name}"), move || {
            check(name, expect, &format, &shape, &path)
        }));
    }
    let conclusion = libtest_mimic::run(&args, trials);
    drop(tree);
    conclusion.exit();
}
