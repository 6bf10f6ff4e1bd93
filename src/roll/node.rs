//! One node's roll, phase by phase, under its lock: cordon and drain (the
//! drain engine, with every flag and plan), the action, Ready again,
//! uncordon (the record restored exactly), settle (budgets healthy, soak),
//! each phase recorded on the lock before it starts, so that a rerun takes
//! the node up where this run left it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::api::ListParams;
use tokio::time::Instant;

use super::Ctx;
use super::action;
use super::hooks;
use super::lease::{self, Lock};
use super::outcome::{NodeRoll, PhaseTime, RollStatus};
use super::phase::{self, ActionRun, Earlier, Phase, Record};
use super::stop::{Blocked, Stop};
use super::wait::{self, Check, Waited, Wake};
use crate::drain::NodeSelection;
use crate::drain::budgets::{self, every::Listed};
use crate::drain::{self, cordon};
use crate::policy::node_health::{is_ready as ready, ready_condition};
use crate::policy::plan::model::HookPoint;
use crate::publish::conditions::Maintenance;
use crate::vocabulary::api_error::api_error;
use crate::vocabulary::events::{Event, emit};
use crate::vocabulary::outcome::NodeStatus;
use crate::vocabulary::warning::Warning;

/// How often a running `--exec` says how long it has run.
const ACTION_TOLD_EVERY: Duration = Duration::from_secs(30);

/// How often budgets are listed again where they cannot be watched.
const BUDGETS_LISTED_EVERY: Duration = Duration::from_secs(2);

struct Run<'a> {
    ctx: &'a Ctx,
    node: String,
    lock: &'a Lock,
    out: NodeRoll,
    /// When the node was taken out of service (its drain started).
    out_since: Option<Instant>,
    /// The budgets over the pods its drain evicted (`namespace/name`),
    /// found after the drain or recorded by the run that drained it.
    budgets: Vec<String>,
    /// The action an earlier run started, when resuming in the action.
    earlier: Option<ActionRun>,
}

/// Rolls one node from `start`; releases its lock with where it ended.
/// `earlier`: what it carries over from its lock's record
/// (`phase::carried_over`: the budgets of an earlier run's drain, and its
/// action when resuming in the action).
pub(crate) async fn roll(
    ctx: &Ctx,
    node: String,
    lock: Lock,
    start: Phase,
    earlier: Option<Record>,
) -> NodeRoll {
    let mut run = Run {
        ctx,
        out: NodeRoll::new(&node, RollStatus::Done, None),
        node,
        lock: &lock,
        out_since: None,
        budgets: earlier
            .as_ref()
            .map(|r| r.budgets.clone())
            .unwrap_or_default(),
        earlier: earlier
            .and_then(|r| r.action)
            .filter(|_| start == Phase::Action),
    };
    if start != Phase::Drain {
        run.out.resumed_from = Some(start);
        // Out of service since before this run.
        run.out_since = Some(Instant::now());
    }
    let (status, message, recorded) = match run.phases(start).await {
        Ok(()) => (RollStatus::Done, None, Phase::Done),
        Err(Stop::Blocked(b)) => {
            // A node that did not come back says why in the report too.
            if let Blocked::Down { down, .. } = &b {
                run.out.not_ready = Some((**down).clone());
            }
            (RollStatus::Blocked, Some(b.to_string()), Phase::Blocked)
        }
        Err(Stop::Interrupted) => (
            RollStatus::Interrupted,
            Some("interrupted: rerun the same command to take it up here".into()),
            run.out.phases.last().map_or(start, |p| p.phase),
        ),
        Err(Stop::Failed(m)) => (
            RollStatus::Failed,
            Some(m),
            run.out.phases.last().map_or(start, |p| p.phase),
        ),
    };
    if let Some(since) = run.out_since {
        run.out.out_of_service_ms += since.elapsed().as_millis() as u64;
    }
    run.out.status = status;
    run.out.message = message;
    let mut out = run.out;
    if let Err(e) = lock.release(&ctx.roll, recorded).await {
        let warning = Warning::LockNotReleased {
            node: out.node.clone(),
            error: e.to_string(),
        };
        emit(&ctx.events, Event::Warning(warning));
    }
    if out.status == RollStatus::Done {
        out.message = None;
    }
    out
}

