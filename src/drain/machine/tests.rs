//! The machine driven without a server or a clock.

use std::time::Duration;

use serde_json::json;

use k8s_openapi::jiff::Timestamp;

use super::settings::{FALLBACK_RETRY, MAX_API_ATTEMPTS};
use super::*;
use crate::drain::budgets::UNWATCHED_RETRY;
use crate::policy::classify::SkipReason;
use crate::vocabulary::outcome::Forced;

const SEC: Duration = Duration::from_secs(1);

/// The clock, read as the driver reads it.
fn now() -> Now {
    Now {
        at: Instant::now(),
        wall: Timestamp::now(),
    }
}

fn pod(name: &str, uid: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns", "uid": uid}}))
        .expect("pod")
}

fn key(name: &str) -> PodKey {
    PodKey::new("ns", name)
}

fn evict(wave: usize) -> Disposition {
    Disposition::Evict {
        wave,
        warning: None,
        surge: false,
    }
}

/// A drain of `pods` (name, wave) on node `n`, started at `t0`.
struct Drain {
    m: NodeMachine,
    t0: Instant,
    now: Instant,
}

impl Drain {
    fn new(pods: &[(&str, usize)], settings: Settings) -> (Self, Vec<Effect>) {
        let t0 = Instant::now();
        let at = |at| Now {
            at,
            wall: Timestamp::now(),
        };
        let pods = pods
            .iter()
            .map(|(n, w)| (pod(n, &format!("uid-{n}")), evict(*w)))
            .collect();
        let mut m = NodeMachine::new("n", Arc::new(settings), pods, false, at(t0));
        let effects = m.start(at(t0));
        (Drain { m, t0, now: t0 }, effects)
    }

    /// Feeds an input `offset` after the start.
    fn at(&mut self, offset: Duration, input: Input) -> Vec<Effect> {
        self.now = self.t0 + offset;
        self.m.step(
            input,
            Now {
                at: self.now,
                wall: Timestamp::now(),
            },
        )
    }

    fn answer(&mut self, offset: Duration, name: &str, answer: Answer) -> Vec<Effect> {
        self.at(
            offset,
            Input::Answer {
                key: key(name),
                uid: format!("uid-{name}"),
                answer,
                evacuation: None,
            },
        )
    }

    /// Budget `name` now allows `allowed` disruptions.
    fn allows(&mut self, offset: Duration, name: &str, allowed: i32) -> Vec<Effect> {
        self.at(
            offset,
            Input::Budget {
                key: ("ns".into(), name.into()),
                budget: budget(allowed),
                grant: usize::MAX,
            },
        )
    }

    fn gone(&mut self, offset: Duration, name: &str) -> Vec<Effect> {
        self.at(
            offset,
            Input::Pod(Change::Gone {
                key: key(name),
                uid: format!("uid-{name}"),
            }),
        )
    }
}

fn waves(names: &[&str]) -> Settings {
    Settings {
        waves: names
            .iter()
            .map(|n| WaveSpec {
                name: (*n).to_string(),
                timeout: None,
            })
            .collect(),
        in_flight: IN_FLIGHT,
        ..Settings::default()
    }
}

fn evicted(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Evict(e) => Some(e.key.name.clone()),
            _ => None,
        })
        .collect()
}

fn finished(effects: &[Effect]) -> Option<&NodeOutcome> {
    effects.iter().find_map(|e| match e {
        Effect::Finish(o) => Some(&**o),
        _ => None,
    })
}

fn result(o: &NodeOutcome, name: &str) -> PodResult {
    o.pods
        .iter()
        .find(|p| p.pod == key(name))
        .expect("pod in outcome")
        .result
        .clone()
}

fn refusal(pdb: &str, retry_after: Option<Duration>) -> Answer {
    Answer::PdbBlocked {
        pdb: pdb.into(),
        message: format!("The disruption budget {pdb} needs 2 healthy pods and has 2 currently"),
        api_message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
        retry_after,
    }
}

fn budget(allowed: i32) -> Budget {
    Budget {
        disruptions_allowed: allowed,
        current_healthy: 2 + allowed,
        desired_healthy: 2,
        expected_pods: 3,
        observed: true,
    }
}

