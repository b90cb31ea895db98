//! Helpers for end-to-end tests: a temporary folder to write hook files into, a way to run the
//! binary and capture what it did, and the real-world corpus laid out as in its repositories.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary folder, removed when dropped, with a state folder of its own (outside it) for
/// the runs of hookbox that use it as their project.
pub(crate) struct Dir {
    tmp: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Dir {
    pub(crate) fn new() -> Dir {
        Dir {
            tmp: tempfile::tempdir().expect("temp dir"),
            state: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// hookbox's state folder (`HOOKBOX_STATE_DIR`) for runs on this folder.
    pub(crate) fn state(&self) -> &Path {
        self.state.path()
    }

    /// Every file named `name` under the state folder.
    pub(crate) fn state_files(&self, name: &str) -> Vec<PathBuf> {
        fn walk(dir: &Path, name: &str, out: &mut Vec<PathBuf>) {
            for e in fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, name, out);
                } else if e.file_name() == name {
                    out.push(p);
                }
            }
        }
        let mut out = Vec::new();
        walk(self.state(), name, &mut out);
        out
    }

    /// Writes `text` to `rel` (creating folders) and returns the full path.
    pub(crate) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.tmp.path().join(rel);
        fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        fs::write(&p, text).expect("write");
        p
    }
}

/// What one run of the binary did.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// The stdout, parsed as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// Runs `hookbox ARGS…` from the repository root, without colours or logs, with its state in a
/// temporary folder of this test process (never the user's).
pub(crate) fn hookbox<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let state = std::env::temp_dir().join(format!("hookbox-cli-tests-{}", std::process::id()));
    hookbox_with_state(args, &state)
}

/// [`hookbox`] with its state in `state`.
pub(crate) fn hookbox_with_state<I, S>(args: I, state: &Path) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    hookbox_in(&repo_root(), args, state)
}

/// [`hookbox`] run from `cwd`, with its state in `state`.
fn hookbox_in<I, S>(cwd: &Path, args: I, state: &Path) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("HOOKBOX_STATE_DIR", state)
        .env_remove("HOOKBOX_LOG")
        .output()
        .expect("run hookbox");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies the corpus into `dir`, each file where its repository keeps it
/// (`owner__repo__a__b.json` → `owner__repo/a/b.json`), and returns the copies' paths.
pub(crate) fn corpus_tree(dir: &Dir) -> Vec<PathBuf> {
    let src = repo_root().join("crates/core/tests/corpus/hooks-real");
    let mut names: Vec<String> = fs::read_dir(&src)
        .expect("corpus folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n != "README.md")
        .collect();
    names.sort();
    names
        .iter()
        .map(|name| {
            let parts: Vec<&str> = name.split("__").collect();
            let mut dest = dir.path().join(format!("{}__{}", parts[0], parts[1]));
            for p in &parts[2..] {
                dest.push(p);
            }
            fs::create_dir_all(dest.parent().expect("a parent")).expect("mkdir");
            fs::copy(src.join(name), &dest).expect("copy");
            dest
        })
        .collect()
}

/// A copy of `examples/` in `dir` with every wasm component its plugins name supplied from this
/// build's guests (what `scripts/build-example-guests.sh` does in the repository). Without the
/// JavaScript/Python tooling the plugin made of those guests is left out of the copy, as the
/// script leaves its components out.
pub(crate) fn examples_with_components(dir: &Dir) -> PathBuf {
    let dst = dir.path().join("examples");
    copy_tree(&repo_root().join("examples"), &dst);
    if !hookbox_test_artifacts::POLYGLOT_BUILT {
        fs::remove_dir_all(dst.join("plugins/polyglot-guests")).expect("remove polyglot-guests");
    }
    for plugin in fs::read_dir(dst.join("plugins"))
        .expect("plugins")
        .flatten()
    {
        let hooks = plugin.path().join("hooks");
        let Ok(text) = fs::read_to_string(hooks.join("hooks.json")) else {
            continue;
        };
        for guest in hookbox_test_artifacts::ALL {
            let file = format!("{}.wasm", guest.name);
            if text.contains(&format!("hooks/{file}")) {
                fs::copy(guest.path, hooks.join(&file)).expect("copy guest");
            }
        }
    }
    dst
}

/// Runs `hookbox ARGS…` (as [`hookbox`] does) from `dir`, holding a copy of `examples/` with no
/// wasm component in it: the checkout as a fresh clone has it.
pub(crate) fn in_examples_without_components<I, S>(dir: &Dir, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let dst = dir.path().join("examples");
    copy_tree(&repo_root().join("examples"), &dst);
    for plugin in fs::read_dir(dst.join("plugins"))
        .expect("plugins")
        .flatten()
    {
        for e in fs::read_dir(plugin.path().join("hooks"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if e.path().extension().is_some_and(|x| x == "wasm") {
                fs::remove_file(e.path()).expect("remove a built component");
            }
        }
    }
    hookbox_in(dir.path(), args, dir.state())
}

/// Copies the folder `src` to `dst`, files with their permission bits.
pub(crate) fn copy_tree(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).expect("mkdir");
    for e in fs::read_dir(src).expect("read_dir").flatten() {
        let to = dst.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            fs::copy(e.path(), &to).expect("copy");
        }
    }
}
