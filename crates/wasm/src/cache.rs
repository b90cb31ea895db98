//! The on-disk cache of compiled components: one `.cwasm` file per (wasm content, engine
//! configuration), in a folder only the host writes. Files are written atomically (temporary
//! file + rename, fsync'd) and carry a CRC-32 trailer; anything unreadable, torn, damaged or
//! built by another engine is a cache miss, never an error.
//!
//! The folder is bounded by bytes (`RuntimeConfig::disk_cache_bytes`): after each write the
//! least recently used files go (a hit refreshes its file's modification time).
//!
//! The trailer detects accidental damage (a bad disk, a crash, a truncated copy), which is what a
//! CRC is for; it was a sha256 until `hookbox bench` showed it costing ~0.4 ms of a 1.1 ms load
//! of a 500 KB artefact. It is not a defence against someone who can write the folder: such a
//! person could rewrite any checksum, which is why the folder must be private (`check_private`)
//! and is refused otherwise. The key of an entry (which wasm it was compiled from) stays a
//! sha256, because tenants choose the wasm bytes.

use std::fmt::Write as _;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::cache_dir::{check_private, create_private_dir, private_file};
use crate::config::RuntimeConfig;
use crate::error::WasmError;

/// Bumped whenever the file layout or keying changes.
const FORMAT: &str = "hookbox-wasm-cache-v2";
/// Bytes of the trailer: the CRC-32 (IEEE) of the artefact, little-endian.
const TRAILER: usize = 4;

/// A sha256 digest.
pub(crate) type Sha = [u8; 32];

/// sha256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> Sha {
    Sha256::digest(bytes).into()
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Feeds `Hash` output into sha256, so the key is stable across processes (unlike
/// `DefaultHasher`, whose algorithm is not guaranteed).
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        let d = self.0.clone().finalize();
        u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// The cache folder of one engine.
pub(crate) struct DiskCache {
    dir: PathBuf,
    /// Hex digest of everything about the engine that changes compiled code.
    engine_key: String,
    /// Most bytes of `.cwasm` files kept in the folder.
    max_bytes: u64,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl DiskCache {
    /// Opens (creating it if needed) the cache folder for `engine`.
    pub(crate) fn open(
        dir: &Path,
        engine: &Engine,
        config: &RuntimeConfig,
    ) -> Result<DiskCache, WasmError> {
        let err = |reason: String| WasmError::CacheDir {
            path: dir.to_owned(),
            reason,
        };
        create_private_dir(dir).map_err(|e| err(format!("cannot create it: {e}")))?;
        check_private(dir).map_err(err)?;
        let mut h = ShaHasher(Sha256::new());
        FORMAT.hash(&mut h);
        engine.precompile_compatibility_hash().hash(&mut h);
        // Belt and braces: these change the generated code and are ours to know.
        config.fuel.hash(&mut h);
        config.max_wasm_stack.hash(&mut h);
        let engine_key = hex(&h.0.finalize()[..16]);
        Ok(DiskCache {
            dir: dir.to_owned(),
            engine_key,
            max_bytes: config.disk_cache_bytes,
        })
    }

    fn path(&self, wasm: &Sha) -> PathBuf {
        self.dir
            .join(format!("{}-{}.cwasm", hex(wasm), self.engine_key))
    }

    /// The compiled component for `wasm`, if a sound artefact of this engine is on disk.
    pub(crate) fn get(&self, engine: &Engine, wasm: &Sha) -> Option<Component> {
        let path = self.path(wasm);
        let file = fs::read(&path).ok()?;
        let (code, trailer) = file.split_at_checked(file.len().checked_sub(TRAILER)?)?;
        if crc32fast::hash(code).to_le_bytes() != trailer {
            tracing::warn!(path = %path.display(), "corrupt wasm cache entry; recompiling");
            return None;
        }
        #[allow(
            unsafe_code,
            reason = "loading precompiled native code is inherently unsafe in wasmtime"
        )]
        // SAFETY: `Component::deserialize` trusts its input to be an artefact wasmtime produced.
        // `code` was written by `put` below from `Component::serialize` of an engine with the same
        // `precompile_compatibility_hash` (that hash is part of the file name), into a folder the
        // host created private to itself (`check_private`), through a temporary file and an atomic
        // rename, and its CRC-32 trailer was just verified, so a torn or corrupted write is a
        // miss. Tenants never supply these files: they supply wasm, whose content hash is the
        // other half of the name. Wasmtime still checks the artefact's header, version and engine
        // settings and rejects a mismatch with an error, which is a miss.
        let component = unsafe { Component::deserialize(engine, code) };
        match component {
            Ok(c) => {
                // A hit makes the file recent again, so size-bounding removes the least used.
                let _ = fs::File::open(&path).and_then(|f| f.set_modified(SystemTime::now()));
                Some(c)
            }
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "unusable wasm cache entry; recompiling");
                None
            }
        }
    }

    /// Stores the precompiled artefact `code` (from `Engine::precompile_component`) for `wasm`,
    /// then trims the folder to its size bound. Errors are the caller's to log: a cache that
    /// cannot be written only costs a recompile next time.
    pub(crate) fn put(&self, wasm: &Sha, code: &[u8]) -> Result<(), String> {
        let path = self.path(wasm);
        let tmp = self.dir.join(format!(
            ".{}.{}.{}.tmp",
            hex(&wasm[..8]),
            std::process::id(),
            TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let write = || -> std::io::Result<()> {
            let mut f = private_file(&tmp)?;
            f.write_all(code)?;
            f.write_all(&crc32fast::hash(code).to_le_bytes())?;
            f.sync_all()?;
            fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            format!("cannot write `{}`: {e}", path.display())
        })?;
        trim(&self.dir, self.max_bytes, &path);
        Ok(())
    }
}

/// Removes the least recently used `.cwasm` files of `dir` (oldest modification time first)
/// until they fit in `max_bytes`, sparing `keep` (the file just written). Best effort: another
/// runtime may be trimming the same folder, so a file already gone is fine.
pub(crate) fn trim(dir: &Path, max_bytes: u64, keep: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(SystemTime, u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            meta.is_file().then(|| {
                (
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    meta.len(),
                    e.path(),
                )
            })
        })
        .collect();
    let mut total: u64 = files.iter().map(|(_, len, _)| *len).sum();
    if total <= max_bytes {
        return;
    }
    files.sort();
    for (_, len, path) in files {
        if total <= max_bytes {
            break;
        }
        if path == keep {
            continue;
        }
        if fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
        }
    }
}