#[test]
fn at_the_deadline_a_held_pod_is_deleted_its_grace_period_early() {
    let settings = Settings {
        deadline: Some(20 * SEC),
        grace_period: Some(10),
        ..waves(&["user"])
    };
    let (mut d, start) = Drain::new(&[("a", 0), ("b", 0)], settings);
    assert_eq!(evicted(&start), ["a", "b"]);
    d.answer(SEC / 10, "a", refusal("web", None));
    d.answer(SEC / 10, "b", Answer::Accepted);
    // The budget's 20 s fallback retry comes after the force time.
    assert_eq!(d.m.next_wakeup(), Some(d.t0 + 10 * SEC));
    let early = d.at(9 * SEC, Input::Tick);
    assert!(!early.iter().any(|e| matches!(e, Effect::Force { .. })));
    let due = d.at(10 * SEC, Input::Tick);
    let forced: Vec<(&str, i64)> = due
        .iter()
        .filter_map(|e| match e {
            Effect::Force { key, grace, .. } => Some((key.name.as_str(), *grace)),
            _ => None,
        })
        .collect();
    assert_eq!(forced, [("a", 10)]);
    assert!(
        due.iter()
            .any(|e| matches!(e, Effect::Emit(Event::Forced { why: Forced::Held(Cause::Pdb { name, .. }), .. }) if name == "web"))
    );
    d.answer(10 * SEC, "a", Answer::Accepted);
    d.gone(11 * SEC, "b");
    let end = d.gone(19 * SEC, "a");
    let o = finished(&end).expect("finished");
    assert_eq!(o.status, NodeStatus::Drained);
    assert!(matches!(result(o, "a"), PodResult::Forced { .. }));
    assert_eq!(result(o, "b"), PodResult::Evicted);
}

#[test]
fn a_deadline_inside_the_grace_period_evicts_first_and_deletes_only_what_is_refused() {
    let settings = Settings {
        deadline: Some(5 * SEC),
        grace_period: Some(30),
        in_flight: 1,
        ..waves(&["user", "critical"])
    };
    let (mut d, start) = Drain::new(&[("a", 0), ("b", 0), ("c", 1)], settings);
    // Their time has come already, yet each is asked for by eviction first,
    // one at a time here.
    assert_eq!(evicted(&start), ["a"]);
    let forced = |effects: &[Effect]| -> Vec<String> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Force { key, .. } => Some(key.name.clone()),
                _ => None,
            })
            .collect()
    };
    assert!(forced(&start).is_empty());
    let next = d.answer(SEC / 10, "a", Answer::Accepted);
    // The later wave's time does not wait for its turn.
    assert_eq!(forced(&next), ["c"], "{next:?}");
    let next = d.answer(SEC / 10, "c", Answer::Accepted);
    assert_eq!(evicted(&next), ["b"], "b is asked for, not deleted");
    assert!(forced(&next).is_empty());
    let refused = d.answer(SEC / 5, "b", refusal("web", None));
    assert_eq!(forced(&refused), ["b"], "refused: its time has come");
}

#[test]
fn waves_run_in_order_and_each_waits_for_the_one_before() {
    let (mut d, start) = Drain::new(
        &[("a", 0), ("b", 0), ("c", 1)],
        waves(&["user", "critical"]),
    );
    assert_eq!(evicted(&start), ["a", "b"], "only the first wave is sent");
    let accepted = d.answer(SEC, "a", Answer::Accepted);
    assert!(
        accepted
            .iter()
            .any(|e| matches!(e, Effect::Emit(Event::Evicted { .. })))
    );
    d.answer(SEC, "b", Answer::Accepted);
    assert!(
        evicted(&d.gone(2 * SEC, "a")).is_empty(),
        "b is still there"
    );
    let next = d.gone(3 * SEC, "b");
    assert_eq!(
        evicted(&next),
        ["c"],
        "wave critical starts once user is gone"
    );
    assert!(
        next.iter()
            .any(|e| matches!(e, Effect::Emit(Event::WaveDone { wave, .. }) if wave == "user"))
    );
    d.answer(4 * SEC, "c", Answer::Accepted);
    let end = d.gone(5 * SEC, "c");
    let outcome = finished(&end).expect("finished");
    assert_eq!(outcome.status, NodeStatus::Drained);
    assert_eq!(result(outcome, "a"), PodResult::Evicted);
    let names: Vec<&str> = outcome.waves.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["user", "critical"]);
}

