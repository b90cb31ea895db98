//! `hookbox serve`: the flags over the configuration file, then `hookbox_server` does the rest
//! (folders, runtime, tenants, routes, signals, drain). Prints the address it bound as the first
//! line on stdout, so a script that passed `--listen 127.0.0.1:0` learns the port.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use hookbox_server::logging::{self, LogError};
use hookbox_server::{DEFAULT_CONFIG, Server, ServerConfig};

use crate::cli::ServeArgs;
use crate::host_setup::block_on_workers;

/// Runs `hookbox serve`.
pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    if args.print_default_config {
        let mut out = std::io::stdout().lock();
        out.write_all(DEFAULT_CONFIG.as_bytes())
            .context("cannot write to stdout")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut config = match &args.config {
        Some(path) => ServerConfig::load(path)?,
        None => ServerConfig::default(),
    };
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    if let Some(dir) = &args.tenants {
        config.tenants_dir.clone_from(dir);
    }
    if let Some(format) = &args.log_format {
        config.log_format = format.parse()?;
    }
    match logging::init(config.log_format, &config.log_filter) {
        Ok(()) => {}
        // `HOOKBOX_LOG` made `main` install the CLI's text logger before we got here.
        Err(LogError::AlreadySet(_)) => eprintln!(
            "hookbox serve: HOOKBOX_LOG is set, so logs are text filtered by it; unset it to use log_format and log_filter"
        ),
        Err(e) => return Err(e.into()),
    }
    block_on_workers(config.worker_threads(), async move {
        let server = Server::bind(config)
            .await
            .context("cannot start the server")?;
        let addr = server
            .local_addr()
            .context("cannot read the bound address")?;
        {
            // In a block: the lock must not live across the await below (the task is `Send`).
            let mut out = std::io::stdout().lock();
            writeln!(out, "{addr}").context("cannot write to stdout")?;
            out.flush().context("cannot write to stdout")?;
        }
        tracing::info!(%addr, "listening");
        server.run_until_signal().await?;
        Ok(ExitCode::SUCCESS)
    })?
}
