//! Guest SDK (being written).