#[test]
fn budget_holds_count_each_moment_once_and_say_what_still_holds() {
    let mut settings = waves(&["user"]);
    settings.timeout = Some(20 * SEC);
    let (mut d, _) = Drain::new(&[("a", 0), ("b", 0), ("c", 0)], settings);
    // web refuses a from 1 s and b from 2 s; a goes at 5 s, b at 9 s.
    d.answer(SEC, "a", refusal("web", None));
    d.answer(2 * SEC, "b", refusal("web", None));
    d.allows(3 * SEC, "web", 1);
    d.answer(3 * SEC, "a", refusal("web", None));
    // db refuses c from 4 s until the node's --timeout.
    d.answer(4 * SEC, "c", refusal("db", None));
    d.allows(5 * SEC, "web", 1);
    d.answer(5 * SEC, "a", Answer::Accepted);
    d.gone(6 * SEC, "a");
    d.allows(9 * SEC, "web", 1);
    d.answer(9 * SEC, "b", Answer::Accepted);
    d.gone(10 * SEC, "b");
    let end = d.at(20 * SEC, Input::Tick);
    let outcome = finished(&end).expect("timed out");
    let holds: Vec<(&str, Vec<String>, u64, bool)> = outcome
        .budget_holds
        .iter()
        .map(|h| {
            let pods = h.pods.iter().map(|p| p.name.clone()).collect();
            (h.budget.as_str(), pods, h.held_ms, h.holding)
        })
        .collect();
    assert_eq!(
        holds,
        [
            ("ns/db", vec!["c".to_string()], 16_000, true),
            (
                "ns/web",
                vec!["a".to_string(), "b".to_string()],
                8_000,
                false
            ),
        ]
    );
}

#[test]
fn a_budget_refusal_is_retried_when_the_budget_allows_one() {
    let (mut d, _) = Drain::new(&[("a", 0), ("b", 0)], waves(&["user"]));
    d.answer(SEC, "a", Answer::Accepted);
    let refused = d.answer(SEC, "b", refusal("web", None));
    assert!(
        refused
            .iter()
            .any(|e| matches!(e, Effect::WatchBudget((ns, n)) if ns == "ns" && n == "web"))
    );
    assert!(
        refused
            .iter()
            .any(|e| matches!(e, Effect::Emit(Event::Blocked { .. })))
    );
    // Without a budget change, the retry waits for the fallback.
    assert_eq!(d.m.next_wakeup(), Some(d.t0 + SEC + FALLBACK_RETRY));
    let still = d.allows(2 * SEC, "web", 0);
    assert!(evicted(&still).is_empty(), "the budget allows nothing yet");
    let retried = d.allows(3 * SEC, "web", 1);
    assert_eq!(
        evicted(&retried),
        ["b"],
        "retried the moment the budget allows it"
    );
}

#[test]
fn a_budget_that_cannot_be_watched_is_retried_on_kubectls_timer() {
    let (mut d, _) = Drain::new(&[("a", 0), ("b", 0)], waves(&["user"]));
    d.answer(SEC, "a", refusal("web", None));
    assert_eq!(d.m.next_wakeup(), Some(d.t0 + SEC + FALLBACK_RETRY));
    d.at(2 * SEC, Input::BudgetUnwatched(("ns".into(), "web".into())));
    assert_eq!(
        d.m.next_wakeup(),
        Some(d.t0 + 2 * SEC + UNWATCHED_RETRY),
        "the waiting pod comes forward"
    );
    assert_eq!(evicted(&d.at(7 * SEC, Input::Tick)), ["a"]);
    d.answer(7 * SEC, "b", refusal("web", None));
    d.answer(7 * SEC, "a", refusal("web", None));
    assert_eq!(
        d.m.next_wakeup(),
        Some(d.t0 + 7 * SEC + UNWATCHED_RETRY),
        "later refusals wait 5 s, not 20"
    );
}

