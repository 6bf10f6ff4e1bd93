//! Notifications (`--notify URL`, repeatable): a roll tells a webhook, Slack
//! or Teams when it starts, when a node starts, is done or is blocked, when
//! it holds, and how it ended. `endpoint` chooses the format, `notice` is
//! what is said (the documented body and kured-style templates), `deliver`
//! gets it there with retries, and this module decides when: a node or the
//! roll is "blocked" or "held" once a hold has lasted `--notify-after`
//! (told once per node, once per hold of the roll), or a node ended
//! without being done.
//!
//! A dead endpoint never stops nor slows the roll: one warning, and a count
//! in the report.

pub(crate) mod deliver;
pub(crate) mod endpoint;
pub(crate) mod notice;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::outbound::Http;
use crate::vocabulary::events::{Event, Sink};
use deliver::Courier;
use endpoint::Endpoint;
use notice::{Kind, Notice, Templates, Verb};

/// How long the end of a roll waits for notifications still under way.
const FINISH_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Default)]
pub(crate) struct NotifyOptions {
    pub(crate) endpoints: Vec<Endpoint>,
    /// How long a hold lasts before it is told (`--notify-after`).
    pub(crate) after: Duration,
    pub(crate) templates: Templates,
}

pub(crate) use crate::vocabulary::outcome::Delivered;

enum Input {
    Event(Event),
    Notice(Notice),
    /// Nothing more: tell what is due and hand the couriers back. Sent by
    /// `finish`, so that the end does not wait for every sender to go.
    End,
}

pub(crate) struct Notifier {
    input: mpsc::UnboundedSender<Input>,
    task: std::sync::Mutex<Option<JoinHandle<Vec<Courier>>>>,
}

impl Notifier {
    /// Starts the notifier of a run; none without endpoints. Delivery
    /// failures are warned of on `warnings`.
    pub(crate) fn start(
        options: &NotifyOptions,
        verb: Verb,
        run: &str,
        warnings: &Sink,
    ) -> Option<Notifier> {
        if options.endpoints.is_empty() {
            return None;
        }
        let http = Http::new();
        let couriers: Vec<Courier> = options
            .endpoints
            .iter()
            .map(|e| Courier::start(e.clone(), http.clone(), warnings.clone()))
            .collect();
        let (input, rx) = mpsc::unbounded_channel();
        let when = When::new(options.after, verb, run);
        let task = tokio::spawn(run_notifier(rx, couriers, when, options.templates.clone()));
        Some(Notifier {
            input,
            task: std::sync::Mutex::new(Some(task)),
        })
    }

    /// An event of the roll: holds and node ends are told from these.
    pub(crate) fn observe(&self, e: &Event) {
        if When::matters(e) {
            let _ = self.input.send(Input::Event(e.clone()));
        }
    }

    /// A notification the roll itself gives (run started, ended).
    pub(crate) fn tell(&self, notice: Notice) {
        let _ = self.input.send(Input::Notice(notice));
    }

    /// Delivers what is left (for at most a few seconds, every endpoint at
    /// once) and counts. Nothing is told after it.
    pub(crate) async fn finish(&self) -> Delivered {
        let _ = self.input.send(Input::End);
        let task = self.task.lock().expect("notifier").take();
        let couriers = match task {
            Some(task) => task.await.unwrap_or_default(),
            None => Vec::new(),
        };
        let tallies = futures::future::join_all(couriers.into_iter().map(|c| async move {
            let shown = c.endpoint.shown();
            (shown, c.finish(FINISH_GRACE).await)
        }))
        .await;
        let mut out = Delivered {
            sent: 0,
            failed: 0,
            failures: Vec::new(),
        };
        for (shown, tally) in tallies {
            out.sent += tally.sent.load(Ordering::Relaxed);
            let failed = tally.failed.load(Ordering::Relaxed);
            out.failed += failed;
            if failed > 0 {
                let last = tally.last_error.lock().expect("tally").clone();
                out.failures.push(format!(
                    "{shown}: {failed} not delivered ({})",
                    last.unwrap_or_default()
                ));
            }
        }
        out
    }
}

async fn run_notifier(
    mut rx: mpsc::UnboundedReceiver<Input>,
    couriers: Vec<Courier>,
    mut when: When,
    templates: Templates,
) -> Vec<Courier> {
    let send = |notices: Vec<Notice>| {
        for n in notices {
            let n = n.worded(&templates);
            for c in &couriers {
                c.send(n.clone());
            }
        }
    };
    loop {
        let due = when.next_due();
        tokio::select! {
            got = rx.recv() => match got {
                Some(Input::Event(e)) => send(when.on_event(&e, Instant::now())),
                Some(Input::Notice(n)) => send(vec![n]),
                Some(Input::End) | None => break,
            },
            () = sleep_until(due), if due.is_some() => send(when.due(Instant::now())),
        }
    }
    couriers
}

