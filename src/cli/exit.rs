//! Exit codes: part of the interface, documented in docs/exit-codes.md.

use std::process::ExitCode;

/// Every selected node drained; the command did what was asked.
pub const OK: u8 = 0;
/// An API or unexpected failure.
pub const FAILURE: u8 = 1;
/// Usage error or invalid input; nothing was changed (clap uses 2 too).
pub const USAGE: u8 = 2;
/// The drain did not complete: blocked or timed out; the report says why.
pub const INCOMPLETE: u8 = 3;
/// Interrupted (SIGINT).
pub const INTERRUPTED: u8 = 130;

/// An error that carries the exit code it should end the process with.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Exit {
    pub code: u8,
    pub message: String,
}

impl Exit {
    pub fn usage(message: impl Into<String>) -> Self {
        Exit {
            code: USAGE,
            message: message.into(),
        }
    }
}

/// Maps a command's result to the process exit code, printing the error
/// chain the way kubectl prints errors.
pub fn report(result: anyhow::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let code = err.downcast_ref::<Exit>().map_or(FAILURE, |e| e.code);
            eprintln!("error: {err:#}");
            ExitCode::from(code)
        }
    }
}
