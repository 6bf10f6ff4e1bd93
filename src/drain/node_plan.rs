//! One selected node as the drain found it: its pods listed and classified
//! once, its health, its proof of power-off; and what the run does with it
//! (cordon it, join the budget broker, drain it through its machine).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;

use super::budgets::NodeBudgets;
use super::context::DrainContext;
use super::cordon::cordon;
use super::driver::now;
use super::machine::{NodeMachine, Settings};
use super::out_of_service::NodeProof;
use super::packed_pods::PackedPods;
use super::pod_watch::PodQuery;
use super::{DrainError, driver};
use crate::policy::classify::Disposition;
use crate::policy::node_health::NodeDown;
use crate::publish::conditions::Stage;
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::{NodeOutcome, NodeStatus};
use crate::vocabulary::pod_key::{PodKey, uid};
use crate::vocabulary::warning::Warning;

/// One selected node as the drain found it.
pub(crate) struct NodePlan {
    pub(crate) node: Node,
    pub(crate) name: String,
    pub(super) query: PodQuery,
    /// The resourceVersion the pods were listed at.
    pub(super) resource_version: String,
    /// Every pod listed, with its fate, decided once; packed until the
    /// node's drain starts.
    pub(super) pods: PackedPods,
    /// The node's kubelet is down, as found (crate::policy::node_health).
    pub(super) down: Option<NodeDown>,
    /// `--node-shut-down` takes it out of service, with this proof.
    pub(super) proof: Option<NodeProof>,
}

impl NodePlan {
    /// Does kubectl's filter refuse one of its pods (the node then ends
    /// at its start, nothing evicted)?
    pub(super) fn refused(&self) -> bool {
        self.pods
            .facts()
            .iter()
            .any(|f| matches!(f.disposition, Disposition::Refuse { .. }))
    }

    /// The pods its drain is to move: all but those left alone by design.
    pub(super) fn to_move(&self) -> usize {
        let facts = self.pods.facts();
        facts
            .iter()
            .filter(|f| !matches!(f.disposition, Disposition::Skip { .. }))
            .count()
    }

    pub(super) fn unschedulable(&self) -> bool {
        crate::policy::maintenance::unschedulable(&self.node)
    }

    /// A machine for a preview, which leaves the plan as it is.
    pub(super) fn machine(&self, settings: Arc<Settings>, was_cordoned: bool) -> NodeMachine {
        NodeMachine::new(
            &self.name,
            settings,
            self.pods.unpack(),
            was_cordoned,
            now(),
        )
        .with_health(self.health())
    }

    /// The node's health as the drain starts: down, and out of service once
    /// `--node-shut-down` has its proof.
    pub(super) fn health(&self) -> Option<NodeDown> {
        let mut down = self.down.clone()?;
        if self.proof.is_some() && !down.out_of_service() {
            down.taints
                .push(crate::policy::node_health::OUT_OF_SERVICE.into());
        }
        Some(down)
    }

    /// Cordons the node (taken out of service too, with its proof of
    /// power-off), told; whether it was cordoned before.
    pub(super) async fn cordon(&self, engine: &DrainContext) -> Result<bool, DrainError> {
        let (client, spec) = (&engine.clients.main, engine.options.cordon_spec());
        let mut taints = spec.taints.to_vec();
        if self.proof.is_some() {
            taints.push(super::out_of_service::taint());
        }
        let spec = super::cordon::CordonSpec {
            taints: &taints,
            ..spec
        };
        let (was, already) = cordon(client, &spec, &self.node, false).await?;
        engine.events.emit(Event::Cordoned {
            node: self.name.clone(),
            already,
        });
        Ok(was)
    }

    /// The node joins the budget broker with the pods of its first wave
    /// to evict, which are due on their budgets from the start.
    pub(super) fn join_budgets(&self, engine: &DrainContext) -> NodeBudgets {
        let wave_of = |d: &Disposition| match d {
            Disposition::Evict { wave, .. } => Some(*wave),
            _ => None,
        };
        let facts = self.pods.facts();
        let first = facts.iter().filter_map(|f| wave_of(&f.disposition)).min();
        let first_wave = facts
            .iter()
            .filter(|f| first.is_some() && wave_of(&f.disposition) == first)
            .map(|f| f.key.clone());
        let evicted = facts
            .iter()
            .filter(|f| wave_of(&f.disposition).is_some())
            .map(|f| f.key.clone());
        engine
            .budgets
            .join(engine.budget_of.clone(), first_wave, evicted)
    }

    /// Drains the node, `budgets` its place with the budget broker
    /// (`join_budgets`); its pods move into the machine.
    pub(super) async fn drain(
        self,
        engine: &DrainContext,
        settings: Arc<Settings>,
        was_cordoned: bool,
        budgets: NodeBudgets,
    ) -> NodeOutcome {
        // A node kubectl's filters refuse ends at its machine's start, before
        // any eviction or watch request.
        let pods = self.pods.unpack();
        let known = pods
            .iter()
            .map(|(p, _)| (PodKey::of(p), uid(p).to_string()))
            .collect();
        let health = self.health();
        let machine =
            NodeMachine::new(&self.name, settings, pods, was_cordoned, now()).with_health(health);
        let (publisher, events) = (&engine.publisher, Some(&engine.events.sink));
        publisher.stage(&self.name, Stage::Started, events).await;
        let out = driver::drain_node(
            engine,
            machine,
            self.query,
            self.resource_version,
            known,
            budgets,
        )
        .await;
        let stage = match out.status {
            NodeStatus::Drained => Stage::Drained,
            _ => Stage::NotDrained,
        };
        publisher.stage(&self.name, stage, events).await;
        for problem in engine.surges.undo(&engine.clients.main, &self.name).await {
            engine.events.warn(Warning::SurgeNotUndone { problem });
        }
        out
    }
}