impl Run<'_> {
    async fn phases(&mut self, start: Phase) -> Result<(), Stop> {
        let steps = [
            Phase::Drain,
            Phase::Action,
            Phase::WaitReady,
            Phase::Uncordon,
            Phase::Settle,
        ];
        for phase in steps.into_iter().filter(|p| *p >= start) {
            if *self.ctx.interrupt.borrow() {
                return Err(Stop::Interrupted);
            }
            if let Some(by) = self.lock.lost() {
                return Err(Stop::Failed(format!(
                    "its lock was taken by {by}; this run leaves the node to them"
                )));
            }
            let began = Instant::now();
            let started_ms = self.ctx.tell.started.elapsed().as_millis() as u64;
            let boot_id = if phase == Phase::Action {
                Some(boot_id(self.seen().await?.as_ref()))
            } else {
                None
            };
            self.lock
                .record(&self.ctx.roll, phase, boot_id.as_deref())
                .await?;
            emit(
                &self.ctx.events,
                Event::RunPhase {
                    node: self.node.clone(),
                    phase: phase.as_str(),
                },
            );
            // Other operators' hooks before the phase (roll::hooks).
            let point = match phase {
                Phase::Drain => Some(HookPoint::PreDrain),
                Phase::WaitReady => Some(HookPoint::PostAction),
                Phase::Uncordon => Some(HookPoint::PreUncordon),
                _ => None,
            };
            if let Some(point) = point {
                hooks::handshake(self.ctx, &self.node, point).await?;
            }
            let result = match phase {
                Phase::Drain => self.drain().await,
                Phase::Action => self.action(boot_id.unwrap_or_default()).await,
                Phase::WaitReady => self.wait_ready().await,
                Phase::Uncordon => self.uncordon().await,
                _ => self.settle().await,
            };
            self.out.phases.push(PhaseTime {
                phase,
                started_ms,
                took_ms: began.elapsed().as_millis() as u64,
            });
            result?;
        }
        Ok(())
    }

    fn say(&self, phase: &str, detail: String) {
        self.ctx.say(&self.node, phase, detail);
    }

    /// The node as the roll's watch of every node last saw it, read from
    /// the API only when the watch has not seen it: what the action reads
    /// (the boot ID before it, the addresses `--exec` is given) changes only
    /// with a reboot, which the roll waits for on the same watch.
    async fn seen(&self) -> Result<Arc<Node>, Stop> {
        match self.ctx.nodes.get(&self.node) {
            Some(node) => Ok(node),
            None => self.get().await.map(Arc::new),
        }
    }

    /// The node as the API has it now (the uncordon's patch is made from it).
    async fn get(&self) -> Result<Node, Stop> {
        let api: Api<Node> = Api::all(self.ctx.clients.main.clone());
        Ok(api
            .get(&self.node)
            .await
            .map_err(|e| api_error("get", "nodes", None, e))?)
    }

    async fn drain(&mut self) -> Result<(), Stop> {
        self.say("drain", String::new());
        self.out_since = Some(Instant::now());
        self.ctx
            .publisher
            .maintenance(&self.node, Maintenance::InProgress, Some(&self.ctx.events))
            .await;
        let mut options = self.ctx.drain.clone();
        options.nodes = NodeSelection::Names(vec![self.node.clone()]);
        let prepared = drain::prepare_sharing(
            self.ctx.clients.clone(),
            self.ctx.plan.clone(),
            options,
            self.ctx.events.clone(),
            self.ctx.interrupt.clone(),
            drain::Shared {
                budgets: self.ctx.budgets.clone(),
                attachments: self.ctx.attachments.clone(),
                publisher: self.ctx.publisher.clone(),
            },
        )
        .await?;
        for w in prepared.warnings() {
            emit(
                &self.ctx.events,
                Event::Warning(w.clone().on_node(&self.node)),
            );
        }
        let evicted: Vec<(String, BTreeMap<String, String>)> = prepared
            .pods()
            .into_iter()
            .map(|p| {
                (
                    p.metadata.namespace.unwrap_or_default(),
                    p.metadata.labels.unwrap_or_default(),
                )
            })
            .collect();
        if self.ctx.action.wait_for_budgets {
            // Recorded before the first eviction, with those of an earlier
            // run's drain killed halfway (its evicted pods are gone from
            // this list), so that a rerun waits on every one of them.
            let mut budgets: BTreeSet<String> =
                std::mem::take(&mut self.budgets).into_iter().collect();
            budgets.extend(self.touched_budgets(&evicted).await?);
            self.budgets = budgets.into_iter().collect();
            self.lock.note_budgets(&self.budgets).await?;
        }
        let outcome = prepared.drain_alone().await?;
        let drained = outcome.nodes.into_iter().next();
        let status = drained.as_ref().map(|n| n.status);
        let message = drained.as_ref().and_then(|n| n.message.clone());
        self.out.drain = drained;
        match status {
            Some(NodeStatus::Drained) => Ok(()),
            Some(NodeStatus::Interrupted) => Err(Stop::Interrupted),
            Some(status) => Err(Stop::Blocked(Blocked::NotDrained { status, message })),
            None => Err(Stop::Failed("the drain reported no node".into())),
        }
    }

    /// `--exec`, then with `--wait-for-reboot` the reboot; kured's lock is
    /// held from here until the node is Ready. An action an earlier run
    /// started is not started again while it may still run, nor once it
    /// ended well.
    async fn action(&mut self, boot_before: String) -> Result<(), Stop> {
        self.ctx.hold_kured(&self.node).await?;
        if let Some(exec) = self.ctx.action.exec.clone()
            && !self.earlier_action_stands(&boot_before).await?
        {
            self.say("action", format!("running {}", exec.shown));
            self.exec(&exec.command).await?;
        }
        if self.ctx.action.wait_for_reboot {
            self.say(
                "action",
                format!("waiting for the reboot (boot ID {boot_before})"),
            );
            let nodes = &self.ctx.nodes;
            let rebooted = wait::until(
                Wake::Nodes(nodes),
                Instant::now() + self.ctx.action.ready_timeout,
                self.ctx.interrupt.clone(),
                async || {
                    Ok::<_, Stop>(match nodes.get(&self.node) {
                        Some(n) if ready(&n) && boot_id(&n) == boot_before => {
                            Check::Waiting("still Ready, same boot ID".into())
                        }
                        _ => Check::Done(()),
                    })
                },
                |why| self.say("action", format!("waiting for the reboot: {why}")),
            )
            .await;
            match rebooted {
                Ok(()) => {}
                Err(Waited::Interrupted) => return Err(Stop::Interrupted),
                Err(Waited::Failed(stop)) => return Err(stop),
                Err(Waited::TimedOut(_)) => {
                    let after = self.ctx.action.ready_timeout;
                    return Err(Stop::Blocked(Blocked::NoReboot { after }));
                }
            }
        }
        Ok(())
    }

    /// Does the action an earlier run started (its lock's record) stand,
    /// so that it is not run again? It does once it ended well, or once the
    /// node went down or rebooted while it may still run (its reboot); said
    /// on screen. While it may still run, this waits: until one of those,
    /// until it ended otherwise, or its bound (then it is run again).
    async fn earlier_action_stands(&mut self, boot_before: &str) -> Result<bool, Stop> {
        const ENDED_WELL: &str = "an earlier run's action ended well: not run again";
        const REBOOTING: &str = "the node went down during an earlier run's action: its reboot";
        let Some(run) = self.earlier.take() else {
            return Ok(false);
        };
        let here = lease::hostname();
        let bound_ms = (self.ctx.action.timeout + action::GRACE).as_millis() as i64;
        let decide = || {
            let now_ms = kube_conventions::time::now().as_millisecond();
            phase::earlier(Some(&run), &here, now_ms, bound_ms, action::alive)
        };
        let until_ms = match decide() {
            Earlier::Run => return Ok(false),
            Earlier::Ended => {
                self.say("action", ENDED_WELL.into());
                return Ok(true);
            }
            Earlier::MayRun { until_ms } => until_ms,
        };
        let until = k8s_openapi::jiff::Timestamp::from_millisecond(until_ms).map_or_else(
            |_| until_ms.to_string(),
            kube_conventions::time::format_time,
        );
        let left_ms = until_ms - kube_conventions::time::now().as_millisecond();
        let by = format!("{}, process group {}", run.host, run.group);
        let nodes = &self.ctx.nodes;
        let node = self.node.clone();
        // Done(Some(why)): it stands; Done(None): it can no longer be running.
        let waited = wait::until(
            Wake::Every(Duration::from_secs(1)),
            Instant::now() + Duration::from_millis(left_ms.max(0) as u64),
            self.ctx.interrupt.clone(),
            async || {
                let went_down = nodes
                    .get(&node)
                    .is_none_or(|n| !ready(&n) || boot_id(&n) != boot_before);
                Ok::<_, Stop>(match decide() {
                    _ if went_down => Check::Done(Some(REBOOTING)),
                    Earlier::MayRun { .. } => Check::Waiting(format!(
                        "an earlier run's action ({by}) may still run: waiting until it ends, the node reboots, or {until}"
                    )),
                    Earlier::Ended => Check::Done(Some(ENDED_WELL)),
                    Earlier::Run => Check::Done(None),
                })
            },
            |why| self.say("action", why.to_string()),
        )
        .await;
        match waited {
            Ok(Some(why)) => {
                self.say("action", why.into());
                Ok(true)
            }
            Ok(None) | Err(Waited::TimedOut(_)) => Ok(false),
            Err(Waited::Interrupted) => Err(Stop::Interrupted),
            Err(Waited::Failed(stop)) => Err(stop),
        }
    }

    async fn exec(&self, command: &str) -> Result<(), Stop> {
        let node = self.seen().await?;
        let mut env = addresses(&node);
        env.push(("NODE".into(), self.node.clone()));
        let running = action::start(command, &env).map_err(|e| {
            Stop::Blocked(Blocked::ExecNotStarted {
                error: e.to_string(),
            })
        })?;
        // Recorded before it is waited for: a rerun of a roll killed now
        // does not start a second one while this one runs.
        self.lock.note_action_started(running.group).await?;
        let timeout = self.ctx.action.timeout;
        let wait = running.wait(timeout, self.ctx.interrupt.clone(), |l| {
            self.say("action", format!("| {l}"));
        });
        tokio::pin!(wait);
        // A long action is never silent: how long it has run, against its
        // bound, on the bar and every ACTION_TOLD_EVERY in lines.
        let began = Instant::now();
        let mut every = tokio::time::interval_at(began + ACTION_TOLD_EVERY, ACTION_TOLD_EVERY);
        let ended = loop {
            tokio::select! {
                ended = &mut wait => break ended,
                _ = every.tick() => self.say(
                    "action",
                    format!(
                        "--exec running for {} of --action-timeout {}",
                        crate::duration::human(began.elapsed()),
                        crate::duration::human(timeout)
                    ),
                ),
            }
        };
        let ok = matches!(&ended, action::Ended::Exited { status, .. } if status.success());
        if !matches!(ended, action::Ended::Interrupted) {
            self.lock.note_action_ended(ok).await?;
        }
        match ended {
            action::Ended::Exited { status, stderr } => {
                for l in &stderr {
                    self.say("action", format!("| {l}"));
                }
                if status.success() {
                    Ok(())
                } else {
                    Err(Stop::Blocked(Blocked::ExecFailed {
                        status: status.to_string(),
                        last_line: stderr.last().cloned(),
                    }))
                }
            }
            action::Ended::TimedOut => {
                Err(Stop::Blocked(Blocked::ActionTimedOut { after: timeout }))
            }
            action::Ended::Interrupted => Err(Stop::Interrupted),
            action::Ended::Lost(e) => Err(Stop::Blocked(Blocked::ExecLost {
                error: e.to_string(),
            })),
        }
    }

    async fn wait_ready(&mut self) -> Result<(), Stop> {
        let nodes = &self.ctx.nodes;
        let result = wait::until(
            Wake::Nodes(nodes),
            Instant::now() + self.ctx.action.ready_timeout,
            self.ctx.interrupt.clone(),
            async || {
                Ok::<_, Stop>(match nodes.get(&self.node) {
                    Some(n) if ready(&n) => Check::Done(()),
                    Some(n) => Check::Waiting(ready_reason(&n)),
                    None => Check::Waiting("the node is not in the API".into()),
                })
            },
            |why| self.say("waiting for Ready", why.to_string()),
        )
        .await;
        self.ctx.release_kured().await;
        match result {
            Ok(()) => Ok(()),
            Err(Waited::Interrupted) => Err(Stop::Interrupted),
            Err(Waited::Failed(stop)) => Err(stop),
            Err(Waited::TimedOut(reason)) => {
                let after = self.ctx.action.ready_timeout;
                Err(Stop::Blocked(
                    match crate::drain::heartbeat::read(&self.ctx.clients.main, &self.node).await {
                        Some(down) => Blocked::Down {
                            after,
                            down: Box::new(down),
                        },
                        None => Blocked::NotReady { after, reason },
                    },
                ))
            }
        }
    }

    async fn uncordon(&mut self) -> Result<(), Stop> {
        let node = self.get().await?;
        let undo = cordon::uncordon(&self.ctx.clients.main, node, &self.ctx.publisher).await?;
        if let Some(since) = self.out_since.take() {
            self.out.out_of_service_ms += since.elapsed().as_millis() as u64;
        }
        self.ctx
            .publisher
            .maintenance(&self.node, Maintenance::Over, Some(&self.ctx.events))
            .await;
        hooks::reset_draino(self.ctx, &self.node).await?;
        self.say("returned to service", undo.words);
        Ok(())
    }

    /// `--wait-for-budgets`, then `--soak`.
    async fn settle(&mut self) -> Result<(), Stop> {
        if self.ctx.action.wait_for_budgets {
            self.budgets_healthy().await?;
        }
        if let Some(soak) = self.ctx.action.soak {
            self.say("soak", crate::duration::human(soak));
            let mut interrupt = self.ctx.interrupt.clone();
            tokio::select! {
                () = tokio::time::sleep(soak) => {}
                _ = interrupt.changed() => return Err(Stop::Interrupted),
            }
        }
        Ok(())
    }

    /// The budgets that select a pod the drain evicted, as `namespace/name`.
    async fn touched_budgets(
        &self,
        evicted: &[(String, BTreeMap<String, String>)],
    ) -> Result<Vec<String>, Stop> {
        let namespaces: BTreeSet<&String> = evicted.iter().map(|(ns, _)| ns).collect();
        let mut out = Vec::new();
        for ns in namespaces {
            for ((_, name), listed) in self.budgets_in(ns).await? {
                let touches = listed.selector.is_some_and(|sel| {
                    evicted
                        .iter()
                        .any(|(pns, labels)| pns == ns && sel.matches(labels))
                });
                if touches {
                    out.push(format!("{ns}/{name}"));
                }
            }
        }
        Ok(out)
    }

    /// The namespace's budgets: from the watch of every budget the drains
    /// share, or, where budgets may not be listed cluster-wide, listed.
    async fn budgets_in(&self, ns: &str) -> Result<Vec<(budgets::Key, Listed)>, Stop> {
        if let Some(every) = self.ctx.budgets.every_budget_in(ns).await {
            return Ok(every);
        }
        let api: Api<PodDisruptionBudget> = Api::namespaced(self.ctx.clients.main.clone(), ns);
        Ok(api
            .list(&ListParams::default())
            .await
            .map_err(|e| api_error("list", "poddisruptionbudgets", Some(ns), e))?
            .items
            .iter()
            .map(Listed::of)
            .collect())
    }

    /// Waits until every budget over a pod the drain evicted has all its
    /// pods healthy again (at most `--ready-timeout`; past it, says so and
    /// goes on: the next node's drain waits on the budget anyway).
    async fn budgets_healthy(&self) -> Result<(), Stop> {
        let mut by_namespace: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (ns, name) in self.budgets.iter().filter_map(|k| k.split_once('/')) {
            by_namespace.entry(ns).or_default().insert(name);
        }
        // Woken by the shared watch of every budget where budgets may be
        // listed cluster-wide; otherwise each namespace's are listed.
        let wake = if self.ctx.budgets.sees_every_budget().await {
            Wake::Budgets(self.ctx.budgets.subscribe())
        } else {
            Wake::Every(BUDGETS_LISTED_EVERY)
        };
        let mut unhealthy = Vec::new();
        let result = wait::until(
            wake,
            Instant::now() + self.ctx.action.ready_timeout,
            self.ctx.interrupt.clone(),
            async || {
                unhealthy = self.unhealthy(&by_namespace).await?;
                Ok(if unhealthy.is_empty() {
                    Check::Done(())
                } else {
                    Check::Waiting(unhealthy.join(", "))
                })
            },
            |why| self.say("waiting for budgets", why.to_string()),
        )
        .await;
        match result {
            Ok(()) => Ok(()),
            Err(Waited::Interrupted) => Err(Stop::Interrupted),
            Err(Waited::Failed(stop)) => Err(stop),
            Err(Waited::TimedOut(_)) => {
                let warning = Warning::BudgetsStillUnhealthy {
                    node: self.node.clone(),
                    after: self.ctx.action.ready_timeout,
                    budgets: unhealthy,
                };
                emit(&self.ctx.events, Event::Warning(warning));
                Ok(())
            }
        }
    }

    /// Of these budgets (names by namespace), those with fewer healthy
    /// pods than they expect, in words.
    async fn unhealthy(
        &self,
        by_namespace: &BTreeMap<&str, BTreeSet<&str>>,
    ) -> Result<Vec<String>, Stop> {
        let mut unhealthy = Vec::new();
        for (ns, names) in by_namespace {
            for ((_, name), Listed { budget: b, .. }) in self.budgets_in(ns).await? {
                if names.contains(name.as_str()) && b.current_healthy < b.expected_pods {
                    unhealthy.push(format!(
                        "PDB {ns}/{name}: {} of {} healthy",
                        b.current_healthy, b.expected_pods
                    ));
                }
            }
        }
        Ok(unhealthy)
    }
}