#[test]
fn retry_after_sets_when_a_refused_pod_is_tried_again() {
    let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
    d.answer(SEC, "a", refusal("web", Some(10 * SEC)));
    assert_eq!(d.m.next_wakeup(), Some(d.t0 + 11 * SEC));
    assert!(evicted(&d.at(5 * SEC, Input::Tick)).is_empty());
    assert_eq!(evicted(&d.at(11 * SEC, Input::Tick)), ["a"]);
}

#[test]
fn a_uid_conflict_or_a_new_uid_means_the_pod_is_gone() {
    let (mut d, _) = Drain::new(&[("a", 0), ("b", 0), ("c", 0)], waves(&["user"]));
    // 409 on the uid precondition: the pod we meant no longer exists.
    let a = d.answer(SEC, "a", Answer::Gone);
    assert!(
        a.iter()
            .any(|e| matches!(e, Effect::Emit(Event::PodGone { .. })))
    );
    d.answer(SEC, "b", Answer::Accepted);
    d.answer(SEC, "c", Answer::Accepted);
    // A StatefulSet recreates b under the same name: the watch reports
    // the old uid gone and the new pod as an arrival, never chased.
    let old_b = Change::Gone {
        key: key("b"),
        uid: "uid-b".into(),
    };
    d.at(2 * SEC, Input::Pod(old_b));
    let new_b = Change::Upsert(Box::new(pod("b", "uid-b2")));
    assert!(evicted(&d.at(2 * SEC, Input::Pod(new_b))).is_empty());
    let end = d.gone(3 * SEC, "c");
    let outcome = finished(&end).expect("drained once a, the old b and c are gone");
    assert_eq!(outcome.status, NodeStatus::Drained);
    assert_eq!(result(outcome, "a"), PodResult::GoneByItself);
    assert_eq!(result(outcome, "c"), PodResult::Evicted);
    assert!(outcome.pods.iter().any(|p| p.pod == key("b")
        && p.result
            == PodResult::Skipped {
                reason: SkipReason::ArrivedDuringDrain
            }));
}

#[test]
fn server_errors_back_off_and_give_up_after_the_attempts() {
    let retry = |throttled| Answer::Retry {
        retry_after: None,
        message: "503".into(),
        throttled,
    };
    let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
    let mut t = SEC;
    for attempt in 1..=MAX_API_ATTEMPTS {
        let e = d.answer(t, "a", retry(false));
        assert!(finished(&e).is_none(), "attempt {attempt}");
        t = d.m.next_wakeup().expect("a retry").duration_since(d.t0);
        assert_eq!(evicted(&d.at(t, Input::Tick)), ["a"]);
    }
    let e = d.answer(t, "a", retry(false));
    assert_eq!(finished(&e).expect("given up").status, NodeStatus::Failed);

    // Throttling (429 without a budget) is retried until --timeout.
    let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
    let mut t = SEC;
    for _ in 0..3 * MAX_API_ATTEMPTS {
        let e = d.answer(t, "a", retry(true));
        assert!(finished(&e).is_none());
        t = d.m.next_wakeup().expect("a retry").duration_since(d.t0);
        assert_eq!(evicted(&d.at(t, Input::Tick)), ["a"]);
    }
}

#[test]
fn a_wave_timeout_ends_the_node_as_timed_out() {
    let mut settings = waves(&["user", "critical"]);
    settings.waves[0].timeout = Some(30 * SEC);
    let (mut d, _) = Drain::new(&[("a", 0), ("b", 1)], settings);
    d.answer(SEC, "a", refusal("web", None));
    assert!(d.m.next_wakeup() <= Some(d.t0 + 30 * SEC));
    let end = d.at(30 * SEC, Input::Tick);
    let outcome = finished(&end).expect("timed out");
    assert_eq!(outcome.status, NodeStatus::TimedOut);
    assert!(outcome.message.as_deref().unwrap().contains("wave user"));
    assert!(matches!(
        result(outcome, "a"),
        PodResult::Remaining {
            cause: Cause::Pdb { .. }
        }
    ));
    assert_eq!(
        result(outcome, "b"),
        PodResult::Remaining {
            cause: Cause::WaitingForEarlierWave {
                wave: "user".into()
            }
        }
    );
}

