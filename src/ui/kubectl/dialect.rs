//! Where kubectl drain's lines differ from one minor to the next, read from
//! each kubectl's own output (1.27 to 1.33, run side by side in
//! tests/it/script_lines.rs) and from kubernetes/kubectl pkg/cmd/drain/drain.go
//! and pkg/drain/{drain,filters}.go for the minors we cannot run.

use std::time::Duration;

use crate::duration::go;
use crate::policy::classify::Refusal;

/// The oldest and newest minors whose words we know; a server outside
/// them gets the nearest.
const OLDEST: u32 = 27;
const NEWEST: u32 = 36;

/// kubectl drain's words for one minor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    minor: u32,
}

impl Dialect {
    /// The words of kubectl `1.<minor>` (the server's minor: a kubectl
    /// within one minor of it is what runbooks run).
    pub(crate) fn of(minor: u32) -> Self {
        Dialect {
            minor: minor.clamp(OLDEST, NEWEST),
        }
    }

    /// `unable to drain node "N" due to error:<err>`: 1.31 put a space
    /// after the colon.
    pub(crate) fn due_to(self) -> &'static str {
        if self.minor >= 31 { " " } else { "" }
    }

    /// A filter's refusal, as kubectl's aggregate names it. The
    /// no-controller text was "Pods declare no controller" until 1.29, then
    /// "cannot delete Pods that declare..." with kubectl's own "cannot
    /// delete " prefixed once more, until 1.36 stopped doubling it.
    pub(crate) fn refusal(self, refusal: &Refusal) -> String {
        match refusal {
            Refusal::Unmanaged if self.minor <= 29 => {
                "cannot delete Pods declare no controller (use --force to override)".into()
            }
            Refusal::Unmanaged if self.minor <= 35 => {
                "cannot delete cannot delete Pods that declare no controller (use --force to override)"
                    .into()
            }
            other => other.kubectl_message(),
        }
    }

    /// Why an evicted pod still terminating failed the node at `--timeout`:
    /// 1.32 moved the wait onto a context, and its error with it.
    pub(crate) fn wait_timed_out(self, timeout: Duration) -> String {
        if self.minor <= 31 {
            format!("global timeout reached: {}", go(timeout))
        } else {
            "context deadline exceeded".into()
        }
    }

    /// Why a `--disable-eviction` drain failed at `--timeout`.
    pub(crate) fn delete_timed_out(self) -> &'static str {
        if self.minor <= 31 {
            "timed out waiting for the condition"
        } else {
            "context deadline exceeded"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_minor_has_the_words_its_kubectl_printed() {
        let unmanaged = |minor| Dialect::of(minor).refusal(&Refusal::Unmanaged);
        assert!(unmanaged(27).starts_with("cannot delete Pods declare no controller"));
        assert!(unmanaged(30).starts_with("cannot delete cannot delete Pods that declare"));
        assert!(unmanaged(36).starts_with("cannot delete Pods that declare"));
        assert_eq!(Dialect::of(30).due_to(), "");
        assert_eq!(Dialect::of(31).due_to(), " ");
        let t = Duration::from_secs(90);
        assert_eq!(
            Dialect::of(31).wait_timed_out(t),
            "global timeout reached: 1m30s"
        );
        assert_eq!(
            Dialect::of(32).wait_timed_out(t),
            "context deadline exceeded"
        );
        assert_eq!(Dialect::of(12), Dialect::of(27));
        assert_eq!(Dialect::of(40), Dialect::of(36));
    }
}
