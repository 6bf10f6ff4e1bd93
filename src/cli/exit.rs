//! How the process ends: the error that ended a command, printed as
//! kubectl prints it, with its exit code (the codes, and what an outcome
//! calls for, are decided in crate::exit_codes).

use std::process::ExitCode;

use crate::vocabulary::DrainError;

pub use crate::exit_codes::{FAILURE, INCOMPLETE, INTERRUPTED, OK, TERMINATED, USAGE};

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

impl From<DrainError> for Exit {
    fn from(e: DrainError) -> Self {
        let code = if e.is_usage() { USAGE } else { FAILURE };
        Exit {
            code,
            message: e.chain(),
        }
    }
}

/// Maps a command's result to the process exit code, printing the error
/// chain the way kubectl prints errors. A write to stdout or stderr that failed (crate::ui::streams) ends a run
/// that would have succeeded with exit 1 and kubectl's line for it.
pub fn report(result: anyhow::Result<u8>) -> ExitCode {
    let code = decide(result);
    match crate::ui::streams::failure() {
        Some(words) => {
            crate::errln!("error: {words}");
            ExitCode::from(if code == OK { FAILURE } else { code })
        }
        None => ExitCode::from(code),
    }
}

fn decide(result: anyhow::Result<u8>) -> u8 {
    match result {
        Ok(code) => code,
        Err(err) => {
            let code = match err.downcast_ref::<Exit>() {
                Some(e) => e.code,
                None if err.is::<crate::client::BadFlag>()
                    || err.is::<crate::client::kubeconfig::ConfigError>()
                    || err.is::<crate::outbound::proxy::BadProxy>() =>
                {
                    USAGE
                }
                None => FAILURE,
            };
            let words = words(&err);
            // kubectl prints the server's refusal, a connection it could
            // not make and a context it could not find as they are,
            // without "error: ".
            if [
                "Error from server",
                "The connection to the server",
                "Unable to connect to the server",
                "Error in configuration",
            ]
            .iter()
            .any(|p| words.starts_with(p))
                || words.contains("\nUnable to connect to the server")
            {
                crate::errln!("{words}");
            } else {
                crate::errln!("error: {words}");
            }
            code
        }
    }
}

/// An error and its causes in one line, as kubectl prints one; a client
/// error in the chain is said in crate::vocabulary::api_error's words (the
/// server, its answer, what to check), never as kube's debug structure.
fn words(err: &anyhow::Error) -> String {
    let mut parts = Vec::new();
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<kube::Error>() {
            // Unreachable or untrusted: kubectl's line alone, as kubectl
            // says it whatever the request was.
            if crate::vocabulary::api_words::said_alone(e) {
                return crate::vocabulary::api_words::words(e);
            }
            // Its own causes are in those words already.
            parts.push(crate::vocabulary::api_words::words(e));
            break;
        }
        parts.push(cause.to_string());
    }
    parts.join(": ")
}
