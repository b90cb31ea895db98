//! The JavaScript and Python guest examples (`guest-examples/js/`, `guest-examples/python/`),
//! built by the test-artifacts and bundled build scripts when their tooling is installed,
//! skipped otherwise.
//!
//! Tooling: `node` on `PATH` plus `guest-examples/js/node_modules` (`npm ci`),
//! `componentize-py` in `<cargo target dir>/polyglot/venv` (where `scripts/setup-polyglot.sh`
//! installs it) or on `PATH`, and for the QuickJS toolchain (`guest-examples/js-quickjs`) a
//! clang with the wasm32 target and wasi-libc's headers (`apt-get install clang-19 wasi-libc`).
//! Missing tooling is not an error: the polyglot tests are then reported as ignored. `HOOKBOX_REQUIRE_POLYGLOT=1` (CI) turns it into one, so a broken install
//! cannot hide the tests.
//!
//! Each build takes 30–60 s and writes a 12–18 MB component, so it is cached: a stamp beside
//! the output holds a hash of every input (the guest's files, `wit/`, the lockfile, the tool's
//! version and the command line) and the build is skipped when it matches. The build script
//! reruns whenever any guest changes (one script builds them all), and a Rust guest's edit must
//! not rebuild these.

use std::collections::BTreeSet;
use std::collections::hash_map::DefaultHasher;
use std::ffi::OsString;
use std::hash::Hasher as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use std::{env, fs};

/// The toolchain a guest is built with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    /// componentize-js (StarlingMonkey), through `guest-examples/js/<guest>/build.mjs`.
    JavaScript,
    /// componentize-qjs (QuickJS from npm, pre-initialised by Wizer), through
    /// `guest-examples/js/<guest>/build-qjs.mjs`: the same source as the componentize-js guest.
    ComponentizeQjs,
    /// componentize-py.
    Python,
    /// The QuickJS toolchain (`guest-examples/js-quickjs/build.sh`): the same JavaScript source
    /// as the componentize-js guest (`<folder>/<folder name>.js`), pre-initialised QuickJS.
    QuickJs,
}

/// One polyglot guest.
pub(crate) struct Guest {
    /// The name in `ALL` and `foreach_guest!` (the constant is its upper case).
    pub(crate) name: &'static str,
    /// Its folder, relative to the repository root.
    pub(crate) source: &'static str,
    pub(crate) language: Language,
}

/// Every polyglot guest. All are typed hooks (`hookbox:hook/handler`).
pub(crate) const GUESTS: &[Guest] = &[
    Guest {
        name: "context_injection_js",
        source: "guest-examples/js/context-injection",
        language: Language::JavaScript,
    },
    Guest {
        name: "shell_guard_py",
        source: "guest-examples/python/shell-guard",
        language: Language::Python,
    },
    Guest {
        name: "context_injection_qjs",
        source: "guest-examples/js/context-injection",
        language: Language::QuickJs,
    },
    Guest {
        name: "context_injection_cqjs",
        source: "guest-examples/js/context-injection",
        language: Language::ComponentizeQjs,
    },
];

/// The QuickJS toolchain's folder (its build script, runtime and pre-initialiser).
const QUICKJS: &str = "guest-examples/js-quickjs";

