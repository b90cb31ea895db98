//! Programs a rule runs from `PATH` (`node`, `python3`, `jq`), pinned by the file they resolve
//! to and its SHA-256: recorded at approval, compared at every load, so another file first on
//! `PATH` or other bytes at that path is a change (refused under `require`, named under `warn`,
//! shown by `trust diff`).
//!
//! The name is looked up as `execvp` does, in the `PATH` hooks run with (hookbox's own): the
//! first folder (absolute; an empty or relative entry is skipped, it would be the hook's working
//! folder) holding a regular file of that name with an execute bit. Its path is canonicalised
//! and the file opened at that path without following a symlink in the last component and
//! without blocking, checked on its descriptor (a regular file of at most
//! [`TrustPolicy::max_program_bytes`](super::TrustPolicy::max_program_bytes)) and hashed
//! streaming — a program may be 100+ MB (`node`) and is never read into memory whole. Digests
//! are kept per process by the file's version (device, inode, size, mtime, ctime:
//! [`super::file_version`], which caches only versions that have settled, so a write can never
//! keep a cached key), so a host loading its rules again does not hash `node` again unless the
//! file changed; and, for the CLI (one process per hook), in the approval store's private
//! folder (`program-digests.cache`, read and written as a record is, at most
//! [`MAX_CACHED_PROGRAMS`] entries), so a dispatch does not hash `node` again either.
//!
//! What is pinned is what was found when the rule set was loaded: the program is not run from a
//! sealed copy (it is the system's, and may be large), so a file replaced between the load and
//! the spawn is not seen — the bound is the load, as for the approval itself.

use std::ffi::OsStr;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use hookbox_trust::{Digest, FileState, ProgramRecord};
use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::file_version::{DigestCache, FileVersion};
use super::store::ApprovalStore;

/// Distinct programs whose digests one process keeps (a rule set names a few; a server's
/// tenants a few dozen). Past it, the cache starts again.
const MAX_CACHED_PROGRAMS: usize = 1024;

/// Bytes read at a time while hashing.
const CHUNK: usize = 64 * 1024;

/// The process's digests of programs (see [`super::file_version`]).
static DIGESTS: DigestCache = DigestCache::new(MAX_CACHED_PROGRAMS);

/// The cache file's name in the approval store (not `*.json`: no approval record).
const CACHE_FILE: &str = "program-digests.cache";

/// One cached digest, as the cache file holds it.
#[derive(Serialize, Deserialize)]
struct CachedDigest {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    sha256: Digest,
}

/// Adds the digests of `store`'s cache file to the process's (a file that cannot be read or
/// parsed adds nothing: it is only a cache).
pub(crate) fn load_cache(store: &ApprovalStore) {
    let Ok(Some(text)) = store.read_text(CACHE_FILE) else {
        return;
    };
    let Ok(entries) = serde_json::from_str::<Vec<CachedDigest>>(&text) else {
        return;
    };
    for e in entries.into_iter().take(MAX_CACHED_PROGRAMS) {
        let version = FileVersion {
            dev: e.dev,
            ino: e.ino,
            size: e.size,
            mtime: e.mtime,
            ctime: e.ctime,
        };
        DIGESTS.restore(version, e.sha256);
    }
}

/// Writes the process's digests to `store`'s cache file when one was added since it was read
/// (best effort: a cache that cannot be written is hashed again next time).
pub(crate) fn save_cache(store: &ApprovalStore) {
    let Some(digests) = DIGESTS.take_dirty() else {
        return;
    };
    let entries: Vec<CachedDigest> = digests
        .into_iter()
        .map(|(k, d)| CachedDigest {
            dev: k.dev,
            ino: k.ino,
            size: k.size,
            mtime: k.mtime,
            ctime: k.ctime,
            sha256: d,
        })
        .collect();
    if let Ok(text) = serde_json::to_string(&entries) {
        let _ = store.write_text(CACHE_FILE, &text);
    }
}