pub(crate) fn boot_id(node: &Node) -> String {
    node.status
        .as_ref()
        .and_then(|s| s.node_info.as_ref())
        .map(|i| i.boot_id.clone())
        .unwrap_or_default()
}

/// What a rerun needs of a node to take its roll up (`phase::resume`).
pub(crate) fn now_of(node: &Node) -> phase::NodeNow {
    phase::NodeNow {
        boot_id: boot_id(node),
        down_since_ms: ready_condition(node)
            .filter(|c| c.status != "True")
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| t.0.as_millisecond()),
    }
}

fn ready_reason(node: &Node) -> String {
    match ready_condition(node) {
        Some(c) => format!(
            "Ready={}{}",
            c.status,
            c.message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ),
        None => "no Ready condition".into(),
    }
}

/// What `--exec` finds in its environment: `NODE_ADDRESSES` (every address,
/// space-separated), and `NODE_INTERNAL_IP`, `NODE_EXTERNAL_IP`,
/// `NODE_HOSTNAME` when the node reports them.
fn addresses(node: &Node) -> Vec<(String, String)> {
    let list = node
        .status
        .as_ref()
        .and_then(|s| s.addresses.clone())
        .unwrap_or_default();
    let mut out = vec![(
        "NODE_ADDRESSES".to_string(),
        list.iter()
            .map(|a| a.address.clone())
            .collect::<Vec<_>>()
            .join(" "),
    )];
    for (kind, var) in [
        ("InternalIP", "NODE_INTERNAL_IP"),
        ("ExternalIP", "NODE_EXTERNAL_IP"),
        ("Hostname", "NODE_HOSTNAME"),
    ] {
        if let Some(a) = list.iter().find(|a| a.type_ == kind) {
            out.push((var.to_string(), a.address.clone()));
        }
    }
    out
}
