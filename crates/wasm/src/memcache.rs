//! The runtime's in-memory map of loaded components, bounded by bytes of compiled code
//! (`RuntimeConfig::memory_cache_bytes`) with least-recently-loaded eviction.
//!
//! Each entry is a slot that one loader fills (concurrent loads of the same bytes wait on it, so
//! a component compiles once). Forgetting an entry never unloads a component: rules holding its
//! `Arc` keep it alive; the next load of those bytes finds the disk cache instead.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::cache::Sha;
use crate::runtime::LoadedComponent;

/// One component's slot: empty while it loads (or after its load failed).
pub(crate) type Slot = Arc<Mutex<Option<Arc<LoadedComponent>>>>;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded data stays consistent even if a holder panicked.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug)]
struct Entry {
    slot: Slot,
    /// Bytes of compiled code; 0 while loading.
    bytes: u64,
    /// Logical time of the last load that asked for it.
    used: u64,
}

/// What the map holds, for operators and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryCacheUsage {
    /// Components held (loaded, or loading).
    pub components: usize,
    /// Bytes of compiled code of the loaded ones.
    pub bytes: u64,
}

#[derive(Debug)]
pub(crate) struct MemCache {
    entries: HashMap<Sha, Entry>,
    clock: u64,
    bytes: u64,
    max_bytes: u64,
}

impl MemCache {
    pub(crate) fn new(max_bytes: u64) -> MemCache {
        MemCache {
            entries: HashMap::new(),
            clock: 0,
            bytes: 0,
            max_bytes,
        }
    }

    /// The slot of `sha`, created empty if new, marked as just used.
    pub(crate) fn slot(&mut self, sha: Sha) -> Slot {
        self.clock += 1;
        let entry = self.entries.entry(sha).or_insert_with(|| Entry {
            slot: Slot::default(),
            bytes: 0,
            used: 0,
        });
        entry.used = self.clock;
        entry.slot.clone()
    }

    /// Records that `sha` finished loading with `bytes` of code, then forgets the least
    /// recently used loaded components (never `sha` itself) until the map fits.
    pub(crate) fn loaded(&mut self, sha: &Sha, bytes: u64) {
        if let Some(e) = self.entries.get_mut(sha) {
            self.bytes = self.bytes.saturating_sub(e.bytes) + bytes;
            e.bytes = bytes;
        }
        while self.bytes > self.max_bytes {
            let victim = self
                .entries
                .iter()
                .filter(|(k, e)| *k != sha && e.bytes > 0)
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| *k);
            match victim {
                Some(k) => self.remove(&k),
                None => break,
            }
        }
    }

    /// Forgets `sha`.
    pub(crate) fn remove(&mut self, sha: &Sha) {
        if let Some(e) = self.entries.remove(sha) {
            self.bytes = self.bytes.saturating_sub(e.bytes);
        }
    }

    pub(crate) fn usage(&self) -> MemoryCacheUsage {
        MemoryCacheUsage {
            components: self.entries.len(),
            bytes: self.bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(n: u8) -> Sha {
        [n; 32]
    }

    #[test]
    fn least_recently_used_go_first_and_the_newest_stays() {
        let mut m = MemCache::new(100);
        for n in 1..=3 {
            m.slot(sha(n));
            m.loaded(&sha(n), 40);
        }
        // 1 went when 3 arrived (120 > 100).
        assert_eq!(
            m.usage(),
            MemoryCacheUsage {
                components: 2,
                bytes: 80
            }
        );
        assert!(!m.entries.contains_key(&sha(1)));
        // 2 is used again, so 3 is now the oldest and goes for 4.
        m.slot(sha(2));
        m.slot(sha(4));
        m.loaded(&sha(4), 40);
        assert!(m.entries.contains_key(&sha(2)) && !m.entries.contains_key(&sha(3)));
        // One entry bigger than the bound stays alone.
        m.slot(sha(5));
        m.loaded(&sha(5), 500);
        assert_eq!(
            m.usage(),
            MemoryCacheUsage {
                components: 1,
                bytes: 500
            }
        );
    }

    #[test]
    fn loading_entries_are_never_evicted() {
        let mut m = MemCache::new(10);
        m.slot(sha(1));
        m.slot(sha(2));
        m.loaded(&sha(2), 50);
        assert_eq!(m.usage().components, 2);
    }
}
