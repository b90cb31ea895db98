//! `hookbox schema`: print the JSON Schema of hooks files (`hookbox_core::config::hooks_schema`,
//! generated from the parser's own tables), the text committed as `schema/hooks.schema.json`.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context;

/// The schema as printed and committed: pretty JSON with a final newline.
pub(crate) fn schema_text() -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(&hookbox_core::config::hooks_schema())
        .context("cannot encode the schema")?;
    s.push('\n');
    Ok(s)
}

/// Runs `hookbox schema`.
pub(crate) fn run() -> anyhow::Result<ExitCode> {
    let text = schema_text()?;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write to stdout")?;
    Ok(ExitCode::SUCCESS)
}
