//! What some of a load's rules (or plugins) carry, by position: made once when the rules are
//! installed, read on every dispatch. A vector sorted by position and searched by it — no
//! hashing on the dispatch path (a std `HashMap<usize, _>` lookup hashed the position with
//! SipHash: ~150 instructions, twice per wasm hook per event), and as compact as the entries
//! (a rule set of 10,000 rules with one component holds one entry, not 10,000 slots).

use std::collections::HashMap;

/// Entries by position, each position at most once.
#[derive(Debug)]
pub(crate) struct ByPosition<T> {
    /// Sorted by position, no position twice.
    entries: Vec<(usize, T)>,
}

impl<T> Default for ByPosition<T> {
    fn default() -> Self {
        ByPosition {
            entries: Vec::new(),
        }
    }
}

impl<T> ByPosition<T> {
    /// The entry at `pos`, if there is one.
    pub(crate) fn get(&self, pos: usize) -> Option<&T> {
        self.entries
            .binary_search_by_key(&pos, |(p, _)| *p)
            .ok()
            .map(|i| &self.entries[i].1)
    }
}

impl<T> From<HashMap<usize, T>> for ByPosition<T> {
    /// The installer's map (one entry per position by construction), sorted for the search.
    fn from(map: HashMap<usize, T>) -> Self {
        let mut entries: Vec<(usize, T)> = map.into_iter().collect();
        entries.sort_unstable_by_key(|(p, _)| *p);
        ByPosition { entries }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_entry_by_its_position_and_nothing_elsewhere() {
        let m = ByPosition::from(HashMap::from([(7, "seven"), (2, "two"), (40, "forty")]));
        assert_eq!(m.get(2), Some(&"two"));
        assert_eq!(m.get(7), Some(&"seven"));
        assert_eq!(m.get(40), Some(&"forty"));
        for absent in [0, 1, 3, 8, 39, 41, usize::MAX] {
            assert_eq!(m.get(absent), None, "{absent}");
        }
        assert_eq!(ByPosition::<u8>::default().get(0), None);
    }
}
