//! The drain as a pipeline of values: the selected nodes (`node_plan`),
//! one snapshot of each node's pods, every pod classified once
//! (`prepare`), then the run, here: cordon every node, drain up to
//! `--max-parallel` at once through the pool runner (`draining`; zone by
//! zone with `--by-zone`, none started once `--max-blocked-nodes` is
//! passed), one outcome at the end; or, for dry runs and refusals, the
//! preview.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use tokio::time::Instant;

use super::budgets::{self};
use super::context::DrainContext;
use super::cordon::cordon;
use super::draining::{Draining, Pace, drain_one, outcome};
use super::node_plan::NodePlan;
use super::out_of_service::NodeProof;
use super::pool_budgets::PoolBudgets;
use super::{DrainError, preview};
use crate::policy::classify::{HandledBy, handled_by};
use crate::pool::Runner;
use crate::pool::room::Room;
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::{Cause, DrainOutcome, DryRun};
use crate::vocabulary::pod_key::PodKey;
use crate::vocabulary::warning::Warning;

/// Cordons sent at once when a drain starts.
const CORDONS_AT_ONCE: usize = 32;

/// Nodes found, pods listed and classified: everything decided, nothing
/// changed yet.
pub(crate) struct Prepared {
    pub(super) engine: Arc<DrainContext>,
    pub(super) nodes: Vec<NodePlan>,
    /// The plan's wave names in order, for the report.
    pub(super) wave_names: Vec<String>,
    /// What the operator should know before anything changes.
    pub(super) warnings: Vec<Warning>,
}

impl Prepared {
    /// Every pod listed on the selected nodes, as objects again.
    pub(crate) fn pods(&self) -> Vec<Pod> {
        self.nodes.iter().flat_map(|n| n.pods.pods()).collect()
    }

    /// What the operator should know before anything changes (shown in the
    /// confirmation, or printed when there is none).
    pub(crate) fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// One more thing to know before anything changes.
    pub(crate) fn warn(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    /// The selected nodes' names, in the order given.
    pub(crate) fn names(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.name.clone()).collect()
    }

    /// Pods whose PodDisruptionBudget allows no disruption now, with the
    /// budget's name and numbers (for the confirmation).
    pub(crate) async fn tight_budgets(&self) -> BTreeMap<PodKey, (String, budgets::Budget)> {
        let pods = self.pods();
        budgets::lookup::TightBudgets::list(&self.engine.clients.main)
            .await
            .of(&pods)
    }

    /// Pods whose refused eviction an operator takes over (KubeVirt,
    /// Strimzi's Drain Cleaner: crate::policy::classify::handled_by).
    pub(crate) fn handed_over(&self) -> BTreeMap<PodKey, HandledBy> {
        self.pods()
            .iter()
            .filter_map(|p| Some((PodKey::of(p), handled_by(p)?)))
            .collect()
    }

    /// Pods on nodes whose kubelet runs that are going already and past
    /// their grace period (finalizers, a kubelet that has not confirmed):
    /// the drain will wait for each until `--timeout`. A down node's are
    /// the dead-node path's (`--lost-pod-timeout`).
    pub(crate) fn held_already(&self) -> BTreeMap<PodKey, Cause> {
        let now = kube_conventions::time::now();
        self.nodes
            .iter()
            .filter(|n| n.health().is_none())
            .flat_map(|n| n.pods.pods())
            .filter_map(|p| Some((PodKey::of(&p), super::conclude::past_grace(&p, now)?)))
            .collect()
    }

    /// Will carrying it out change anything: not a dry run, and not a
    /// drain that `--all-or-nothing` stops because a pod is refused?
    pub(crate) fn changes_anything(&self) -> bool {
        let options = &self.engine.options;
        options.dry_run == DryRun::None && !(options.all_or_nothing && self.refused())
    }

    /// Nodes whose name must be typed, as proof that they are powered off,
    /// before `--node-shut-down` takes them out of service.
    pub(crate) fn names_to_type(&self) -> Vec<&str> {
        self.nodes
            .iter()
            .filter(|n| n.proof == Some(NodeProof::Typed))
            .map(|n| n.name.as_str())
            .collect()
    }

    /// Does `--deadline` delete what is still held at some point?
    pub(crate) fn has_deadline(&self) -> bool {
        self.engine.options.deadline.is_some()
    }

    /// Does kubectl's filter refuse a pod on some selected node?
    pub(crate) fn refused(&self) -> bool {
        self.nodes.iter().any(NodePlan::refused)
    }

    /// What the drain would do, from what was listed: no request is made.
    pub(crate) fn preview(&self) -> DrainOutcome {
        let settings = self.engine.settings();
        let nodes = self
            .nodes
            .iter()
            .map(|n| {
                preview::client(
                    n.machine(settings.clone(), n.unschedulable()),
                    &BTreeMap::new(),
                    &BTreeMap::new(),
                )
            })
            .collect();
        outcome(
            self.wave_names.clone(),
            DryRun::Client,
            Instant::now(),
            nodes,
        )
    }