/// The record of the program `name` as `path_var` finds it: its canonical path and digest, or
/// why it has none (not found, too large, unreadable).
pub(crate) fn program_record(name: &str, path_var: Option<&OsStr>, max: u64) -> ProgramRecord {
    let unreadable = |path: Option<&Path>, reason: String| ProgramRecord {
        name: name.to_owned(),
        path: path.map(|p| p.display().to_string()),
        state: FileState::Unreadable { reason },
    };
    let Some(found) = find_on_path(name, path_var) else {
        return unreadable(None, "not found on PATH".into());
    };
    let path = match found.canonicalize() {
        Ok(p) => p,
        Err(e) => return unreadable(Some(&found), e.to_string()),
    };
    match hash_program(&path, max) {
        Ok((sha256, size)) => ProgramRecord {
            name: name.to_owned(),
            path: Some(path.display().to_string()),
            state: FileState::Pinned { sha256, size },
        },
        Err(reason) => unreadable(Some(&path), reason),
    }
}

/// The file `execvp` would run for `name`: the first `<folder>/<name>` of `path_var` that is a
/// regular file (links followed, as the kernel follows them) with an execute bit.
fn find_on_path(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let var = path_var?;
    var.as_bytes()
        .split(|b| *b == b':')
        .map(|d| Path::new(OsStr::from_bytes(d)))
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

/// The SHA-256 and size of the file at the canonical `path`, opened without following a link
/// at its last component and without blocking, streamed, bounded by `max`; from the cache when
/// the same version of the file was hashed before.
fn hash_program(path: &Path, max: u64) -> Result<(Digest, u64), String> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("cannot open it: {e}"))?;
    let mut file = std::fs::File::from(fd);
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.size() > max {
        return Err(format!(
            "{} bytes, over the limit of {max} (trust.max_program_bytes)",
            meta.size()
        ));
    }
    let key = FileVersion::of(&meta);
    if let Some(d) = DIGESTS.get(&key) {
        return Ok((d, key.size));
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut read: u64 = 0;
    loop {
        let n = file.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        read += n as u64;
        if read > max {
            return Err(format!(
                "grew past the limit of {max} bytes while it was read (trust.max_program_bytes)"
            ));
        }
        hasher.update(&buf[..n]);
    }
    // Changed while it was read: what was hashed is no version of the file.
    let after = file.metadata().map_err(|e| e.to_string())?;
    if FileVersion::of(&after) != key || read != key.size {
        return Err("it changed while it was hashed".into());
    }
    let digest = Digest(hasher.finalize().into());
    DIGESTS.insert(key, digest, SystemTime::now());
    Ok((digest, key.size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt as _, symlink};

    fn exe(path: &Path, body: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn pinned(r: &ProgramRecord) -> (String, Digest, u64) {
        match &r.state {
            FileState::Pinned { sha256, size } => (r.path.clone().unwrap(), *sha256, *size),
            FileState::Unreadable { reason } => panic!("{reason}"),
        }
    }

    #[test]
    fn a_program_is_found_as_execvp_finds_it_canonicalised_and_hashed() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let (a, b) = (root.join("a"), root.join("b"));
        exe(&b.join("tool"), "#!/bin/sh\necho b\n");
        // Not executable, a folder, a relative entry: passed over.
        std::fs::create_dir_all(&a).unwrap();
        std::fs::write(a.join("tool"), "not executable").unwrap();
        std::fs::create_dir_all(root.join("c/tool")).unwrap();
        let var = format!(
            "rel:{}::{}:{}",
            a.display(),
            root.join("c").display(),
            b.display()
        );
        let r = program_record("tool", Some(OsStr::new(&var)), 1 << 20);
        assert_eq!(
            pinned(&r),
            (
                b.join("tool").display().to_string(),
                Digest::of(b"#!/bin/sh\necho b\n"),
                17
            )
        );
        // A link on PATH is recorded as the file it leads to.
        exe(&root.join("real/tool2"), "#!/bin/sh\necho real\n");
        symlink(root.join("real/tool2"), b.join("tool2")).unwrap();
        let r = program_record("tool2", Some(OsStr::new(&var)), 1 << 20);
        assert_eq!(pinned(&r).0, root.join("real/tool2").display().to_string());
        // Other bytes at the same path: another digest (the cache keys on the file's version).
        exe(&b.join("tool"), "#!/bin/sh\necho b, edited\n");
        let r2 = program_record("tool", Some(OsStr::new(&var)), 1 << 20);
        assert_eq!(pinned(&r2).1, Digest::of(b"#!/bin/sh\necho b, edited\n"));
        // Not found, too large: no digest, and why.
        let none = program_record("absent", Some(OsStr::new(&var)), 1 << 20);
        assert_eq!(
            none.state,
            FileState::Unreadable {
                reason: "not found on PATH".into()
            }
        );
        let big = program_record("tool", Some(OsStr::new(&var)), 4);
        assert!(
            matches!(&big.state, FileState::Unreadable { reason } if reason.contains("trust.max_program_bytes")),
            "{big:?}"
        );
        assert!(program_record("tool", None, 1 << 20).path.is_none());
    }

    #[test]
    fn a_program_over_the_limit_is_named_unreadable_never_hashed_in_part() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().canonicalize().unwrap();
        std::fs::write(bin.join("huge"), vec![b'x'; 4097]).unwrap();
        std::fs::set_permissions(bin.join("huge"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let r = program_record("huge", Some(bin.as_os_str()), 4096);
        match &r.state {
            FileState::Unreadable { reason } => assert!(
                reason.contains("4097 bytes, over the limit of 4096 (trust.max_program_bytes)"),
                "{reason}"
            ),
            other => panic!("pinned past its limit: {other:?}"),
        }
        assert_eq!(r.path.as_deref(), Some(bin.join("huge").to_str().unwrap()));
        // At the limit: pinned.
        let r = program_record("huge", Some(bin.as_os_str()), 4097);
        assert!(
            matches!(r.state, FileState::Pinned { size: 4097, .. }),
            "{r:?}"
        );
    }

    #[test]
    fn a_large_program_is_hashed_streaming() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().canonicalize().unwrap();
        let body = vec![b'x'; 3 * CHUNK + 17];
        std::fs::write(bin.join("big"), &body).unwrap();
        std::fs::set_permissions(bin.join("big"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let r = program_record("big", Some(bin.as_os_str()), 1 << 30);
        assert_eq!(pinned(&r).1, Digest::of(&body));
        assert_eq!(pinned(&r).2, body.len() as u64);
    }

    #[test]
    fn digests_are_kept_in_the_stores_private_cache_file() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let store_dir = root.join("store");
        std::fs::create_dir(&store_dir).unwrap();
        std::fs::set_permissions(&store_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let store = ApprovalStore::open(&store_dir).unwrap().unwrap();
        // The system's `sh`: a program whose version settled long ago (a file written just now
        // is hashed every time, never cached: file_version's tests).
        let r = program_record("sh", Some(OsStr::new("/bin:/usr/bin")), 1 << 30);
        let (_, digest, size) = pinned(&r);
        save_cache(&store);
        let text = store.read_text(CACHE_FILE).unwrap().unwrap();
        let entries: Vec<CachedDigest> = serde_json::from_str(&text).unwrap();
        assert!(
            entries.iter().any(|e| e.sha256 == digest && e.size == size),
            "{text}"
        );
        // Read back into a process's cache: the same digest, for the same version of the file.
        load_cache(&store);
        let again = program_record("sh", Some(OsStr::new("/bin:/usr/bin")), 1 << 30);
        assert_eq!(again, r);
        // Not a record: `list` passes it over.
        assert!(store.list().unwrap().is_empty());
    }

    #[test]
    fn a_program_written_just_now_is_hashed_each_time_and_never_cached() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().canonicalize().unwrap();
        exe(&bin.join("fresh-tool"), "#!/bin/sh\necho one\n");
        let r = program_record("fresh-tool", Some(bin.as_os_str()), 1 << 20);
        let version = FileVersion::of(&std::fs::metadata(bin.join("fresh-tool")).unwrap());
        assert_eq!(DIGESTS.get(&version), None, "a version younger than SETTLE");
        assert_eq!(pinned(&r).1, Digest::of(b"#!/bin/sh\necho one\n"));
    }
}