#[test]
fn the_drain_timeout_ends_the_node_as_timed_out() {
    let mut settings = waves(&["user"]);
    settings.timeout = Some(5 * SEC);
    let (mut d, _) = Drain::new(&[("a", 0)], settings);
    d.answer(SEC, "a", Answer::Accepted);
    let end = d.at(6 * SEC, Input::Tick);
    let outcome = finished(&end).expect("timed out");
    assert_eq!(outcome.status, NodeStatus::TimedOut);
    assert!(matches!(
        result(outcome, "a"),
        PodResult::Remaining {
            cause: Cause::Terminating { .. }
        }
    ));
}

#[test]
fn an_interruption_stops_the_node_and_keeps_what_was_reached() {
    let (mut d, _) = Drain::new(&[("a", 0), ("b", 0)], waves(&["user"]));
    d.answer(SEC, "a", Answer::Accepted);
    d.gone(2 * SEC, "a");
    let end = d.at(3 * SEC, Input::Interrupted);
    let outcome = finished(&end).expect("interrupted");
    assert_eq!(outcome.status, NodeStatus::Interrupted);
    assert_eq!(result(outcome, "a"), PodResult::Evicted);
    assert_eq!(
        result(outcome, "b"),
        PodResult::Remaining {
            cause: Cause::NotStarted
        }
    );
    assert!(
        d.at(4 * SEC, Input::Tick).is_empty(),
        "a finished machine does nothing"
    );
}

#[test]
fn a_refused_pod_stops_the_node_before_any_eviction() {
    let t0 = now();
    let pods = vec![
        (pod("a", "1"), evict(0)),
        (
            pod("bare", "2"),
            Disposition::Refuse {
                refusal: crate::policy::classify::Refusal::Unmanaged,
            },
        ),
    ];
    let mut m = NodeMachine::new("n", Arc::new(waves(&["user"])), pods, false, t0);
    let effects = m.start(t0);
    assert!(evicted(&effects).is_empty());
    let outcome = finished(&effects).expect("refused");
    assert_eq!(outcome.status, NodeStatus::Refused);
    assert!(outcome.message.as_deref().unwrap().contains("ns/bare"));
}

#[test]
fn a_metadata_only_update_keeps_what_the_snapshot_knew() {
    let t0 = now();
    let mut full = pod("a", "uid-a");
    full.spec = Some(serde_json::from_value(json!({"containers": [], "priority": 7})).unwrap());
    let mut m = NodeMachine::new(
        "n",
        Arc::new(waves(&["user"])),
        vec![(full, evict(0))],
        false,
        t0,
    );
    m.start(t0);
    assert!(
        !m.waits_for_completion(),
        "metadata is all this drain reads"
    );
    let mut meta = pod("a", "uid-a");
    meta.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        Timestamp::now(),
    ));
    m.step(Input::Pod(Change::Upsert(Box::new(meta))), t0);
    let end = m.step(Input::Interrupted, t0);
    let outcome = finished(&end).expect("interrupted");
    let a = outcome.pods.iter().find(|p| p.pod == key("a")).unwrap();
    assert_eq!(a.priority, 7, "the spec from the snapshot is kept");
}

