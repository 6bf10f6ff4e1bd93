//! What each answer of the API to an eviction means for its pod: one
//! function per answer, as kubectl drain reads them (pkg/drain/drain.go).

use std::time::Duration;

use tokio::time::Instant;

use super::member::State;
use super::settings::{FALLBACK_RETRY, MAX_API_ATTEMPTS};
use super::{Answer, Effect, NodeMachine};
use crate::drain::budgets::{Budget, Key as BudgetKey, UNWATCHED_RETRY};
use crate::policy::classify::controller_kind;
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::{Cause, Handler, PodResult};
use crate::vocabulary::pod_key::{PodKey, uid};

impl NodeMachine {
    /// Records a budget's numbers without acting on them: for dry runs, and
    /// for a refusal by a budget whose numbers the drain knows but that has
    /// not changed since.
    pub(crate) fn note_budget(&mut self, key: BudgetKey, budget: Budget) {
        self.budgets.insert(key, budget);
    }

    /// The cause a refusing answer stands for.
    pub(crate) fn refusal_cause(&self, namespace: &str, answer: &Answer) -> Option<Cause> {
        match answer {
            Answer::Accepted | Answer::NamespaceTerminating | Answer::Gone => None,
            Answer::PdbBlocked { pdb, message, .. } => Some(budget_cause(
                pdb,
                self.budgets.get(&(namespace.to_string(), pdb.clone())),
                message.clone(),
            )),
            Answer::Responding {
                responder, message, ..
            } => Some(Cause::HandedOver {
                handler: Handler::Responder,
                operator: responder.clone(),
                subject: String::new(),
                progress: message.clone(),
            }),
            Answer::MultiplePdbs(message) => Some(Cause::MultiplePdbs {
                message: message.clone(),
            }),
            Answer::Forbidden(message) => Some(Cause::Forbidden {
                message: message.clone(),
            }),
            Answer::Retry { message, .. } | Answer::Failed(message) => Some(Cause::ApiError {
                message: message.clone(),
            }),
        }
    }

    /// Marks a pod blocked, telling the listeners when the cause is new.
    pub(super) fn block(
        &mut self,
        key: &PodKey,
        cause: Cause,
        retry_at: Option<Instant>,
        budget: Option<BudgetKey>,
    ) {
        let Some(m) = self.members.get_mut(key) else {
            return;
        };
        // A budget's numbers change as pods come and go; the cause is the
        // same budget, so it is told once.
        let new = !m
            .told
            .as_ref()
            .is_some_and(|told| same_reason(told, &cause));
        m.told = Some(cause.clone());
        let budget_name = match &cause {
            Cause::Pdb { name, .. } => Some(format!("{}/{name}", key.namespace)),
            _ => None,
        };
        m.state = State::Blocked {
            cause: cause.clone(),
            retry_at,
            budget,
        };
        if new {
            self.emit(Event::Blocked {
                node: self.node.clone(),
                pod: key.clone(),
                cause,
                budget: budget_name,
                release: None,
            });
        }
    }

