//! Helpers for end-to-end tests: a temporary folder to write hook files into, a way to run the
//! binary and capture what it did, and the real-world corpus laid out as in its repositories.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary folder, removed when dropped.
pub(crate) struct Dir {
    tmp: tempfile::TempDir,
}

impl Dir {
    pub(crate) fn new() -> Dir {
        Dir {
            tmp: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        self.tmp.path()
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

/// Runs `hookbox ARGS…` from the repository root, without colours or logs.
pub(crate) fn hookbox<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = Command::new(env!("CARGO_BIN_EXE_hookbox"))
        .args(args)
        .current_dir(repo_root())
        .env("NO_COLOR", "1")
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
