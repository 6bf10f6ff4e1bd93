//! What a maintenance publishes to the cluster for others to read, in one
//! place: the node conditions `DrainInProgress`/`Drained` (`conditions`),
//! Kubernetes Events on the nodes (`node_events`, with holds of pods told
//! once they last, `holds`). A drain session or a roll drives one
//! `Publisher`; the screen only listens to the same events. The third thing
//! published, the record of what a drain changed on a node (which
//! `uncordon` undoes, format in `policy::maintenance`), is written in the
//! cordon's own patch (`drain::cordon`), so that no crash can leave a node
//! cordoned without it.
//!
//! Each part is optional and never stops the work: a refused write warns
//! once and the maintenance goes on.

mod blocked_news;
pub(crate) mod conditions;
pub(crate) mod node_events;
mod planners;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::vocabulary::events::{Event, Sink};
use conditions::Stage;
use node_events::Recorder;

/// What to publish.
#[derive(Debug, Clone, Default)]
pub(crate) struct Publish {
    /// Write the node conditions (`--node-conditions`).
    pub(crate) conditions: bool,
    /// Record Kubernetes Events on the nodes.
    pub(crate) events: bool,
    /// `--reason`, told in the Event of each cordon.
    pub(crate) reason: Option<String>,
}

/// Publishes one drain's or one roll's progress.
pub(crate) struct Publisher {
    conditions: conditions::Writer,
    /// One recorder for the drain's Events and `uncordoned`'s, so that a
    /// refusal is warned of once.
    recorder: Option<Arc<Recorder>>,
    /// Events for the recorder's task (none when Events are off).
    to_record: Mutex<Option<mpsc::UnboundedSender<Event>>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Publisher {
    /// Starts publishing: the recorder's task runs until `finish`.
    pub(crate) fn start(client: &kube::Client, publish: Publish) -> Self {
        let recorder = publish
            .events
            .then(|| Arc::new(Recorder::new(client.clone())));
        let (to_record, task) = match &recorder {
            Some(recorder) => {
                let (tx, rx) = mpsc::unbounded_channel();
                let task = tokio::spawn(node_events::run(recorder.clone(), rx, publish.reason));
                (Some(tx), Some(task))
            }
            None => (None, None),
        };
        Publisher {
            conditions: conditions::Writer::new(client.clone(), publish.conditions),
            recorder,
            to_record: Mutex::new(to_record),
            task: Mutex::new(task),
        }
    }

    /// A sink that tells `display` every event, and records those that
    /// matter to others as Kubernetes Events.
    pub(crate) fn listen(&self, display: Sink) -> Sink {
        let Some(record) = self.to_record.lock().expect("recorder").clone() else {
            return display;
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
        tokio::spawn(async move {
            while let Some(e) = rx.recv().await {
                let _ = record.send(e.clone());
                let _ = display.send(e);
            }
        });
        tx
    }

    /// A node's drain reached a stage: its conditions say so. A refused
    /// write is a warning to `warnings` (stderr without one), given once.
    pub(crate) async fn stage(&self, node: &str, stage: Stage, warnings: Option<&Sink>) {
        self.conditions.write(node, stage, warnings).await;
    }

    /// A roll's maintenance of a node reached a stage (KEP-5683's
    /// `MaintenancePlanned`, `MaintenanceInProgress`).
    pub(crate) async fn maintenance(
        &self,
        node: &str,
        stage: conditions::Maintenance,
        warnings: Option<&Sink>,
    ) {
        self.conditions
            .write_maintenance(node, stage, warnings)
            .await;
    }

    /// The same maintenance stage on each of these nodes.
    pub(crate) async fn maintenance_of_all(
        &self,
        nodes: &[String],
        stage: conditions::Maintenance,
        warnings: Option<&Sink>,
    ) {
        for node in nodes {
            self.maintenance(node, stage, warnings).await;
        }
    }

    /// The nodes whose conditions' last write failed (crate::publish::conditions).
    pub(crate) fn unwritten(&self) -> Vec<String> {
        self.conditions.unwritten()
    }

    /// `uncordon` returned a node to service: an Event says what was undone.
    pub(crate) async fn uncordoned(&self, name: &str, words: &str) {
        if let Some(recorder) = &self.recorder {
            let message = format!("Maintenance ended: {words}");
            recorder
                .node_event(name, "Normal", node_events::UNCORDONED, &message)
                .await;
        }
    }

    /// Once every sink from `listen` is dropped: lets the recorder write
    /// what is left, then ends it.
    pub(crate) async fn finish(&self) {
        drop(self.to_record.lock().expect("recorder").take());
        let task = self.task.lock().expect("task").take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
    }
}
