//! What some of a load's rules (or plugins) carry, by position: made once when the rules are
//! installed, read on every dispatch. A vector sorted by position and searched by it — no
//! hashing on the dispatch path (a std `HashMap<usize, _>` lookup hashed the position with
//! SipHash: ~150 instructions, twice per wasm hook per event), and as compact as the entries
//! (a rule set of 10,000 rules with one component holds one entry, not 10,000 slots).

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

impl<T> FromIterator<(usize, T)> for ByPosition<T> {
    /// Entries in any order; of two at one position the later is kept (as a map's insert would).
    fn from_iter<I: IntoIterator<Item = (usize, T)>>(iter: I) -> Self {
        let mut entries: Vec<(usize, T)> = iter.into_iter().collect();
        // Stable: entries at one position stay in the order given, so the last one is the later.
        entries.sort_by_key(|(p, _)| *p);
        let mut kept: Vec<(usize, T)> = Vec::with_capacity(entries.len());
        for (pos, value) in entries {
            match kept.last_mut() {
                Some(last) if last.0 == pos => last.1 = value,
                _ => kept.push((pos, value)),
            }
        }
        ByPosition { entries: kept }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_entry_by_its_position_and_nothing_elsewhere() {
        let m: ByPosition<&str> = [(7, "seven"), (2, "two"), (40, "forty")]
            .into_iter()
            .collect();
        assert_eq!(m.get(2), Some(&"two"));
        assert_eq!(m.get(7), Some(&"seven"));
        assert_eq!(m.get(40), Some(&"forty"));
        for absent in [0, 1, 3, 8, 39, 41, usize::MAX] {
            assert_eq!(m.get(absent), None, "{absent}");
        }
        assert_eq!(ByPosition::<u8>::default().get(0), None);
    }

    #[test]
    fn the_later_of_two_entries_at_one_position_is_kept() {
        let m: ByPosition<u8> = [(3, 1), (1, 9), (3, 2), (3, 3)].into_iter().collect();
        assert_eq!(m.get(3), Some(&3));
        assert_eq!(m.get(1), Some(&9));
        assert_eq!(m.entries.len(), 2);
    }
}
