//! Why a drain could not run: what the user asked for (exit 2) or a
//! failure (exit 1). The exit code itself is chosen in crate::cli::exit.

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum DrainError {
    /// kubectl's words for it (its resource builder's NotFound), one
    /// line per node.
    #[error("{}", .0.iter().map(|n| format!("Error from server (NotFound): nodes {n:?} not found")).collect::<Vec<_>>().join("\n"))]
    NodesNotFound(Vec<String>),
    #[error("no nodes match the selector {0:?}")]
    NoNodesMatch(String),
    #[error("{message}\n  the drain needs permission to {verb} {resource}{}", namespace.as_ref().map(|n| format!(" in namespace {n}")).unwrap_or_default())]
    Forbidden {
        verb: String,
        resource: String,
        namespace: Option<String>,
        message: String,
    },
    /// A request failed for good: which, what the server said, what to check.
    #[error("{}", super::api_words::failed(request, error))]
    Api { request: String, error: kube::Error },
    /// The object changed under every attempt to update it.
    #[error("{0}")]
    Conflict(String),
    /// An undo that could not finish, and what is left for a rerun.
    #[error("{0}")]
    Unfinished(String),
    /// A guard rail refused the selection; nothing was changed.
    #[error("{0}")]
    Guard(crate::policy::guard::Refusal),
    /// `--node-shut-down` without what it needs (a node that is Ready, no
    /// way to prove power-off); nothing was changed.
    #[error("{0}")]
    NoProof(String),
    /// A fence command failed: no proof of power-off; nothing was changed.
    #[error("{0}")]
    NotShutDown(String),
    /// An API the options need is not served; nothing was changed.
    #[error("{0}")]
    NotServed(String),
}

impl DrainError {
    /// Errors in what the user asked for (exit 2) versus failures (exit 1).
    pub(crate) fn is_usage(&self) -> bool {
        matches!(
            self,
            DrainError::NodesNotFound(_)
                | DrainError::NoNodesMatch(_)
                | DrainError::Guard(_)
                | DrainError::NoProof(_)
                | DrainError::NotServed(_)
        )
    }
}

impl DrainError {
    /// The whole chain, as kubectl prints an error: "list pods: <why>".
    pub(crate) fn chain(&self) -> String {
        let mut message = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(s) = source {
            message = format!("{message}: {s}");
            source = s.source();
        }
        message
    }
}