    /// Cordons every selected node first, as kubectl does; a node proven
    /// powered off is taken out of service with it, recorded alike (its
    /// `--fence-command` run before any change: every node powered off, or
    /// none taken out of service). Whether each was cordoned before.
    async fn cordon_all(&self) -> Result<Vec<bool>, DrainError> {
        self.fence_all().await?;
        // As kubectl drain -l: every node cordoned before the first eviction,
        // told in the given order; CORDONS_AT_ONCE at a time, so that a
        // pool of hundreds is cordoned in a moment, and none is started
        // after one fails.
        let mut was_cordoned = Vec::new();
        for batch in self.nodes.chunks(CORDONS_AT_ONCE) {
            let cordons = batch.iter().map(|n| n.cordon(&self.engine));
            let mut failed = None;
            for result in futures::future::join_all(cordons).await {
                match result {
                    Ok(was) => was_cordoned.push(was),
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(was_cordoned)
    }

    /// Runs every `--fence-command` before any change: every node powered
    /// off, or none taken out of service.
    async fn fence_all(&self) -> Result<(), DrainError> {
        for n in &self.nodes {
            if let Some(NodeProof::Fence(cmd)) = &n.proof {
                super::out_of_service::fence(cmd, &n.node)
                    .await
                    .map_err(DrainError::NotShutDown)?;
            }
        }
        Ok(())
    }

    /// Dry runs and `--all-or-nothing` refusals: what would happen, each
    /// node previewed (a server dry run asks the server).
    async fn previewed(&self, started: Instant) -> Option<Result<DrainOutcome, DrainError>> {
        let engine = &self.engine;
        let dry_run = engine.options.dry_run;
        // With --all-or-nothing a refused pod anywhere changes nothing at all.
        let all_or_nothing = engine.options.all_or_nothing && self.refused();
        if !all_or_nothing && dry_run == DryRun::None {
            return None;
        }
        let (client, spec) = (&engine.clients.main, engine.options.cordon_spec());
        let settings = engine.settings();
        // `plan` reads the budgets' status: a pod one of them holds now is
        // shown blocked, in the drain's words (no eviction is asked).
        let tight = if engine.options.plan_reads_budgets {
            let pods = self.pods();
            budgets::lookup::TightBudgets::list(client).await.of(&pods)
        } else {
            BTreeMap::new()
        };
        let held = self.held_already();
        let mut out = Vec::new();
        for n in &self.nodes {
            let machine = n.machine(settings.clone(), n.unschedulable());
            out.push(match dry_run {
                DryRun::None => preview::refused(machine),
                DryRun::Client => preview::client(machine, &tight, &held),
                DryRun::Server => {
                    if let Err(e) = cordon(client, &spec, &n.node, true).await {
                        return Some(Err(e));
                    }
                    preview::server(&engine.evictor, &engine.budgets, machine, &held).await
                }
            });
        }
        Some(Ok(outcome(self.wave_names.clone(), dry_run, started, out)))
    }

    /// Drains the one node prepared, on its own (a roll's node): cordoned,
    /// then drained; dry runs and refusals reported.
    pub(crate) async fn drain_alone(self) -> Result<DrainOutcome, DrainError> {
        let started = Instant::now();
        if let Some(previewed) = self.previewed(started).await {
            return previewed;
        }
        let was_cordoned = self.cordon_all().await?;
        let engine = self.engine.clone();
        let settings = engine.settings();
        let mut nodes = Vec::new();
        for (n, was) in self.nodes.into_iter().zip(was_cordoned) {
            let joined = n.join_budgets(&engine);
            nodes.push(n.drain(&engine, settings.clone(), was, joined).await);
        }
        engine.end_requests().await;
        Ok(outcome(self.wave_names, DryRun::None, started, nodes))
    }

    /// Carries the drain out through the pool runner (or, for dry runs and
    /// refusals, reports). As kubectl drain: every node is cordoned first
    /// (unless `pace` cordons each at its turn), each node kubectl's filters
    /// refuse stays cordoned and is reported, the others are drained.
    pub(crate) async fn execute(self, pace: Pace<'_>) -> Result<DrainOutcome, DrainError> {
        let started = Instant::now();
        if let Some(previewed) = self.previewed(started).await {
            return previewed;
        }
        let was_cordoned: Vec<Option<bool>> = if pace.cordon_at_turn {
            self.fence_all().await?;
            vec![None; self.nodes.len()]
        } else {
            self.cordon_all().await?.into_iter().map(Some).collect()
        };
        let engine = self.engine.clone();
        let settings = engine.settings();
        let Prepared {
            nodes, wave_names, ..
        } = self;
        for n in &nodes {
            engine.events.emit(Event::Planned {
                node: n.name.clone(),
                pods: n.to_move(),
            });
        }
        let groups =
            crate::policy::pool::groups(nodes.iter().map(|n| &n.node), engine.options.by_zone);
        let room = Room {
            max_parallel: engine.options.max_parallel.max(1),
            max_unavailable: engine.options.max_unavailable,
            max_blocked: engine.options.max_blocked_nodes,
            keep_quorum: false,
            keep_a_schedulable_node: false,
            done_stays_out: true,
        };
        // Each node's pods to evict, per budget (known with --max-parallel > 1).
        let budget_of = engine.budget_of.clone();
        let mut draining = Draining {
            pool: PoolBudgets::new(nodes.iter().map(|n| {
                n.pods
                    .facts()
                    .iter()
                    .filter(|f| f.disposition.evicts())
                    .filter_map(|f| budget_of.get(&f.key))
            })),
            chains: room.max_parallel > 1,
            names: nodes.iter().map(|n| n.name.clone()).collect(),
            nodes: nodes.into_iter().zip(was_cordoned).map(Some).collect(),
            refused_at_once: !pace.cordon_at_turn,
            engine: &engine,
            settings: &settings,
        };
        let runner = Runner {
            room,
            nodes: pace.nodes,
            gate: pace.gate,
            abort: pace.abort,
            tell: pace.tell,
        };
        let interrupt = engine.interrupt.clone();
        let ran = runner
            .run(&mut draining, groups, &interrupt, |_, (n, was, budgets)| {
                drain_one(&engine, settings.clone(), n, was, budgets)
            })
            .await?;
        let mut results = ran;
        results.sort_by_key(|(i, _)| *i);
        let nodes = results.into_iter().map(|(_, o)| o).collect();
        engine.end_requests().await;
        Ok(outcome(wave_names, DryRun::None, started, nodes))
    }
}