/// What the polyglot step produced.
pub(crate) struct Outcome {
    /// Built guests and their components (in the inner target dir), in [`GUESTS`] order.
    pub(crate) built: Vec<(&'static Guest, PathBuf)>,
    /// Why the guests were not built (empty when they were).
    pub(crate) missing: Vec<String>,
    /// The QuickJS runtime component the QuickJS guests were pre-initialised from (built on the
    /// way, by `js-quickjs/build.sh`), when they were built: what `hookbox build-js` carries.
    pub(crate) quickjs_runtime: Option<PathBuf>,
}

impl Outcome {
    /// Copies the QuickJS runtime (when it was built) into `dir` as `quickjs_runtime.wasm`, so
    /// the bytes compiled in are the ones this build produced even if the shared guest target
    /// dir is rebuilt meanwhile; returns the copy's path.
    pub(crate) fn copy_quickjs_runtime(&self, dir: &Path) -> Result<Option<String>, String> {
        let Some(runtime) = &self.quickjs_runtime else {
            return Ok(None);
        };
        let copy = dir.join("quickjs_runtime.wasm");
        fs::copy(runtime, &copy).map_err(|e| {
            format!(
                "cannot copy {} to {}: {e}",
                runtime.display(),
                copy.display()
            )
        })?;
        Ok(Some(copy.display().to_string()))
    }
}

/// Where `js-quickjs/build.sh` leaves the runtime, given the target dir it was run with.
fn quickjs_runtime_in(target: &Path) -> PathBuf {
    target.join("js-quickjs/wasm32-wasip2/release/hookbox_js_runtime.wasm")
}

/// The tools found on this machine.
struct Tools {
    node: Option<String>,
    componentize_py: Option<PathBuf>,
    /// The clang the QuickJS toolchain compiles QuickJS's C with (its `--version`).
    clang: Option<String>,
}

/// Builds every polyglot guest whose tooling is installed, into `<guests_dir>/polyglot/`.
/// All or nothing: with one toolchain missing, none is built (the tests share one switch).
pub(crate) fn build(
    root: &Path,
    guests_dir: &Path,
    cargo_target: Option<&Path>,
    watched: &mut BTreeSet<PathBuf>,
) -> Result<Outcome, String> {
    println!("cargo:rerun-if-env-changed=HOOKBOX_REQUIRE_POLYGLOT");
    let js_dir = root.join("guest-examples/js");
    let venv_dir = cargo_target.map(|t| t.join("polyglot"));
    let tools = find_tools(&js_dir, venv_dir.as_deref());
    watch_tools(&js_dir, venv_dir.as_deref(), &tools, watched);

    let mut missing = Vec::new();
    if tools.node.is_none() {
        missing.push(format!(
            "JavaScript: `node` on PATH and {}/node_modules (npm ci)",
            js_dir.display()
        ));
    }
    if tools.componentize_py.is_none() {
        missing.push(format!(
            "Python: componentize-py in {} or on PATH",
            venv_dir.map_or_else(
                || "<target>/polyglot/venv".to_owned(),
                |d| d.join("venv").display().to_string()
            )
        ));
    }
    if tools.clang.is_none() {
        missing.push(
            "QuickJS: clang with the wasm32 target and wasi-libc's headers \
             (apt-get install clang-19 wasi-libc)"
                .to_owned(),
        );
    }
    if !missing.is_empty() {
        if env::var_os("HOOKBOX_REQUIRE_POLYGLOT").is_some_and(|v| v == "1") {
            return Err(format!(
                "HOOKBOX_REQUIRE_POLYGLOT=1 but the JavaScript/Python guest tooling is missing: \
                 {}\n  help: run scripts/setup-polyglot.sh",
                missing.join("; ")
            ));
        }
        return Ok(Outcome {
            built: Vec::new(),
            missing,
            quickjs_runtime: None,
        });
    }

    let out_dir = guests_dir.join("polyglot");
    fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    // Two build scripts (test-artifacts and bundled) may run at once and write the same outputs:
    // one builds, the other waits and then finds the stamps current.
    let lock_path = out_dir.join(".lock");
    let lock = fs::File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    // The two builds are single-threaded for most of their time: run them side by side.
    let results: Vec<Result<PathBuf, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = GUESTS
            .iter()
            .map(|guest| {
                let (tools, out_dir) = (&tools, &out_dir);
                scope.spawn(move || build_one(root, guest, tools, out_dir))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a polyglot build thread panicked".to_owned()))
            })
            .collect()
    });
    let mut built = Vec::new();
    for (guest, result) in GUESTS.iter().zip(results) {
        built.push((guest, result?));
        for file in inputs(root, guest)? {
            watched.insert(file);
        }
    }
    Ok(Outcome {
        built,
        missing: Vec::new(),
        quickjs_runtime: Some(quickjs_runtime_in(guests_dir)),
    })
}

