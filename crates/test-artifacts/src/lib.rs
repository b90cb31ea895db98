//! Paths of the built guest components (being written).
