//! Loading hook files: plugin discovery, dialect detection, parsing of every rule shape, and
//! validation with located diagnostics. (Being written; see the foundation issue.)