fn find_tools(js_dir: &Path, venv_dir: Option<&Path>) -> Tools {
    let installed = |package: &str| {
        js_dir
            .join("node_modules")
            .join(package)
            .join("package.json")
    };
    let node = (installed("@bytecodealliance/componentize-js").is_file()
        && installed("componentize-qjs").is_file())
    .then(|| version_of(Command::new("node").arg("--version")))
    .flatten();
    let in_venv = venv_dir
        .map(|d| d.join("venv/bin/componentize-py"))
        .filter(|p| p.is_file());
    let componentize_py = in_venv.or_else(|| on_path("componentize-py"));
    // The same search as `guest-examples/js-quickjs/build.sh`.
    let clang = env::var("CC_QUICKJS")
        .ok()
        .into_iter()
        .chain(["clang-19", "clang-20", "clang-18", "clang"].map(str::to_owned))
        .find_map(|cc| version_of(Command::new(cc).arg("--version")))
        .filter(|_| {
            env::var_os("WASI_SYSROOT").is_some()
                || Path::new("/usr/include/wasm32-wasi/stdlib.h").is_file()
        });
    Tools {
        node,
        componentize_py,
        clang,
    }
}

/// Makes an install (or removal) of the tooling rerun this script, without watching a path
/// that does not exist (cargo would rerun the script, and relink every test, on each build).
/// Before an install, the folders that will receive it: a new entry changes their mtime.
fn watch_tools(
    js_dir: &Path,
    venv_dir: Option<&Path>,
    tools: &Tools,
    watched: &mut BTreeSet<PathBuf>,
) {
    let npm_record = js_dir.join("node_modules/.package-lock.json");
    watched.insert(if npm_record.is_file() {
        npm_record
    } else {
        js_dir.to_owned()
    });
    match (&tools.componentize_py, venv_dir) {
        (Some(path), _) => {
            watched.insert(path.clone());
        }
        (None, Some(dir)) => {
            // Created empty here so it can be watched; the setup script puts the venv in it.
            if fs::create_dir_all(dir).is_ok() {
                watched.insert(dir.to_owned());
            }
        }
        (None, None) => {}
    }
    println!("cargo:rerun-if-env-changed=CC_QUICKJS");
    println!("cargo:rerun-if-env-changed=WASI_SYSROOT");
}

/// The first line of a `--version` output, or `None` when the tool does not run.
fn version_of(cmd: &mut Command) -> Option<String> {
    let output = cmd.output().ok().filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&output.stdout);
    Some(text.lines().next().unwrap_or_default().trim().to_owned())
}

