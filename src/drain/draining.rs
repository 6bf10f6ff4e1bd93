//! The drain's driver of the pool runner (crate::pool): the next node
//! weighed by the budgets it shares with those running, a refused node
//! ended at once, each node cordoned at its turn when the run is paced, and
//! the outcome the run ends with.

use std::sync::Arc;

use tokio::time::Instant;

use super::DrainError;
use super::budgets::NodeBudgets;
use super::context::DrainContext;
use super::machine::Settings;
use super::node_plan::NodePlan;
use super::pool_budgets::PoolBudgets;
use crate::pool::abort_watch::AbortWatch;
use crate::pool::gate::Gate;
use crate::pool::node_watch::Nodes;
use crate::pool::{Admit, Driver, Ended, Stopped, Tell};
use crate::vocabulary::events::{Event, emit};
use crate::vocabulary::job_status::JobStatus;
use crate::vocabulary::outcome::{DrainOutcome, DryRun, NodeOutcome, NodeStatus};

/// How a drain's nodes are paced: the pool runner's gate, a Job's abort,
/// where holds and lines are told, every node watched for
/// `--max-unavailable`, and whether each node is cordoned at its turn
/// (paced by a gate or `--max-unavailable`) instead of all first.
pub(crate) struct Pace<'a> {
    pub(crate) gate: &'a Gate,
    pub(crate) abort: &'a AbortWatch,
    pub(crate) tell: &'a Tell,
    pub(crate) nodes: Option<&'a Nodes>,
    pub(crate) cordon_at_turn: bool,
}

/// The drain's driver of the pool runner: the next node weighed by the
/// budgets it shares with those running, its place with the budget broker
/// taken as it starts.
pub(super) struct Draining<'a> {
    pub(super) engine: &'a Arc<DrainContext>,
    pub(super) settings: &'a Arc<Settings>,
    pub(super) names: Vec<String>,
    /// Each node's plan and whether it was cordoned before (unknown until
    /// cordoned at its turn), until it starts.
    pub(super) nodes: Vec<Option<(NodePlan, Option<bool>)>>,
    pub(super) pool: PoolBudgets<'a>,
    pub(super) chains: bool,
    /// A node kubectl's filters refuse ends at once, without a slot (every
    /// node was cordoned first, so nothing is left to do at its turn).
    pub(super) refused_at_once: bool,
}

impl Draining<'_> {
    /// The node's plan, taken as it starts, and its place with the budget
    /// broker: joined before the next choice, which counts its pods, and in
    /// the order started, which serves budgets in it.
    fn start(&mut self, i: usize) -> (NodePlan, Option<bool>, NodeBudgets) {
        self.pool.started(i);
        let (n, was) = self.nodes[i].take().expect("each node once");
        let joined = n.join_budgets(self.engine);
        (n, was, joined)
    }
}

impl Driver for Draining<'_> {
    const VERB: &'static str = "drain";
    type Start = (NodePlan, Option<bool>, NodeBudgets);
    type Out = NodeOutcome;

    fn name(&self, node: usize) -> &str {
        &self.names[node]
    }

    fn choose(&mut self, waiting: &[usize]) -> usize {
        self.pool.choose(waiting, &self.engine.budgets, self.chains)
    }

    async fn admit(&mut self, i: usize) -> Result<Admit<Self::Start, NodeOutcome>, DrainError> {
        Ok(Admit::Start(self.start(i)))
    }

    async fn at_once(&mut self, i: usize) -> Option<NodeOutcome> {
        let refused = self.nodes[i].as_ref().is_some_and(|(n, _)| n.refused());
        if !(self.refused_at_once && refused) {
            return None;
        }
        let (n, was, joined) = self.start(i);
        Some(drain_one(self.engine, self.settings.clone(), n, was, joined).await)
    }

    fn ended(&self, out: &NodeOutcome) -> Ended {
        let status = match out.status {
            NodeStatus::Drained => JobStatus::Done,
            NodeStatus::Refused | NodeStatus::TimedOut => JobStatus::Blocked,
            NodeStatus::Failed => JobStatus::Failed,
            NodeStatus::Interrupted => JobStatus::Interrupted,
            NodeStatus::NotStarted | NodeStatus::DryRun => JobStatus::NotStarted,
        };
        Ended {
            status,
            message: out.message.clone(),
            out_of_service_ms: None,
            line: false,
        }
    }

    fn not_started(
        &mut self,
        i: usize,
        interrupted: bool,
        stopped: Option<&Stopped>,
    ) -> NodeOutcome {
        let (n, was) = self.nodes[i].take().expect("each node once");
        let why = match (interrupted, stopped) {
            (true, _) => "interrupted before it started".to_string(),
            (false, Some(stopped)) => format!("not started: {stopped}"),
            (false, None) => "not started".to_string(),
        };
        let left = match was {
            Some(_) => "the node stays cordoned",
            None => "the node was not cordoned",
        };
        let machine = n.machine(self.settings.clone(), was.unwrap_or(n.unschedulable()));
        let mut out = machine.not_started(format!("{why}; {left}"));
        out.not_cordoned = was.is_none();
        out
    }
}

/// One node's drain in a pool: cordoned first when the run cordons each at
/// its turn (`was` unknown).
pub(super) async fn drain_one(
    engine: &Arc<DrainContext>,
    settings: Arc<Settings>,
    n: NodePlan,
    was: Option<bool>,
    budgets: NodeBudgets,
) -> NodeOutcome {
    emit(
        &engine.events.sink,
        Event::RunPhase {
            node: n.name.clone(),
            phase: "drain",
        },
    );
    let was = match was {
        Some(was) => was,
        None => match n.cordon(engine).await {
            Ok(was) => was,
            Err(e) => {
                let machine = n.machine(settings, n.unschedulable());
                return machine.failed_to_start(format!("cordon: {}", e.chain()));
            }
        },
    };
    n.drain(engine, settings, was, budgets).await
}

pub(super) fn outcome(
    waves: Vec<String>,
    dry_run: DryRun,
    started: Instant,
    nodes: Vec<NodeOutcome>,
) -> DrainOutcome {
    DrainOutcome {
        dry_run,
        elapsed_ms: started.elapsed().as_millis() as u64,
        waves,
        nodes,
        conditions_not_written: Vec::new(),
        holds: Vec::new(),
        notifications: None,
    }
}
