//! `--kubelet-version RANGE`: nodes chosen by the kubelet version they
//! report (`status.nodeInfo.kubeletVersion`, `v1.32.4`, `v1.32.4-eks-1a2b`),
//! as an upgrade runbook chooses them and a label selector cannot.
//!
//! A range is one or more comparisons joined by commas, all of which must
//! hold: `<1.33`, `>=1.30,<1.33`, `=1.32`, or a bare `1.32`. A comparison
//! is as precise as its version: `1.32` is every 1.32 patch, `1.32.4` that
//! patch alone, so `<1.33` takes `v1.32.9` and `>1.32` does not take it.
//! A node whose version cannot be read is never chosen.

use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Comparison {
    op: Op,
    /// Major, minor and, when given, patch.
    version: Vec<u64>,
}

/// A parsed `--kubelet-version` range, as it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeletRange {
    written: String,
    all: Vec<Comparison>,
}

impl fmt::Display for KubeletRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

/// `1.32` or `1.32.4`, a leading `v` allowed; what follows the patch
/// (`-eks-1a2b`, `+k3s1`) is not part of the version compared.
fn version(text: &str) -> Option<Vec<u64>> {
    let text = text.trim().strip_prefix('v').unwrap_or(text.trim());
    let core = text.split(['-', '+']).next()?;
    let parts: Vec<u64> = core
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    (2..=3).contains(&parts.len()).then_some(parts)
}

impl KubeletRange {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut all = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let (op, rest) = [
                ("<=", Op::Le),
                (">=", Op::Ge),
                ("==", Op::Eq),
                ("<", Op::Lt),
                (">", Op::Gt),
                ("=", Op::Eq),
            ]
            .into_iter()
            .find_map(|(s, op)| part.strip_prefix(s).map(|rest| (op, rest)))
            .unwrap_or((Op::Eq, part));
            let version = version(rest).ok_or_else(|| {
                format!(
                    "{part:?} is not a version comparison: give MAJOR.MINOR or MAJOR.MINOR.PATCH after <, <=, >, >= or =, such as <1.33 or >=1.30,<1.33"
                )
            })?;
            all.push(Comparison { op, version });
        }
        Ok(KubeletRange {
            written: text.trim().to_string(),
            all,
        })
    }

    /// Does a kubelet reporting `reported` (`v1.32.4`) fall in the range?
    pub(crate) fn takes(&self, reported: &str) -> bool {
        let Some(have) = version(reported) else {
            return false;
        };
        self.all.iter().all(|c| {
            let have: Vec<u64> = (0..c.version.len())
                .map(|i| have.get(i).copied().unwrap_or(0))
                .collect();
            let order = have.cmp(&c.version);
            match c.op {
                Op::Lt => order == Ordering::Less,
                Op::Le => order != Ordering::Greater,
                Op::Gt => order == Ordering::Greater,
                Op::Ge => order != Ordering::Less,
                Op::Eq => order == Ordering::Equal,
            }
        })
    }

    /// Does this node's kubelet fall in the range?
    pub(crate) fn takes_node(&self, node: &k8s_openapi::api::core::v1::Node) -> bool {
        node.status
            .as_ref()
            .and_then(|s| s.node_info.as_ref())
            .is_some_and(|i| self.takes(&i.kubelet_version))
    }
}

#[cfg(test)]
mod tests {
    use super::KubeletRange;

    fn takes(range: &str, version: &str) -> bool {
        KubeletRange::parse(range).unwrap().takes(version)
    }

    #[test]
    fn a_comparison_is_as_precise_as_its_version() {
        assert!(takes("<1.33", "v1.32.9"));
        assert!(!takes("<1.33", "v1.33.0"));
        assert!(takes("<=1.33", "v1.33.7"));
        assert!(!takes(">1.32", "v1.32.9"));
        assert!(takes(">1.32", "v1.33.0"));
        assert!(takes("1.32", "v1.32.4"));
        assert!(takes("=1.32.4", "v1.32.4-eks-1a2b3c"));
        assert!(!takes("=1.32.4", "v1.32.5"));
        assert!(takes(">=1.30,<1.33", "v1.31.2+k3s1"));
        assert!(!takes(">=1.30,<1.33", "v1.29.9"));
        assert!(takes(">=1.30.2", "v1.30.2"));
        assert!(!takes(">=1.30.2", "v1.30.1"));
        assert!(!takes("<1.33", ""), "an unreadable version is never taken");
        assert!(takes("< 1.33", "1.32.0"), "spaces and no v");
    }

    #[test]
    fn what_is_no_range_is_refused_in_words() {
        for bad in ["", "<", "1", "1.x", "<1.33,", "~1.32", "1.2.3.4"] {
            let e = KubeletRange::parse(bad).unwrap_err();
            assert!(e.contains("is not a version comparison"), "{bad:?}: {e}");
        }
    }
}