fn on_path(program: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Builds one guest unless its stamp says the output is up to date; returns the component.
fn build_one(root: &Path, guest: &Guest, tools: &Tools, out_dir: &Path) -> Result<PathBuf, String> {
    let source = root.join(guest.source);
    let output = out_dir.join(format!("{}.wasm", guest.name));
    let partial = out_dir.join(format!("{}.wasm.partial", guest.name));
    let (mut cmd, tool_version) = match guest.language {
        Language::JavaScript | Language::ComponentizeQjs => {
            let script = match guest.language {
                Language::JavaScript => "build.mjs",
                _ => "build-qjs.mjs",
            };
            let mut cmd = Command::new("node");
            cmd.arg(source.join(script)).arg(&partial);
            let npm_record = root.join("guest-examples/js/node_modules/.package-lock.json");
            let installed = fs::read_to_string(npm_record).unwrap_or_default();
            (cmd, format!("{:?}\n{installed}", tools.node))
        }
        Language::Python => {
            let Some(py) = &tools.componentize_py else {
                return Err("componentize-py vanished".to_owned());
            };
            let mut cmd = Command::new(py);
            // `--stub-wasi`: componentize-py's CPython imports `wasi:sockets/*`, which hookbox
            // refuses at load (hooks have no network), and no narrower switch removes them;
            // see guest-examples/python/shell-guard/README.md.
            cmd.arg("-d")
                .arg(root.join("wit"))
                .args(["-w", "hook", "componentize", "app", "--stub-wasi", "-p"])
                .arg(&source)
                .arg("-o")
                .arg(&partial);
            // The module search path must not depend on the caller's shell: the guest folder
            // plus the build venv's own site-packages (which holds only componentize-py), not
            // whatever venv or PYTHONPATH happens to be active.
            cmd.env_remove("VIRTUAL_ENV").env_remove("PYTHONPATH");
            let version = version_of(Command::new(py).arg("--version"));
            (cmd, format!("{version:?}"))
        }
        Language::QuickJs => {
            let mut cmd = Command::new("bash");
            let folder = Path::new(guest.source)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            cmd.arg(root.join(QUICKJS).join("build.sh"))
                .arg(source.join(format!("{folder}.js")))
                .arg(&partial);
            (cmd, format!("{:?}", tools.clang))
        }
    };
    cmd.current_dir(&source);

    let mut hasher = DefaultHasher::new();
    hasher.write(format!("{cmd:?}\n{tool_version}").as_bytes());
    for file in inputs(root, guest)? {
        let bytes = fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        hasher.write(
            file.strip_prefix(root)
                .unwrap_or(&file)
                .as_os_str()
                .as_encoded_bytes(),
        );
        hasher.write_usize(bytes.len());
        hasher.write(&bytes);
    }
    let fingerprint = format!("{:016x}\n", hasher.finish());
    let stamp = out_dir.join(format!("{}.stamp", guest.name));
    // A QuickJS guest's build also leaves the runtime the binary carries: it must be there too.
    let runtime_there = guest.language != Language::QuickJs
        || out_dir
            .parent()
            .is_some_and(|t| quickjs_runtime_in(t).is_file());
    if output.is_file()
        && runtime_there
        && fs::read_to_string(&stamp).is_ok_and(|s| s == fingerprint)
    {
        return Ok(output);
    }

    if guest.language == Language::QuickJs {
        // Its own cargo builds (a wasm32 runtime and a native tool), without this build
        // script's environment (set after the fingerprint: that environment differs between
        // the two build scripts that build these guests).
        for (key, _) in env::vars_os() {
            let key = key.to_string_lossy();
            if crate::guests::leaks_into_inner_build(&key) {
                cmd.env_remove(&*key);
            }
        }
        // The guests' target dir, as scripts/test-guest-readmes.sh gives it, so both share
        // one build of the runtime and of the pre-initialiser (build.sh adds `js-quickjs/`).
        cmd.env("CARGO_TARGET_DIR", out_dir.parent().unwrap_or(out_dir));
    }
    let started = Instant::now();
    let result = cmd
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if !result.status.success() {
        return Err(format!(
            "building the {} guest {} failed ({}):\n{}{}\n  reproduce: cd {} && {cmd:?}",
            match guest.language {
                Language::JavaScript => "JavaScript",
                Language::ComponentizeQjs => "JavaScript (componentize-qjs)",
                Language::Python => "Python",
                Language::QuickJs => "JavaScript (QuickJS)",
            },
            guest.source,
            result.status,
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr),
            source.display(),
        ));
    }
    // Only a finished build replaces the output, and the stamp is written last: an interrupted
    // build is redone.
    fs::rename(&partial, &output).map_err(|e| format!("cannot move {}: {e}", partial.display()))?;
    fs::write(&stamp, fingerprint).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    // Seen with `cargo build -vv`; the figures the guest READMEs quote come from here.
    eprintln!(
        "built {} in {:.1} s ({} bytes)",
        guest.name,
        started.elapsed().as_secs_f64(),
        fs::metadata(&output).map(|m| m.len()).unwrap_or(0)
    );
    Ok(output)
}

/// Every file a guest's component depends on in this repository: its folder (not generated
/// bindings, caches, outputs or native tests), `wit/`, and its language's lockfile.
fn inputs(root: &Path, guest: &Guest) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    collect(&root.join(guest.source), &mut files)?;
    collect(&root.join("wit"), &mut files)?;
    let shared: &[&str] = match guest.language {
        Language::JavaScript | Language::ComponentizeQjs => &[
            "guest-examples/js/package.json",
            "guest-examples/js/package-lock.json",
        ],
        Language::Python => &["guest-examples/python/requirements.txt"],
        Language::QuickJs => &[],
    };
    files.extend(shared.iter().map(|file| root.join(file)));
    if guest.language == Language::QuickJs {
        collect(&root.join(QUICKJS), &mut files)?;
        // The pre-initialiser, which the toolchain's build tool includes by path.
        files.push(root.join("crates/wasm/src/build_js.rs"));
    }
    files.sort();
    Ok(files)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name: OsString = entry.file_name();
        let name = name.to_string_lossy();
        let skipped = name.starts_with('.')
            || name.starts_with("test_")
            || name.ends_with(".wasm")
            || matches!(
                &*name,
                "node_modules" | "__pycache__" | "wit_world" | "target" | "dist"
            );
        if skipped {
            continue;
        }
        if path.is_dir() {
            collect(&path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}