#[test]
fn a_pod_left_alone_that_changes_is_not_an_arrival() {
    let t0 = now();
    let daemon = (
        pod("agent", "uid-agent"),
        Disposition::Skip {
            reason: SkipReason::DaemonSet,
        },
    );
    let pods = vec![(pod("a", "uid-a"), evict(0)), daemon];
    let mut m = NodeMachine::new("n", Arc::new(waves(&["user"])), pods, false, t0);
    m.start(t0);
    let changed = pod("agent", "uid-agent");
    m.step(Input::Pod(Change::Upsert(Box::new(changed))), t0);
    let end = m.step(Input::Interrupted, t0);
    let outcome = finished(&end).expect("interrupted");
    let agent: Vec<&PodResult> = outcome
        .pods
        .iter()
        .filter(|p| p.pod == key("agent"))
        .map(|p| &p.result)
        .collect();
    assert_eq!(
        agent,
        [&PodResult::Skipped {
            reason: SkipReason::DaemonSet
        }]
    );
}

#[test]
fn a_forbidden_eviction_does_not_stop_the_others() {
    let (mut d, _) = Drain::new(&[("a", 0), ("b", 0)], waves(&["user"]));
    let a = d.answer(SEC, "a", Answer::Forbidden("no".into()));
    assert!(finished(&a).is_none(), "b's eviction is still in flight");
    d.answer(SEC, "b", Answer::Accepted);
    let end = d.gone(2 * SEC, "b");
    let outcome = finished(&end).expect("nothing else can move");
    assert_eq!(outcome.status, NodeStatus::Failed);
    assert!(
        outcome
            .message
            .as_deref()
            .unwrap()
            .contains("not allowed to create pods/eviction in namespace ns"),
        "{outcome:?}"
    );
    assert_eq!(result(outcome, "b"), PodResult::Evicted);
    assert!(matches!(
        result(outcome, "a"),
        PodResult::Remaining {
            cause: Cause::Forbidden { .. }
        }
    ));
}

#[test]
fn a_pod_under_two_budgets_fails_at_once() {
    let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
    let end = d.answer(SEC, "a", Answer::MultiplePdbs("more than one".into()));
    let outcome = finished(&end).expect("failed without a retry");
    assert_eq!(outcome.status, NodeStatus::Failed);
    assert!(matches!(
        result(outcome, "a"),
        PodResult::Remaining {
            cause: Cause::MultiplePdbs { .. }
        }
    ));
}

#[test]
fn a_pod_blocked_again_by_the_same_budget_is_told_once() {
    let blocked = |effects: &[Effect]| {
        effects
            .iter()
            .filter(|e| matches!(e, Effect::Emit(Event::Blocked { .. })))
            .count()
    };
    let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
    let mut told = blocked(&d.answer(SEC, "a", refusal("web", None)));
    told += blocked(&d.allows(2 * SEC, "web", 1));
    told += blocked(&d.answer(3 * SEC, "a", refusal("web", None)));
    told += blocked(&d.allows(4 * SEC, "web", 0));
    assert_eq!(told, 1, "one line per pod per change of cause");
}

/// A responder's words are its progress: each new one is told (the
/// screen names the pod in them while it waits), the same one once.
#[test]
fn a_responders_new_words_are_told_and_the_same_once() {
    let said = |effects: &[Effect]| -> Vec<String> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Emit(Event::Blocked {
                    cause:
                        Cause::HandedOver {
                            progress: message, ..
                        },
                    ..
                }) => Some(message.clone()),
                _ => None,
            })
            .collect()
    };
    let responding = |responder: &str, message: &str| Answer::Responding {
        responder: responder.into(),
        message: message.into(),
        retry_after: Some(SEC),
    };
    let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
    let mut told = said(&d.answer(SEC, "a", responding("", "not yet taken")));
    told.extend(said(&d.answer(
        2 * SEC,
        "a",
        responding("mover", "copying 10%"),
    )));
    told.extend(said(&d.answer(
        3 * SEC,
        "a",
        responding("mover", "copying 10%"),
    )));
    told.extend(said(&d.answer(
        4 * SEC,
        "a",
        responding("mover", "copying 60%"),
    )));
    assert_eq!(told, ["not yet taken", "copying 10%", "copying 60%"]);
}

