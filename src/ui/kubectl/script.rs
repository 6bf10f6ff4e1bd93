//! kubectl drain's lines from the drain's events, without I/O: what
//! kubernetes/kubectl pkg/cmd/drain/drain.go (`RunDrain`,
//! `deleteOrEvictPodsSimple`, `RunCordonOrUncordon`) and pkg/drain/drain.go
//! (`evictPods`, `deletePods`, `waitForDelete`) print, on the stream each
//! prints it on, in its words for the server's minor (`Dialect`).
//!
//! Lines kubectl has no word for (a pod held by a drain marker, a volume
//! still attached, our own warnings) go to stderr in our words, so that a
//! wait is never silent; stdout holds kubectl's lines only.

use std::collections::HashSet;
use std::time::Duration;

use super::dialect::Dialect;
use crate::policy::classify::kubectl_warning;
use crate::vocabulary::DryRun;
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::{Cause, DrainOutcome, NodeOutcome, NodeStatus, PodResult};
use crate::vocabulary::pod_key::PodKey;

/// Which stream a line goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Out,
    Err,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub(crate) stream: Stream,
    pub(crate) text: String,
}

fn out(text: String) -> Line {
    Line {
        stream: Stream::Out,
        text,
    }
}

fn err(text: String) -> Line {
    Line {
        stream: Stream::Err,
        text,
    }
}

/// What the lines depend on besides the events.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Config {
    pub(crate) dialect: Dialect,
    pub(crate) dry_run: DryRun,
    /// `--disable-eviction`: pods are deleted, and said `deleted`.
    pub(crate) disable_eviction: bool,
    /// `--timeout`, which kubectl's timeout errors name.
    pub(crate) timeout: Option<Duration>,
}

/// Why a node was not drained, as kubectl's error for it: an aggregate of
/// one error per pod (or per refusal), or a single error.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NodeError {
    Aggregate(Vec<String>),
    Single(String),
}

impl NodeError {
    /// Go's `utilerrors.Aggregate.Error()`: one error as it is, several
    /// in brackets.
    fn text(&self) -> String {
        match self {
            NodeError::Aggregate(errors) if errors.len() == 1 => errors[0].clone(),
            NodeError::Aggregate(errors) => format!("[{}]", errors.join(", ")),
            NodeError::Single(e) => e.clone(),
        }
    }
}

/// The lines of one drain command: fed each event, then the outcome.
#[derive(Debug)]
pub(crate) struct Script {
    config: Config,
    /// Pods asked to go (evicted or deleted), told when gone.
    asked: HashSet<PodKey>,
    /// Pods `--deadline` deleted.
    forced: HashSet<PodKey>,
    /// Nodes whose end has been told, once per time (a node named twice is
    /// drained twice, as kubectl drains it).
    ended: Vec<String>,
    /// Nodes not drained, with kubectl's error for each, in order.
    failed: Vec<(String, NodeError)>,
}

impl Script {
    pub(crate) fn new(config: Config) -> Self {
        Script {
            config,
            asked: HashSet::new(),
            forced: HashSet::new(),
            ended: Vec::new(),
            failed: Vec::new(),
        }
    }