async fn sleep_until(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// What holds one node now: each pod or hook, with its reason.
#[derive(Default)]
struct NodeHolds {
    held: BTreeMap<String, String>,
    since: Option<Instant>,
    started: bool,
    told: bool,
}

/// When to tell what: from the events, and the time holds have lasted.
struct When {
    after: Duration,
    verb: Verb,
    run: String,
    nodes: BTreeMap<String, NodeHolds>,
    /// The roll's own hold: since when, why, told.
    held: Option<(Instant, String, bool)>,
}

impl When {
    fn new(after: Duration, verb: Verb, run: &str) -> When {
        When {
            after,
            verb,
            run: run.to_string(),
            nodes: BTreeMap::new(),
            held: None,
        }
    }

    fn matters(e: &Event) -> bool {
        matches!(
            e,
            Event::Blocked { .. }
                | Event::Evicted { .. }
                | Event::PodGone { .. }
                | Event::Forced { .. }
                | Event::PodLost { .. }
                | Event::NotWaitedFor { .. }
                | Event::Hold { .. }
                | Event::HoldEnded { .. }
                | Event::RunPhase { .. }
                | Event::Planned { .. }
                | Event::NodeEnded { .. }
        )
    }

    fn on_event(&mut self, e: &Event, now: Instant) -> Vec<Notice> {
        let mut out = Vec::new();
        match e {
            Event::Blocked {
                node, pod, cause, ..
            } => self.hold(
                node,
                format!("pod {pod}"),
                format!("pod {pod}: {cause}"),
                now,
            ),
            Event::Evicted { node, pod }
            | Event::PodGone { node, pod }
            | Event::Forced { node, pod, .. }
            | Event::PodLost { node, pod, .. }
            | Event::NotWaitedFor { node, pod, .. } => self.release(node, &format!("pod {pod}")),
            Event::Hold {
                node: Some(node),
                what,
                reason,
            } => self.hold(node, what.clone(), reason.clone(), now),
            Event::HoldEnded {
                node: Some(node),
                what,
            } => self.release(node, what),
            Event::Hold {
                node: None, reason, ..
            } => match &mut self.held {
                Some((_, why, _)) => why.clone_from(reason),
                None => self.held = Some((now, reason.clone(), false)),
            },
            Event::HoldEnded { node: None, .. } => self.held = None,
            Event::RunPhase { node, .. } => {
                let n = self.nodes.entry(node.clone()).or_default();
                if !n.started {
                    n.started = true;
                    out.push(Notice::new(
                        Kind::NodeStarted,
                        self.verb,
                        &self.run,
                        Some(node),
                    ));
                }
            }
            Event::NodeEnded {
                node,
                status,
                message,
                ..
            } => {
                let told = self.nodes.remove(node).is_some_and(|n| n.told);
                if status.done() {
                    out.push(Notice::new(
                        Kind::NodeDone,
                        self.verb,
                        &self.run,
                        Some(node),
                    ));
                } else if status.blocked() && !told {
                    out.push(
                        Notice::new(Kind::NodeBlocked, self.verb, &self.run, Some(node))
                            .because(message.clone().unwrap_or_else(|| status.as_str().into())),
                    );
                }
            }
            _ => {}
        }
        out
    }

    fn hold(&mut self, node: &str, what: String, reason: String, now: Instant) {
        let n = self.nodes.entry(node.to_string()).or_default();
        n.held.insert(what, reason);
        n.since.get_or_insert(now);
    }

    fn release(&mut self, node: &str, what: &str) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.held.remove(what);
            if n.held.is_empty() {
                n.since = None;
            }
        }
    }

    fn next_due(&self) -> Option<Instant> {
        let nodes = self
            .nodes
            .values()
            .filter(|n| !n.told)
            .filter_map(|n| n.since);
        let run = self.held.iter().filter(|h| !h.2).map(|h| h.0);
        nodes.chain(run).min().map(|since| since + self.after)
    }

    fn due(&mut self, now: Instant) -> Vec<Notice> {
        let mut out = Vec::new();
        for (name, n) in &mut self.nodes {
            if let Some(since) = n.since
                && !n.told
                && now >= since + self.after
            {
                n.told = true;
                let mut reasons = n.held.values();
                let first = reasons.next().cloned().unwrap_or_default();
                let more = match n.held.len() {
                    0 | 1 => String::new(),
                    k => format!(" (and {} more)", k - 1),
                };
                let lasted = crate::duration::human(now - since);
                out.push(
                    Notice::new(Kind::NodeBlocked, self.verb, &self.run, Some(name))
                        .because(format!("{first}{more}, for {lasted}")),
                );
            }
        }
        if let Some((since, why, told)) = &mut self.held
            && !*told
            && now >= *since + self.after
        {
            *told = true;
            let lasted = crate::duration::human(now - *since);
            out.push(
                Notice::new(Kind::RunHeld, self.verb, &self.run, None)
                    .because(format!("{why}, for {lasted}")),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::job_status::JobStatus;
    use crate::vocabulary::outcome::Cause;
    use crate::vocabulary::pod_key::PodKey;

    fn blocked(node: &str, pod: &str) -> Event {
        Event::Blocked {
            node: node.into(),
            pod: PodKey::new("web", pod),
            cause: Cause::ApiError {
                message: "budget".into(),
            },
            budget: None,
            release: None,
        }
    }

    fn kinds(notices: &[Notice]) -> Vec<&'static str> {
        notices.iter().map(|n| n.kind.as_str()).collect()
    }

    #[test]
    fn a_node_held_past_the_delay_is_told_blocked_once() {
        let t0 = Instant::now();
        let after = Duration::from_secs(600);
        let mut w = When::new(after, Verb::Roll, "abc");
        let phase = Event::RunPhase {
            node: "r1".into(),
            phase: "drain",
        };
        assert_eq!(kinds(&w.on_event(&phase, t0)), ["node.started"]);
        assert!(w.on_event(&phase, t0).is_empty(), "started once");
        w.on_event(&blocked("r1", "db-0"), t0);
        w.on_event(&blocked("r1", "db-1"), t0 + Duration::from_secs(5));
        assert_eq!(w.next_due(), Some(t0 + after));
        assert!(w.due(t0 + Duration::from_secs(599)).is_empty());
        let told = w.due(t0 + after);
        assert_eq!(kinds(&told), ["node.blocked"]);
        assert!(told[0].reason.as_deref().unwrap().contains("and 1 more"));
        assert!(w.due(t0 + after * 2).is_empty(), "once");
        assert_eq!(w.next_due(), None);
        // Ending blocked after being told: no second one.
        let ended = Event::NodeEnded {
            node: "r1".into(),
            status: JobStatus::Blocked,
            message: Some("timed out".into()),
            out_of_service_ms: Some(0),
        };
        assert!(w.on_event(&ended, t0 + after * 3).is_empty());
    }

    #[test]
    fn a_hold_that_ends_in_time_is_not_told_and_a_blocked_end_is() {
        let t0 = Instant::now();
        let mut w = When::new(Duration::from_secs(60), Verb::Roll, "abc");
        w.on_event(&blocked("r1", "db-0"), t0);
        w.on_event(
            &Event::Evicted {
                node: "r1".into(),
                pod: PodKey::new("web", "db-0"),
            },
            t0 + Duration::from_secs(30),
        );
        assert_eq!(w.next_due(), None);
        let ended = Event::NodeEnded {
            node: "r1".into(),
            status: JobStatus::Blocked,
            message: Some("its drain timed out".into()),
            out_of_service_ms: Some(0),
        };
        let told = w.on_event(&ended, t0 + Duration::from_secs(40));
        assert_eq!(kinds(&told), ["node.blocked"]);
        assert_eq!(told[0].reason.as_deref(), Some("its drain timed out"));
        let done = Event::NodeEnded {
            node: "r2".into(),
            status: JobStatus::Done,
            message: None,
            out_of_service_ms: Some(0),
        };
        assert_eq!(kinds(&w.on_event(&done, t0)), ["node.done"]);
    }

    #[test]
    fn the_rolls_own_hold_is_told_once_per_hold() {
        let t0 = Instant::now();
        let mut w = When::new(Duration::from_secs(60), Verb::Roll, "abc");
        let hold = Event::Hold {
            node: None,
            what: "alerts".into(),
            reason: "alerts firing: NodeDown".into(),
        };
        w.on_event(&hold, t0);
        let told = w.due(t0 + Duration::from_secs(60));
        assert_eq!(kinds(&told), ["run.held"]);
        assert!(w.due(t0 + Duration::from_secs(120)).is_empty());
        w.on_event(
            &Event::HoldEnded {
                node: None,
                what: "alerts".into(),
            },
            t0,
        );
        w.on_event(&hold, t0 + Duration::from_secs(200));
        assert_eq!(kinds(&w.due(t0 + Duration::from_secs(260))), ["run.held"]);
    }
}