/// While the evicted pods' volumes detach, the last wave stays the running
/// one and every input advances the waves again: it is told done once.
#[test]
fn the_last_wave_is_told_done_once_while_its_volumes_detach() {
    let settings = Settings {
        detach_wait: Some(60 * SEC),
        ..waves(&["user"])
    };
    let db: Pod = serde_json::from_value(json!({
        "metadata": {"name": "db", "namespace": "ns", "uid": "uid-db"},
        "spec": {"containers": [], "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}
        ]},
    }))
    .expect("pod");
    let t0 = Instant::now();
    let at = |offset| Now {
        at: t0 + offset,
        wall: Timestamp::now(),
    };
    let mut m = NodeMachine::new(
        "n",
        Arc::new(settings),
        vec![(db, evict(0))],
        false,
        at(Duration::ZERO),
    );
    let mut effects = m.start(at(Duration::ZERO));
    let answer = Input::Answer {
        key: key("db"),
        uid: "uid-db".into(),
        answer: Answer::Accepted,
        evacuation: None,
    };
    effects.extend(m.step(answer, at(SEC)));
    let gone = Input::Pod(Change::Gone {
        key: key("db"),
        uid: "uid-db".into(),
    });
    effects.extend(m.step(gone, at(2 * SEC)));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::AwaitDetach { .. })),
        "{effects:?}"
    );
    effects.extend(m.step(Input::Tick, at(3 * SEC)));
    effects.extend(m.step(Input::Tick, at(4 * SEC)));
    let told = effects
        .iter()
        .filter(|e| matches!(e, Effect::Emit(Event::WaveDone { .. })))
        .count();
    assert_eq!(told, 1, "{effects:?}");
}

fn surges(effects: &[Effect]) -> usize {
    effects
        .iter()
        .filter(|e| matches!(e, Effect::Surge { .. }))
        .count()
}

/// A `--surge` drain of pod "a" behind budget "solo": refused once, its
/// surge asked and answered "not needed yet" (the budget counted a
/// terminating pod).
fn surge_not_needed_yet() -> Drain {
    let settings = Settings {
        surge: true,
        ..waves(&["user"])
    };
    let (mut d, _) = Drain::new(&[("a", 0)], settings);
    assert_eq!(surges(&d.answer(SEC / 10, "a", refusal("solo", None))), 1);
    d.at(
        SEC / 5,
        Input::Surged {
            key: key("a"),
            result: Ok(None),
        },
    );
    d
}

/// The scale-down case of #53: a one-replica Deployment behind
/// `minAvailable: 1` while its old pod still stops counts two expected
/// pods, so no surge is needed yet; once the old pod is gone the budget
/// says it never allows, and the surge is asked then, not at a refusal
/// 20 s later.
#[test]
fn a_surge_not_made_is_decided_again_when_the_budget_changes() {
    let mut d = surge_not_needed_yet();
    let change = |expected_pods| Input::Budget {
        key: ("ns".into(), "solo".into()),
        budget: Budget {
            disruptions_allowed: 0,
            current_healthy: 1,
            desired_healthy: 1,
            expected_pods,
            observed: true,
        },
        grant: usize::MAX,
    };
    // Still two pods expected: nothing to decide yet.
    assert_eq!(surges(&d.at(SEC, change(2))), 0);
    // The old pod gone: the budget never allows; the surge is asked now.
    assert_eq!(surges(&d.at(2 * SEC, change(1))), 1);
    // Asked once until answered.
    assert_eq!(surges(&d.at(3 * SEC, change(1))), 0);
}

#[test]
fn a_surge_not_made_is_decided_again_at_the_next_refusal() {
    let mut d = surge_not_needed_yet();
    let retried = d.at(21 * SEC, Input::Tick);
    assert_eq!(evicted(&retried), ["a"], "the fallback retry");
    let second = d.answer(21 * SEC, "a", refusal("solo", None));
    assert_eq!(surges(&second), 1, "asked again with the new facts");
    // Once surged, not again.
    d.at(
        22 * SEC,
        Input::Surged {
            key: key("a"),
            result: Ok(Some("solo".into())),
        },
    );
    d.at(43 * SEC, Input::Tick);
    let third = d.answer(43 * SEC, "a", refusal("solo", None));
    assert_eq!(surges(&third), 0);
}

