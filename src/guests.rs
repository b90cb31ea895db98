//! The example guests this binary carries (`hookbox-bundled`), by name, for `demo` and `bench`.

use anyhow::bail;

/// The bytes of the bundled guest `name` (`noop`, `shell_guard`, `runaway`, …).
pub(crate) fn wasm(name: &str) -> anyhow::Result<&'static [u8]> {
    match hookbox_bundled::guest(name) {
        Some(g) => Ok(g.bytes),
        None if name.ends_with("_js")
            || name.ends_with("_qjs")
            || name.ends_with("_cqjs")
            || name.ends_with("_py") =>
        {
            bail!(
                polyglot_missing()
                    .unwrap_or_else(|| format!("this hookbox carries no example guest `{name}`"))
            )
        }
        None => bail!("this hookbox carries no example guest `{name}`"),
    }
}

/// Why this binary carries no JavaScript/Python example guests, if it does not.
pub(crate) fn polyglot_missing() -> Option<String> {
    (!hookbox_bundled::POLYGLOT_MISSING.is_empty()).then(|| {
        format!(
            "this hookbox was built without the JavaScript/Python example guests ({}); run \
             scripts/setup-polyglot.sh and rebuild",
            hookbox_bundled::POLYGLOT_MISSING.join("; ")
        )
    })
}
