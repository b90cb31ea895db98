//! The trivial command hook: exits 0 without reading or printing anything, like `sh -c true`.
//! The benchmark compares it with a native command hook doing the same.

fn main() {}
