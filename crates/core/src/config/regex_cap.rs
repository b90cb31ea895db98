//! The regex work one hook file may ask for at load (issue 8 #11). Each matcher regex costs up to
//! [`REGEX_SIZE_LIMIT`](crate::matcher::REGEX_SIZE_LIMIT) to compile (about a millisecond at
//! most), and each backtracking one also draws on every dispatch's matching budget; without a
//! cap, a file of a hundred huge matchers (`\S{2000}`) cost seconds per load. Over the cap, the
//! file's remaining regex matchers are not compiled and their rules are skipped, each with a
//! located diagnostic. The real files of the corpus use at most two regex matchers (50 bytes).

/// Default [`RegexLimits::patterns`]: 32 regexes compiled per file (16× the corpus's most).
pub const MAX_REGEX_PATTERNS_PER_FILE: usize = 32;

/// Default [`RegexLimits::bytes`]: 8 KiB of regex source per file (160× the corpus's most).
pub const MAX_REGEX_BYTES_PER_FILE: usize = 8 * 1024;

/// Default [`RegexLimits::backtracking`]: 8 regexes per file that need backtracking
/// (lookaround, backreferences); the corpus has none.
pub const MAX_BACKTRACKING_PATTERNS_PER_FILE: usize = 8;

/// Caps on the regex work of one hook file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegexLimits {
    /// Regexes compiled (string matchers that are not exact names, and `^…$` object-matcher
    /// values), whether they compile or not. Default [`MAX_REGEX_PATTERNS_PER_FILE`].
    pub patterns: usize,
    /// Bytes of regex source. Default [`MAX_REGEX_BYTES_PER_FILE`].
    pub bytes: usize,
    /// Regexes that need the backtracking engine. Default [`MAX_BACKTRACKING_PATTERNS_PER_FILE`].
    pub backtracking: usize,
}

impl Default for RegexLimits {
    fn default() -> Self {
        RegexLimits {
            patterns: MAX_REGEX_PATTERNS_PER_FILE,
            bytes: MAX_REGEX_BYTES_PER_FILE,
            backtracking: MAX_BACKTRACKING_PATTERNS_PER_FILE,
        }
    }
}

/// What one file has used so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct RegexUse {
    pub(crate) limits: RegexLimits,
    patterns: usize,
    bytes: usize,
    backtracking: usize,
}

impl RegexUse {
    /// Admits a matcher that compiles `sources`, before compiling: `Err` says which cap it
    /// would go over (nothing is counted then).
    pub(crate) fn admit(&mut self, sources: &[&str]) -> Result<(), String> {
        if sources.is_empty() {
            return Ok(());
        }
        let patterns = self.patterns + sources.len();
        let bytes = self.bytes + sources.iter().map(|s| s.len()).sum::<usize>();
        if patterns > self.limits.patterns {
            return Err(format!(
                "this file already compiled {} regex matchers, hookbox's limit per file is {}",
                self.patterns, self.limits.patterns
            ));
        }
        if bytes > self.limits.bytes {
            return Err(format!(
                "this file's regex matchers would total {bytes} bytes, over hookbox's limit of {} per file",
                self.limits.bytes
            ));
        }
        self.patterns = patterns;
        self.bytes = bytes;
        Ok(())
    }

    /// Admits `n` compiled backtracking regexes: `Err` when over the cap.
    pub(crate) fn admit_backtracking(&mut self, n: usize) -> Result<(), String> {
        if n == 0 {
            return Ok(());
        }
        if self.backtracking + n > self.limits.backtracking {
            return Err(format!(
                "this file already has {} matchers that need backtracking (lookaround or backreferences), hookbox's limit per file is {}",
                self.backtracking, self.limits.backtracking
            ));
        }
        self.backtracking += n;
        Ok(())
    }
}
