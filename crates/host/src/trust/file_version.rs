//! Which version of a file this is, without reading it, and the digests of versions already
//! hashed — so that a program on `PATH` (`node`, 100+ MB) or a tenant's plugin file loaded
//! again is not read and hashed again unless it changed.
//!
//! A version is (device, inode, size, mtime, ctime). Every write sets a file's ctime, and no
//! call sets ctime back (only moving the system clock does), so another version of the bytes
//! has another key — with one exception: the kernel stamps times from a coarse clock (a tick of
//! a few milliseconds), so a write in the same tick as the one that made the version hashed
//! keeps its ctime, and a same-size write then keeps its key. A digest is therefore cached only
//! for a version that has *settled*: its ctime at least [`SETTLE`] before the moment its hash was
//! checked — any later write is stamped with a later tick, hence another key. A file written
//! within the last second is hashed every time it is loaded, as git re-reads a "racily clean"
//! file.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hookbox_trust::Digest;

/// How long before the check a version's ctime must be for its digest to be cached (far above
/// any kernel's timestamp tick).
pub(crate) const SETTLE: Duration = Duration::from_secs(1);

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FileVersion {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
    pub(crate) mtime: (i64, i64),
    pub(crate) ctime: (i64, i64),
}

impl FileVersion {
    pub(crate) fn of(m: &std::fs::Metadata) -> FileVersion {
        FileVersion {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// Whether this version's ctime is at least [`SETTLE`] before `now` (see the module).
    pub(crate) fn settled(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let (secs, nanos) = self.ctime;
        let (Ok(secs), Ok(nanos)) = (u64::try_from(secs), u32::try_from(nanos)) else {
            return false;
        };
        let Some(ctime) = Duration::from_secs(secs).checked_add(Duration::from_nanos(nanos.into()))
        else {
            return false;
        };
        now.checked_sub(ctime).is_some_and(|age| age >= SETTLE)
    }
}

/// Digests of file versions, at most `max` of them (past it the cache starts again: a bound,
/// not an eviction policy — a caller only ever pays a hash it would have paid without it).
pub(crate) struct DigestCache {
    max: usize,
    /// The digests, and whether one was added since [`DigestCache::take_dirty`] last said so.
    inner: Mutex<Option<(HashMap<FileVersion, Digest>, bool)>>,
}

impl DigestCache {
    pub(crate) const fn new(max: usize) -> DigestCache {
        DigestCache {
            max,
            inner: Mutex::new(None),
        }
    }

    /// The digest of `version`, if it was hashed before.
    pub(crate) fn get(&self, version: &FileVersion) -> Option<Digest> {
        let guard = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        guard.as_ref().and_then(|(m, _)| m.get(version).copied())
    }

    /// Records that `version` hashes to `digest`, checked at `now` — only if the version has
    /// settled (see the module); says whether it was recorded.
    pub(crate) fn insert(&self, version: FileVersion, digest: Digest, now: SystemTime) -> bool {
        if !version.settled(now) {
            return false;
        }
        self.insert_unchecked(version, digest, true);
        true
    }

    /// Adds a digest read back from a cache file of ours (which only ever held settled
    /// versions); not counted as new.
    pub(crate) fn restore(&self, version: FileVersion, digest: Digest) {
        self.insert_unchecked(version, digest, false);
    }

    fn insert_unchecked(&self, version: FileVersion, digest: Digest, new: bool) {
        let mut guard = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let (map, dirty) = guard.get_or_insert_with(|| (HashMap::new(), false));
        if map.len() >= self.max && !map.contains_key(&version) {
            if !new {
                return;
            }
            map.clear();
        }
        map.insert(version, digest);
        *dirty |= new;
    }

    /// Every cached digest, if one was added since the last call (then cleared).
    pub(crate) fn take_dirty(&self) -> Option<Vec<(FileVersion, Digest)>> {
        let mut guard = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let (map, dirty) = guard.as_mut()?;
        if !*dirty {
            return None;
        }
        *dirty = false;
        Some(map.iter().map(|(k, d)| (*k, *d)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(ctime_secs: i64) -> FileVersion {
        FileVersion {
            dev: 1,
            ino: 2,
            size: 3,
            mtime: (ctime_secs, 0),
            ctime: (ctime_secs, 500),
        }
    }

    fn at(secs: u64, nanos: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_nanos(nanos)
    }

    #[test]
    fn a_version_changed_within_the_last_second_is_never_cached() {
        let cache = DigestCache::new(8);
        let d = Digest::of(b"old bytes");
        // Checked in the same tick, and just under a second later: a write still to come could
        // keep this key, so nothing is kept.
        assert!(!cache.insert(version(1_000), d, at(1_000, 500)));
        assert!(!cache.insert(version(1_000), d, at(1_000, 999_999_999)));
        assert_eq!(cache.get(&version(1_000)), None);
        // A clock behind the file's ctime: not settled either.
        assert!(!cache.insert(version(1_000), d, at(999, 0)));
        // A second after its ctime: kept, and found by the same key only.
        assert!(cache.insert(version(1_000), d, at(1_001, 500)));
        assert_eq!(cache.get(&version(1_000)), Some(d));
        let mut other = version(1_000);
        other.ctime.1 += 1;
        assert_eq!(cache.get(&other), None);
    }

    #[test]
    fn the_cache_is_bounded_and_says_when_something_was_added() {
        let cache = DigestCache::new(2);
        let d = Digest::of(b"x");
        assert_eq!(cache.take_dirty(), None);
        cache.restore(version(1), d);
        assert_eq!(cache.take_dirty(), None, "restored entries are not new");
        assert!(cache.insert(version(2), d, at(10, 0)));
        assert_eq!(cache.take_dirty().map(|v| v.len()), Some(2));
        assert_eq!(cache.take_dirty(), None);
        // A third distinct version starts the cache again; it never holds more than `max`.
        assert!(cache.insert(version(3), d, at(10, 0)));
        assert_eq!(cache.get(&version(1)), None);
        assert_eq!(cache.get(&version(3)), Some(d));
        cache.restore(version(4), d);
        cache.restore(version(5), d);
        assert_eq!(cache.take_dirty().map(|v| v.len()), Some(2));
    }
}