    /// `(dry run)` or `(server dry run)` after a line, as kubectl's printer
    /// adds it.
    fn suffix(&self) -> &'static str {
        match self.config.dry_run {
            DryRun::None => "",
            DryRun::Client => " (dry run)",
            DryRun::Server => " (server dry run)",
        }
    }

    /// The lines one event stands for.
    pub(crate) fn on(&mut self, e: &Event) -> Vec<Line> {
        match e {
            Event::Cordoned { node, already } => {
                let verb = if *already {
                    "already cordoned"
                } else {
                    "cordoned"
                };
                vec![out(format!("node/{node} {verb}{}", self.suffix()))]
            }
            Event::NodeStarted { warned, .. } => warning_line(warned).into_iter().collect(),
            Event::Evicted { pod, .. } => {
                self.asked.insert(pod.clone());
                if self.config.disable_eviction {
                    Vec::new()
                } else {
                    vec![evicting(pod, "")]
                }
            }
            Event::EvictionRefused { pod, message, .. } => vec![
                evicting(pod, ""),
                err(format!(
                    "error when evicting pods/{:?} -n {:?} (will retry after 5s): {message}",
                    pod.name, pod.namespace
                )),
            ],
            Event::Forced { pod, .. } => {
                self.forced.insert(pod.clone());
                ours(e)
            }
            Event::PodGone { pod, .. } => {
                let forced = self.forced.remove(pod);
                if !self.asked.remove(pod) && !forced {
                    return Vec::new();
                }
                let verb = if forced || self.config.disable_eviction {
                    "deleted"
                } else {
                    "evicted"
                };
                vec![out(format!("pod/{} {verb}", pod.name))]
            }
            Event::NotWaitedFor { pod, seconds, .. } => {
                self.asked.remove(pod);
                vec![out(format!(
                    "pod {:?} has DeletionTimestamp older than {seconds} seconds, skipping",
                    pod.name
                ))]
            }
            // kubectl drain would still wait for it: our line, on stderr.
            Event::PodLost {
                node,
                pod,
                seconds,
                timeout,
            } => {
                self.asked.remove(pod);
                vec![err(format!(
                    "warning: {}",
                    crate::ui::words::dead_node::lost_line(
                        node,
                        &pod.to_string(),
                        *seconds,
                        *timeout
                    )
                ))]
            }
            Event::NodeDone { outcome, .. } => self.node_end(outcome),
            // Ours, in our words, as every warning of ours is written.
            Event::Warning(w) => vec![err(format!("warning: {w}"))],
            // kubectl's refusal line says what a budget holds.
            Event::Blocked {
                cause: Cause::Pdb { .. },
                ..
            }
            | Event::WaveStarted { .. }
            | Event::WaveDone { .. }
            | Event::Phase { .. }
            | Event::EvictionAnswered { .. }
            | Event::Hold { .. }
            | Event::HoldEnded { .. }
            | Event::RunPhase { .. }
            | Event::Planned { .. }
            | Event::NodeEnded { .. } => Vec::new(),
            Event::Blocked { .. } | Event::Surge { .. } | Event::ApiTrouble { .. } => ours(e),
        }
    }

    /// The lines of a node's end: `drained`, or why not.
    fn node_end(&mut self, n: &NodeOutcome) -> Vec<Line> {
        self.ended.push(n.node.clone());
        let mut lines = Vec::new();
        let error = match n.status {
            NodeStatus::Drained => {
                lines.push(out(format!("node/{} drained", n.node)));
                None
            }
            NodeStatus::Interrupted => None,
            NodeStatus::DryRun => self.dry_run_node(n, &mut lines),
            NodeStatus::Refused => Some(NodeError::Aggregate(self.refusals(n))),
            NodeStatus::NotStarted => Some(NodeError::Single(message(n))),
            NodeStatus::TimedOut | NodeStatus::Failed => {
                let error = self.pod_errors(n);
                let pending = pending(n);
                if !pending.is_empty() {
                    lines.push(err(format!(
                        "There are pending pods in node {:?} when an error occurred: {}",
                        n.node,
                        error.text()
                    )));
                    lines.extend(pending.iter().map(|p| err(format!("pod/{}", p.name))));
                }
                Some(error)
            }
        };
        if let Some(error) = error {
            lines.push(err(format!(
                "error: unable to drain node {:?} due to error:{}{}, continuing command...",
                n.node,
                self.config.dialect.due_to(),
                error.text()
            )));
            self.failed.push((n.node.clone(), error));
        }
        lines
    }

    /// A dry run's node, as kubectl's `deleteOrEvictPodsSimple` tells it:
    /// the refusals, or the warning and each pod it would evict.
    fn dry_run_node(&self, n: &NodeOutcome, lines: &mut Vec<Line>) -> Option<NodeError> {
        let refusals = self.refusals(n);
        if !refusals.is_empty() {
            return Some(NodeError::Aggregate(refusals));
        }
        lines.extend(warning_line(&warned(n)));
        let mut blocked = Vec::new();
        for p in &n.pods {
            match &p.result {
                PodResult::WouldEvict => lines.push(evicting(&p.pod, self.suffix())),
                PodResult::WouldBlock { cause } => {
                    lines.push(evicting(&p.pod, self.suffix()));
                    let why = cause_message(cause);
                    lines.push(err(format!(
                        "error when evicting pods/{:?} -n {:?} (will retry after 5s): {why}",
                        p.pod.name, p.pod.namespace
                    )));
                    blocked.push(format!(
                        "error when evicting pods/{:?} -n {:?}: {why}",
                        p.pod.name, p.pod.namespace
                    ));
                }
                _ => {}
            }
        }
        if !blocked.is_empty() {
            return Some(NodeError::Aggregate(blocked));
        }
        lines.push(out(format!("node/{} drained{}", n.node, self.suffix())));
        None
    }

    /// kubectl's filter errors for a node: one per kind of refusal, with
    /// every pod it refuses (pkg/drain/filters.go `errors`).
    fn refusals(&self, n: &NodeOutcome) -> Vec<String> {
        grouped(n.pods.iter().filter_map(|p| match &p.result {
            PodResult::Remaining {
                cause: Cause::Refused { refusal, .. },
            } => Some((self.config.dialect.refusal(refusal), &p.pod)),
            _ => None,
        }))
    }

    /// Why each pod left on a node that timed out or failed is still there,
    /// as kubectl's eviction goroutines say it; a `--disable-eviction`
    /// drain fails as one.
    fn pod_errors(&self, n: &NodeOutcome) -> NodeError {
        let timeout = self
            .config
            .timeout
            .filter(|_| n.status == NodeStatus::TimedOut);
        if self.config.disable_eviction {
            return NodeError::Single(match timeout {
                Some(_) => self.config.dialect.delete_timed_out().to_string(),
                None => message(n),
            });
        }
        let mut errors = Vec::new();
        for p in &n.pods {
            let PodResult::Remaining { cause } = &p.result else {
                continue;
            };
            let (name, ns) = (&p.pod.name, &p.pod.namespace);
            let failed = match cause {
                Cause::Refused { .. } => continue,
                Cause::Forbidden { message }
                | Cause::ApiError { message }
                | Cause::MultiplePdbs { message } => message.clone(),
                _ => match timeout {
                    Some(t) if terminating(cause) => {
                        errors.push(format!(
                            "error when waiting for pod {name:?} in namespace {ns:?} to terminate: {}",
                            self.config.dialect.wait_timed_out(t)
                        ));
                        continue;
                    }
                    Some(t) => format!("global timeout reached: {}", crate::duration::go(t)),
                    None => continue,
                },
            };
            errors.push(format!(
                "error when evicting pods/{name:?} -n {ns:?}: {failed}"
            ));
        }
        if errors.is_empty() {
            NodeError::Single(message(n))
        } else {
            NodeError::Aggregate(errors)
        }
    }

    /// The lines after the last node: each node not told yet (a dry run
    /// tells them all here, cordons first, as kubectl does), then the
    /// nodes left and the command's error.
    pub(crate) fn end(&mut self, outcome: Option<&DrainOutcome>) -> Vec<Line> {
        let mut lines = Vec::new();
        if let Some(outcome) = outcome {
            let mut told = std::mem::take(&mut self.ended);
            let untold: Vec<&NodeOutcome> = outcome
                .nodes
                .iter()
                .filter(|n| match told.iter().position(|t| *t == n.node) {
                    Some(i) => {
                        told.swap_remove(i);
                        false
                    }
                    None => true,
                })
                .collect();
            if self.config.dry_run != DryRun::None {
                for n in &untold {
                    lines.extend(self.on(&Event::Cordoned {
                        node: n.node.clone(),
                        already: n.was_cordoned,
                    }));
                }
            }
            for n in untold {
                lines.extend(self.node_end(n));
            }
        }
        if self.failed.is_empty() {
            return lines;
        }
        lines.push(err("There are pending nodes to be drained:".into()));
        lines.extend(self.failed.iter().map(|(node, _)| err(format!(" {node}"))));
        // cmdutil.CheckErr: an aggregate of one node's errors is printed
        // one error a line; a single error with kubectl's "error: ".
        match self.failed.as_slice() {
            [(_, NodeError::Aggregate(errors))] => {
                lines.extend(errors.iter().map(|e| err(e.clone())));
            }
            [(_, NodeError::Single(e))] => lines.push(err(format!("error: {e}"))),
            several => lines.extend(several.iter().map(|(_, e)| err(e.text()))),
        }
        lines
    }
}