    /// An answer to this pod's eviction (this uid): one function per answer.
    pub(super) fn on_answer(
        &mut self,
        key: &PodKey,
        pod_uid: &str,
        answer: Answer,
        vm: Option<Cause>,
    ) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.emit(Event::EvictionAnswered {
            node: self.node.clone(),
            code: answer.code(),
        });
        // An evacuating VM, a pod an operator rolls: progress, not a block
        // by its budget or a server error to give up on.
        let handed_over = vm.is_some();
        let cause = vm.or_else(|| self.refusal_cause(&key.namespace, &answer));
        let Some(m) = self.members.get(key) else {
            return;
        };
        if uid(&m.pod) != pod_uid || m.done() {
            return;
        }
        if let Answer::PdbBlocked {
            api_message: message,
            ..
        }
        | Answer::Retry {
            message,
            throttled: true,
            ..
        } = &answer
        {
            self.emit(Event::EvictionRefused {
                node: self.node.clone(),
                pod: key.clone(),
                message: message.clone(),
            });
        }
        match answer {
            Answer::Accepted => self.accepted(key),
            Answer::NamespaceTerminating => self.namespace_terminating(key),
            Answer::Gone => self.gone_already(key),
            // The budget's refusal is the hand-over itself (KubeVirt's PDB
            // over a VM, Strimzi's legacy `maxUnavailable: 0`): the pod is
            // worked on, and the budget held nothing back.
            Answer::PdbBlocked { retry_after, .. } if handed_over => {
                self.worked_on(key, retry_after, cause.expect("handed over"));
            }
            Answer::PdbBlocked {
                pdb, retry_after, ..
            } => self.refused_by_budget(key, pdb, retry_after, cause.expect("a refusal")),
            Answer::Responding { retry_after, .. } => {
                self.responding(key, retry_after, cause.expect("a responder"));
            }
            // kubectl drain fails such a pod at once: no retry will help.
            Answer::MultiplePdbs(message) => {
                let message = format!("cannot evict {key}: {message}");
                self.fail(key, cause.expect("a refusal"), message);
            }
            Answer::Retry { retry_after, .. } if handed_over => {
                self.worked_on(key, retry_after, cause.expect("handed over"));
            }
            Answer::Retry {
                retry_after,
                message,
                throttled,
            } => self.retry_later(key, retry_after, message, throttled),
            Answer::Forbidden(message) => self.forbidden(key, &message),
            Answer::Failed(message) => {
                let cause = Cause::ApiError {
                    message: message.clone(),
                };
                self.fail(key, cause, format!("evicting {key}: {message}"));
            }
        }
    }

    pub(super) fn member(&mut self, key: &PodKey) -> &mut super::member::Member {
        self.members.get_mut(key).expect("a member")
    }

    pub(super) fn accepted(&mut self, key: &PodKey) {
        let m = self.member(key);
        m.evicted = true;
        m.attempts = 0;
        m.state = State::Terminating;
        self.emit(Event::Evicted {
            node: self.node.clone(),
            pod: key.clone(),
        });
    }

    /// The namespace controller deletes the pod: waited for (kubectl
    /// retries the eviction until the pod is gone), not counted as evicted,
    /// and said on screen.
    pub(super) fn namespace_terminating(&mut self, key: &PodKey) {
        let m = self.member(key);
        m.attempts = 0;
        m.state = State::Terminating;
        self.terminating_namespaces.insert(key.namespace.clone());
        let cause = Cause::NamespaceTerminating {
            namespace: key.namespace.clone(),
        };
        self.emit(Event::Blocked {
            node: self.node.clone(),
            pod: key.clone(),
            cause,
            budget: None,
            release: None,
        });
    }

    /// The pod (this uid) no longer exists.
    pub(super) fn gone_already(&mut self, key: &PodKey) {
        if self.member(key).requested && !self.member(key).evicted {
            self.accepted(key);
        }
        let m = self.member(key);
        m.state = State::Done(if m.evicted {
            PodResult::Evicted
        } else {
            PodResult::GoneByItself
        });
        self.emit(Event::PodGone {
            node: self.node.clone(),
            pod: key.clone(),
        });
    }

    /// Held by its budget: watched, retried when the budget allows (or on
    /// the fallback timer), and surged once when asked to.
    pub(super) fn refused_by_budget(
        &mut self,
        key: &PodKey,
        pdb: String,
        retry_after: Option<Duration>,
        cause: Cause,
    ) {
        let now = self.last.at;
        let budget = (key.namespace.clone(), pdb);
        self.effects.push(Effect::WatchBudget(budget.clone()));
        let fallback = if self.unwatched.contains(&budget) {
            UNWATCHED_RETRY
        } else {
            FALLBACK_RETRY
        };
        let surge_all = self.settings.surge;
        let m = self.member(key);
        m.attempts = 0;
        if m.held.as_ref().is_none_or(|(b, _)| *b != budget) {
            m.held = Some((budget.clone(), now));
        }
        if (surge_all || m.surge) && !m.surge_asked {
            self.ask_surge(key, budget.clone());
        }
        let retry = now + retry_after.unwrap_or(fallback);
        self.block(key, cause, Some(retry), Some(budget));
    }

    /// A responder works on the pod: progress, not a refusal; asked about
    /// again after `retry_after`.
    pub(super) fn responding(&mut self, key: &PodKey, retry_after: Option<Duration>, cause: Cause) {
        self.member(key).requested = true;
        self.worked_on(key, retry_after, cause);
    }

    /// Something other than the drain works on moving the pod (an eviction
    /// responder, an operator that refused the eviction to move the pod
    /// itself): asked again later (the answer says how it goes), never
    /// given up on before `--timeout`.
    pub(super) fn worked_on(&mut self, key: &PodKey, retry_after: Option<Duration>, cause: Cause) {
        let now = self.last.at;
        self.member(key).attempts = 0;
        let retry = now + retry_after.unwrap_or(FALLBACK_RETRY);
        self.block(key, cause, Some(retry), None);
    }

    /// `--surge` for a pod its budget holds: one more replica of its
    /// Deployment, if the budget needs it (crate::drain::driver decides
    /// with the budget's numbers); asked once until answered.
    pub(super) fn ask_surge(&mut self, key: &PodKey, budget: BudgetKey) {
        let m = self.member(key);
        m.surge_asked = true;
        let owner =
            controller_kind(&m.pod).map(|(kind, name)| (kind.to_string(), name.to_string()));
        self.effects.push(Effect::Surge {
            key: key.clone(),
            owner,
            budget,
        });
    }

    /// A server error or throttling: backed off and retried; a server
    /// error given up after `MAX_API_ATTEMPTS`, throttling ("later", not
    /// "no") only by `--timeout`.
    pub(super) fn retry_later(
        &mut self,
        key: &PodKey,
        retry_after: Option<Duration>,
        message: String,
        throttled: bool,
    ) {
        let now = self.last.at;
        let m = self.member(key);
        m.attempts += 1;
        let attempts = m.attempts;
        let cause = Cause::ApiError {
            message: message.clone(),
        };
        if attempts > MAX_API_ATTEMPTS && !throttled {
            let message = format!("evicting {key} failed {MAX_API_ATTEMPTS} times: {message}");
            self.fail(key, cause, message);
            return;
        }
        let backoff =
            Duration::from_millis(200 * (1 << attempts.min(6))).min(Duration::from_secs(10));
        m.state = State::Blocked {
            cause,
            retry_at: Some(now + retry_after.unwrap_or(backoff)),
            budget: None,
        };
        self.emit(Event::ApiTrouble {
            node: self.node.clone(),
            message,
        });
    }

    /// A refusal no retry changes fails that pod; the others go on, and
    /// the node ends failed once nothing else can move.
    pub(super) fn forbidden(&mut self, key: &PodKey, message: &str) {
        let cause = Cause::Forbidden {
            message: message.to_string(),
        };
        let verb = if self.settings.delete {
            "delete pods"
        } else {
            "create pods/eviction"
        };
        let message = format!(
            "not allowed to {verb} in namespace {}: {message}",
            key.namespace
        );
        self.fail(key, cause, message);
    }

    /// A pod no retry will move: blocked for good, its reason kept for the
    /// node's message (each distinct reason once).
    pub(super) fn fail(&mut self, key: &PodKey, cause: Cause, message: String) {
        self.block(key, cause, None, None);
        if !self.failures.contains(&message) {
            self.failures.push(message);
        }
    }
}

/// The cause a budget's refusal stands for, with the budget's numbers when known.
pub(super) fn budget_cause(name: &str, budget: Option<&Budget>, message: String) -> Cause {
    Cause::Pdb {
        name: name.to_string(),
        disruptions_allowed: budget.map(|b| b.disruptions_allowed),
        current_healthy: budget.map(|b| b.current_healthy),
        desired_healthy: budget.map(|b| b.desired_healthy),
        expected_pods: budget.map(|b| b.expected_pods),
        message,
    }
}

/// Whether two causes are the same reason, told once: a budget's numbers
/// change as pods come and go, its name does not. A responder's words are
/// its progress (the controller's "not yet taken", then the responder's
/// own): each new one is told, so the screen says it while the pod waits.
fn same_reason(a: &Cause, b: &Cause) -> bool {
    match (a, b) {
        (Cause::Pdb { name: x, .. }, Cause::Pdb { name: y, .. }) => x == y,
        _ => a == b,
    }
}