/// Through EvictionRequests, a pod held by its budget is evicted by the
/// imperative responder on its own when the budget allows, before the
/// drain asks again: it counts as evicted, not as gone by itself.
#[test]
fn a_requested_pod_that_goes_while_held_was_evicted() {
    let settings = Settings {
        by_request: true,
        ..waves(&["user"])
    };
    let (mut d, _) = Drain::new(&[("a", 0), ("b", 0)], settings);
    d.answer(SEC / 10, "a", refusal("web", None));
    d.answer(SEC / 10, "b", Answer::Accepted);
    d.gone(SEC, "b");
    let end = d.gone(2 * SEC, "a");
    let outcome = finished(&end).expect("drained once both are gone");
    assert_eq!(result(outcome, "a"), PodResult::Evicted);
    assert_eq!(result(outcome, "b"), PodResult::Evicted);
}

/// A pod the drain has not acted on that changes in place (its kubelet
/// failing it for a shutdown, say) asks for the node to be read at once;
/// one in flight, or being deleted, does not.
#[test]
fn a_pod_changed_in_place_by_another_asks_for_the_node_at_once() {
    let t0 = now();
    let pods = vec![
        (pod("now", "uid-now"), evict(0)),
        (pod("later", "uid-later"), evict(1)),
    ];
    let mut m = NodeMachine::new("n", Arc::new(waves(&["first", "second"])), pods, false, t0);
    let started = m.start(t0);
    assert_eq!(evicted(&started), ["now"]);
    assert!(!m.take_health_due());
    m.step(
        Input::Pod(Change::Upsert(Box::new(pod("now", "uid-now")))),
        t0,
    );
    assert!(!m.take_health_due(), "in flight: the drain's own doing");
    let mut deleted = pod("later", "uid-later");
    deleted.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::now()),
    );
    m.step(Input::Pod(Change::Upsert(Box::new(deleted))), t0);
    assert!(!m.take_health_due(), "being deleted");
    let mut failed = pod("later", "uid-later");
    failed.metadata.resource_version = Some("9".into());
    m.step(Input::Pod(Change::Upsert(Box::new(failed))), t0);
    assert!(m.take_health_due(), "changed in place, not by the drain");
    assert!(!m.take_health_due(), "taken once");
}

/// A node whose kubelet begins a graceful shutdown fails its pods, which
/// the API then lets go whatever their budgets say: a pod a budget holds
/// is asked again at once, marked free of its budget's turn.
#[test]
fn a_shutdown_asks_again_at_once_for_the_pods_a_budget_holds() {
    let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
    d.answer(SEC, "a", refusal("web", None));
    let down = crate::policy::node_health::NodeDown {
        ready: "False".into(),
        reason: crate::policy::node_health::SHUTTING_DOWN.into(),
        since: None,
        kubelet_last_heard: None,
        taints: Vec::new(),
    };
    let asked = d.at(2 * SEC, Input::NodeHealth(Some(down)));
    let free: Vec<bool> = asked
        .iter()
        .filter_map(|e| match e {
            Effect::Evict(e) => Some(e.budget_free),
            _ => None,
        })
        .collect();
    assert_eq!(
        free,
        [true],
        "asked again at once, free of the budget's turn"
    );
}

/// What the API lets go without its budget goes without waiting for the
/// budget's turn: a pod already failed, for one.
#[test]
fn a_failed_pod_is_asked_for_without_the_budgets_turn() {
    let t0 = now();
    let mut failed = pod("done", "uid-done");
    failed.status = Some(k8s_openapi::api::core::v1::PodStatus {
        phase: Some("Failed".into()),
        ..Default::default()
    });
    let mut m = NodeMachine::new(
        "n",
        Arc::new(waves(&["user"])),
        vec![(failed, evict(0)), (pod("up", "uid-up"), evict(0))],
        false,
        t0,
    );
    let started = m.start(t0);
    let free: Vec<(String, bool)> = started
        .iter()
        .filter_map(|e| match e {
            Effect::Evict(e) => Some((e.key.name.clone(), e.budget_free)),
            _ => None,
        })
        .collect();
    assert_eq!(free, [("done".into(), true), ("up".into(), false)]);
}