fn evicting(pod: &PodKey, suffix: &str) -> Line {
    out(format!(
        "evicting pod {}/{}{suffix}",
        pod.namespace, pod.name
    ))
}

/// A line of ours, on stderr, for what kubectl has no line for.
fn ours(e: &Event) -> Vec<Line> {
    crate::ui::lines::line(e).map(err).into_iter().collect()
}

/// kubectl's `Warning:` line for a node's pods: each message with the pods
/// it names (kubectl's order of messages is a Go map's; ours is stable).
fn warning_line(warned: &[(PodKey, &'static str)]) -> Option<Line> {
    let parts = grouped(warned.iter().map(|(pod, message)| (*message, pod)));
    (!parts.is_empty()).then(|| err(format!("Warning: {}", parts.join("; "))))
}

/// `MESSAGE: ns/a, ns/b` for each message, with its pods in their order,
/// as kubectl's filter list groups its warnings and errors.
fn grouped<'a, M: AsRef<str> + PartialEq>(
    items: impl Iterator<Item = (M, &'a PodKey)>,
) -> Vec<String> {
    let mut groups: Vec<(M, Vec<String>)> = Vec::new();
    for (message, pod) in items {
        match groups.iter_mut().find(|(m, _)| *m == message) {
            Some((_, pods)) => pods.push(pod.to_string()),
            None => groups.push((message, vec![pod.to_string()])),
        }
    }
    groups
        .into_iter()
        .map(|(message, pods)| format!("{}: {}", message.as_ref(), pods.join(", ")))
        .collect()
}

/// The pods of an outcome kubectl's filters warn about.
fn warned(n: &NodeOutcome) -> Vec<(PodKey, &'static str)> {
    n.pods
        .iter()
        .filter_map(|p| {
            let skip = match &p.result {
                PodResult::Skipped { reason } => Some(reason),
                _ => None,
            };
            Some((p.pod.clone(), kubectl_warning(skip, p.warning.as_deref())?))
        })
        .collect()
}

/// The pods kubectl would list again after the error: those still on the
/// node that its filters let it delete, in the API's order.
fn pending(n: &NodeOutcome) -> Vec<&PodKey> {
    let mut pods: Vec<&PodKey> = n
        .pods
        .iter()
        .filter(|p| {
            matches!(&p.result, PodResult::Remaining { cause } if !matches!(cause, Cause::Refused { .. }))
        })
        .map(|p| &p.pod)
        .collect();
    pods.sort();
    pods
}

/// Evicted and on its way out: kubectl waits for it to terminate.
fn terminating(cause: &Cause) -> bool {
    matches!(
        cause,
        Cause::Terminating { .. } | Cause::Finalizers { .. } | Cause::NamespaceTerminating { .. }
    )
}

/// The API's message for a refusal a server dry run met.
fn cause_message(cause: &Cause) -> String {
    match cause {
        Cause::Pdb { .. } => crate::drain::evict::PDB_REFUSAL.into(),
        Cause::MultiplePdbs { message }
        | Cause::ApiError { message }
        | Cause::Forbidden { message } => message.clone(),
        other => crate::ui::words::blocked(other, None),
    }
}

fn message(n: &NodeOutcome) -> String {
    n.message.clone().unwrap_or_else(|| n.status.to_string())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::policy::classify::Refusal;
    use crate::vocabulary::outcome::PodOutcome;
    use crate::vocabulary::outcome::fixtures::{node, pod, remaining};

    fn script(minor: u32, disable_eviction: bool) -> Script {
        Script::new(Config {
            dialect: Dialect::of(minor),
            dry_run: DryRun::None,
            disable_eviction,
            timeout: Some(Duration::from_secs(3)),
        })
    }

    fn done(n: NodeOutcome) -> Event {
        Event::NodeDone {
            node: n.node.clone(),
            elapsed: Duration::ZERO,
            outcome: Arc::new(n),
        }
    }

    fn texts(lines: &[Line], stream: Stream) -> Vec<&str> {
        lines
            .iter()
            .filter(|l| l.stream == stream)
            .map(|l| l.text.as_str())
            .collect()
    }

    fn refused(ns: &str, name: &str, refusal: Refusal) -> PodOutcome {
        let message = refusal.kubectl_message();
        remaining(ns, name, Cause::Refused { refusal, message })
    }

    #[test]
    fn a_refused_node_is_one_aggregate_in_its_minors_words() {
        for (minor, due, unmanaged) in [
            (27, "error:[", "cannot delete Pods declare no controller"),
            (
                33,
                "error: [",
                "cannot delete cannot delete Pods that declare no controller",
            ),
            (
                36,
                "error: [",
                "cannot delete Pods that declare no controller",
            ),
        ] {
            let mut s = script(minor, false);
            let n = node(
                "n1",
                NodeStatus::Refused,
                vec![
                    refused("default", "bare", Refusal::Unmanaged),
                    refused("kube-system", "agent-a", Refusal::DaemonSet),
                    refused("kube-system", "agent-b", Refusal::DaemonSet),
                ],
            );
            let mut lines = s.on(&done(n));
            lines.extend(s.end(None));
            let err = texts(&lines, Stream::Err);
            assert!(
                err[0].starts_with(&format!(
                    "error: unable to drain node \"n1\" due to {due}{unmanaged}"
                )),
                "{err:?}"
            );
            assert!(
                err[0].contains(
                    "(use --ignore-daemonsets to ignore): kube-system/agent-a, kube-system/agent-b]"
                ),
                "{err:?}"
            );
            // One node: its errors one a line, without "error: ".
            assert_eq!(err[1..3], ["There are pending nodes to be drained:", " n1"]);
            assert_eq!(err.len(), 5, "{err:?}");
            assert!(err[3].starts_with(unmanaged), "{err:?}");
            assert!(texts(&lines, Stream::Out).is_empty());
        }
    }

    #[test]
    fn a_timeout_names_each_pod_as_kubectls_goroutines_do() {
        let mut s = script(33, false);
        let terminating = Cause::Terminating {
            seconds: 3,
            grace_period_seconds: Some(30),
        };
        let budget = Cause::Pdb {
            name: "db".into(),
            disruptions_allowed: Some(0),
            current_healthy: None,
            desired_healthy: None,
            expected_pods: None,
            message: String::new(),
        };
        let n = node(
            "n1",
            NodeStatus::TimedOut,
            vec![
                remaining("apps", "slow", terminating),
                remaining("apps", "db-0", budget),
                pod("apps", "gone", PodResult::Evicted),
            ],
        );
        let lines = s.on(&done(n));
        let err = texts(&lines, Stream::Err);
        let db = "error when evicting pods/\"db-0\" -n \"apps\": global timeout reached: 3s";
        let slow = "error when waiting for pod \"slow\" in namespace \"apps\" to terminate: context deadline exceeded";
        assert_eq!(
            err,
            [
                format!("There are pending pods in node \"n1\" when an error occurred: [{slow}, {db}]").as_str(),
                "pod/db-0",
                "pod/slow",
                format!("error: unable to drain node \"n1\" due to error: [{slow}, {db}], continuing command...").as_str(),
            ]
        );
        let end = s.end(None);
        assert_eq!(texts(&end, Stream::Err)[2..], [slow, db]);
        // 1.31 and before named the timeout for the terminating pod too.
        let mut old = script(31, false);
        let n = node(
            "n1",
            NodeStatus::TimedOut,
            vec![remaining(
                "apps",
                "slow",
                Cause::Terminating {
                    seconds: 3,
                    grace_period_seconds: None,
                },
            )],
        );
        let err = texts(&old.on(&done(n)), Stream::Err).join("\n");
        assert!(
            err.contains("to terminate: global timeout reached: 3s"),
            "{err}"
        );
    }

    #[test]
    fn gone_pods_are_told_once_evicted_or_deleted_as_asked() {
        let key = PodKey::new("apps", "web-1");
        let gone = Event::PodGone {
            node: "n1".into(),
            pod: key.clone(),
        };
        let mut s = script(33, false);
        // Gone by itself: kubectl's eviction met a 404 and said nothing.
        assert!(s.on(&gone).is_empty());
        let asked = s.on(&Event::Evicted {
            node: "n1".into(),
            pod: key.clone(),
        });
        assert_eq!(texts(&asked, Stream::Out), ["evicting pod apps/web-1"]);
        assert_eq!(texts(&s.on(&gone), Stream::Out), ["pod/web-1 evicted"]);
        assert!(s.on(&gone).is_empty(), "told once");
        let mut deleting = script(33, true);
        assert!(
            deleting
                .on(&Event::Evicted {
                    node: "n1".into(),
                    pod: key.clone(),
                })
                .is_empty()
        );
        assert_eq!(
            texts(&deleting.on(&gone), Stream::Out),
            ["pod/web-1 deleted"]
        );
    }

    #[test]
    fn a_node_named_twice_is_told_twice_and_a_dry_run_at_the_end() {
        let mut s = script(33, false);
        let n1 = node("n1", NodeStatus::Drained, vec![]);
        let mut lines = s.on(&done(n1.clone()));
        lines.extend(s.on(&done(n1.clone())));
        let outcome = DrainOutcome {
            dry_run: DryRun::None,
            elapsed_ms: 0,
            waves: Vec::new(),
            nodes: vec![n1.clone(), n1],
            conditions_not_written: Vec::new(),
            holds: Vec::new(),
            notifications: None,
        };
        lines.extend(s.end(Some(&outcome)));
        assert_eq!(texts(&lines, Stream::Out), ["node/n1 drained"; 2]);
        // A dry run tells everything from the outcome: cordons first.
        let mut dry = Script::new(Config {
            dry_run: DryRun::Client,
            ..s.config
        });
        let would = |name| {
            node(
                name,
                NodeStatus::DryRun,
                vec![pod("apps", "web-1", PodResult::WouldEvict)],
            )
        };
        let outcome = DrainOutcome {
            dry_run: DryRun::Client,
            nodes: vec![would("n1"), would("n2")],
            ..outcome
        };
        assert_eq!(
            texts(&dry.end(Some(&outcome)), Stream::Out),
            [
                "node/n1 cordoned (dry run)",
                "node/n2 cordoned (dry run)",
                "evicting pod apps/web-1 (dry run)",
                "node/n1 drained (dry run)",
                "evicting pod apps/web-1 (dry run)",
                "node/n2 drained (dry run)",
            ]
        );
    }

    #[test]
    fn several_failed_nodes_end_with_one_line_each() {
        let mut s = script(33, true);
        let mut n1 = node("n1", NodeStatus::TimedOut, vec![]);
        n1.message = Some("--timeout passed".into());
        let n2 = node(
            "n2",
            NodeStatus::Refused,
            vec![refused("default", "bare", Refusal::LocalStorage)],
        );
        s.on(&done(n1));
        s.on(&done(n2));
        s.on(&done(node("n3", NodeStatus::Drained, vec![])));
        let end = s.end(None);
        assert_eq!(
            texts(&end, Stream::Err),
            [
                "There are pending nodes to be drained:",
                " n1",
                " n2",
                "context deadline exceeded",
                "cannot delete Pods with local storage (use --delete-emptydir-data to override): default/bare",
            ]
        );
        // One node failing with a single error: kubectl's "error: ".
        let mut one = script(27, true);
        one.on(&done(node("n1", NodeStatus::TimedOut, vec![])));
        assert_eq!(
            texts(&one.end(None), Stream::Err).last(),
            Some(&"error: timed out waiting for the condition")
        );
    }
}
