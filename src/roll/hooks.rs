//! Hooks: other operators finish their work before the roll goes on, by
//! Rancher's value-echo handshake on the Node. At each point (`preDrain`
//! before the cordon, `postAction` after the action, `preUncordon` before
//! the uncordon) the roll writes `kubectl-maintain.io/<point>:
//! <roll>/<attempt>` (the attempt is when this run began, so every run
//! writes a new value and a value left by an old run never counts), then
//! waits until every hook's annotation holds the same value, each for its
//! own `timeout`; past it, `onTimeout: fail` leaves the node blocked with
//! the hook named, `continue` warns and goes on.
//!
//! With `--draino-pre-activities`, draino's pre-activity annotations on the
//! Node (`node-lifecycle.datadoghq.com/pre-activity-<name>`: `done`,
//! `failed`, anything else is in progress; its timeout from
//! `…/timeout-pre-activity-<name>`, else 10 minutes, as draino's
//! PreActivitiesPreProcessor reads them) are waited on at `preDrain` the
//! same way, and set back to "" once the node is back, as draino resets them.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;
use tokio::time::Instant;

use super::Ctx;
use super::stop::{Blocked, Stop};
use super::wait::{self, Check, Waited, Wake};
use crate::policy::maintenance::FIELD_MANAGER;
use crate::policy::plan::model::{HookPoint, OnTimeout};
use crate::vocabulary::api_error::api_error;
use crate::vocabulary::events::{Event, emit};
use crate::vocabulary::warning::Warning;

const DRAINO_PREFIX: &str = "node-lifecycle.datadoghq.com/pre-activity-";
const DRAINO_TIMEOUT_PREFIX: &str = "node-lifecycle.datadoghq.com/timeout-pre-activity-";
const DRAINO_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What one awaited annotation must say.
#[derive(Debug, Clone, PartialEq)]
enum Wants {
    /// The value written at the point (a plan's hook).
    Echo,
    /// draino's `done` (`failed` fails).
    DrainoDone,
}

#[derive(Debug, Clone)]
struct Awaited {
    annotation: String,
    wants: Wants,
    timeout: Duration,
    on_timeout: OnTimeout,
}

/// Where an awaited annotation stands.
#[derive(Debug, PartialEq)]
enum Answer {
    Yes,
    Failed(String),
    Waiting(String),
}

fn answer(a: &Awaited, annotations: &BTreeMap<String, String>, value: &str) -> Answer {
    let now = annotations.get(&a.annotation).map(String::as_str);
    match (&a.wants, now) {
        (Wants::Echo, Some(v)) if v == value => Answer::Yes,
        (Wants::Echo, Some(v)) => {
            Answer::Waiting(format!("{} is {v:?}, waiting for {value:?}", a.annotation))
        }
        (Wants::Echo, None) => {
            Answer::Waiting(format!("{} not set, waiting for {value:?}", a.annotation))
        }
        (Wants::DrainoDone, Some("done")) => Answer::Yes,
        (Wants::DrainoDone, Some("failed")) => Answer::Failed("draino pre-activity failed".into()),
        (Wants::DrainoDone, v) => Answer::Waiting(format!(
            "{} is {:?}, waiting for \"done\"",
            a.annotation,
            v.unwrap_or_default()
        )),
    }
}

/// draino's pre-activities on a node, with their timeouts.
fn draino_activities(annotations: &BTreeMap<String, String>) -> Vec<Awaited> {
    annotations
        .keys()
        .filter_map(|k| k.strip_prefix(DRAINO_PREFIX).map(|name| (k, name)))
        .map(|(k, name)| Awaited {
            annotation: k.clone(),
            wants: Wants::DrainoDone,
            timeout: annotations
                .get(&format!("{DRAINO_TIMEOUT_PREFIX}{name}"))
                .and_then(|t| crate::duration::parse(t).ok())
                .unwrap_or(DRAINO_TIMEOUT),
            on_timeout: OnTimeout::Fail,
        })
        .collect()
}

fn annotations_of(node: &Node) -> BTreeMap<String, String> {
    node.metadata.annotations.clone().unwrap_or_default()
}

async fn annotate(ctx: &Ctx, node: &str, values: serde_json::Value) -> Result<(), Stop> {
    let api: Api<Node> = Api::all(ctx.clients.main.clone());
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    };
    api.patch_metadata(
        node,
        &params,
        &Patch::Merge(json!({"metadata": {"annotations": values}})),
    )
    .await
    .map_err(|e| Stop::from(api_error("patch", "nodes", None, e)))?;
    Ok(())
}

/// The handshake at `point` for a node: nothing when no hook waits there.
pub(crate) async fn handshake(ctx: &Ctx, node: &str, point: HookPoint) -> Result<(), Stop> {
    let mut awaited: Vec<Awaited> = ctx
        .plan
        .hooks
        .at(point)
        .iter()
        .map(|h| Awaited {
            annotation: h.annotation.clone(),
            wants: Wants::Echo,
            timeout: h.timeout,
            on_timeout: h.on_timeout,
        })
        .collect();
    if point == HookPoint::PreDrain && ctx.unattended.draino {
        let now = ctx
            .nodes
            .get(node)
            .map(|n| annotations_of(&n))
            .unwrap_or_default();
        awaited.extend(draino_activities(&now));
    }
    if awaited.is_empty() {
        return Ok(());
    }
    let value = format!("{}/{}", ctx.roll, ctx.unattended.attempt);
    if awaited.iter().any(|a| a.wants == Wants::Echo) {
        annotate(ctx, node, json!({ point.annotation(): value })).await?;
    }
    let started = Instant::now();
    let result = wait_all(ctx, node, point, &mut awaited, &value, started).await;
    for a in &awaited {
        ctx.hold_ended(Some(node), &a.annotation);
    }
    result
}

async fn wait_all(
    ctx: &Ctx,
    node: &str,
    point: HookPoint,
    awaited: &mut Vec<Awaited>,
    value: &str,
    started: Instant,
) -> Result<(), Stop> {
    while !awaited.is_empty() {
        let deadline = awaited
            .iter()
            .map(|a| started + a.timeout)
            .min()
            .expect("one awaited");
        let nodes = &ctx.nodes;
        let waited = wait::until(
            Wake::Nodes(nodes),
            deadline,
            ctx.interrupt.clone(),
            async || {
                let now = nodes
                    .get(node)
                    .map(|n| annotations_of(&n))
                    .unwrap_or_default();
                let mut waiting = Vec::new();
                let mut i = 0;
                while i < awaited.len() {
                    match answer(&awaited[i], &now, value) {
                        Answer::Yes => {
                            ctx.hold_ended(Some(node), &awaited[i].annotation);
                            awaited.remove(i);
                            continue;
                        }
                        Answer::Failed(why) => {
                            return Ok::<_, Stop>(Check::Done(Some((
                                awaited[i].annotation.clone(),
                                why,
                            ))));
                        }
                        Answer::Waiting(why) => {
                            let why = format!("{} hook: {why}", point.as_str());
                            ctx.hold(Some(node), &awaited[i].annotation, &why);
                            let left = (started + awaited[i].timeout)
                                .saturating_duration_since(Instant::now());
                            waiting.push(format!("{why} ({} left)", crate::duration::human(left)));
                        }
                    }
                    i += 1;
                }
                Ok(if waiting.is_empty() {
                    Check::Done(None)
                } else {
                    Check::Waiting(waiting.join("; "))
                })
            },
            |why| ctx.say(node, "waiting for hooks", why.to_string()),
        )
        .await;
        match waited {
            Ok(None) => return Ok(()),
            Ok(Some((annotation, why))) => {
                return Err(Stop::Blocked(Blocked::Hook {
                    point: point.as_str(),
                    annotation,
                    why,
                }));
            }
            Err(Waited::Interrupted) => return Err(Stop::Interrupted),
            Err(Waited::Failed(stop)) => return Err(stop),
            Err(Waited::TimedOut(_)) => {
                let now = Instant::now();
                let (late, rest): (Vec<Awaited>, Vec<Awaited>) =
                    awaited.drain(..).partition(|a| now >= started + a.timeout);
                *awaited = rest;
                for a in late {
                    ctx.hold_ended(Some(node), &a.annotation);
                    let why = match a.wants {
                        Wants::Echo => format!(
                            "did not echo {value:?} within {}",
                            crate::duration::human(a.timeout)
                        ),
                        Wants::DrainoDone => {
                            format!("not done within {}", crate::duration::human(a.timeout))
                        }
                    };
                    if a.on_timeout == OnTimeout::Fail {
                        return Err(Stop::Blocked(Blocked::Hook {
                            point: point.as_str(),
                            annotation: a.annotation,
                            why,
                        }));
                    }
                    let warning = Warning::HookTimedOut {
                        node: node.to_string(),
                        point: point.as_str(),
                        annotation: a.annotation,
                        why,
                    };
                    emit(&ctx.events, Event::Warning(warning));
                }
            }
        }
    }
    Ok(())
}

/// Sets draino's pre-activities on a node back to "" once it is back in
/// service, as draino does after its drain.
pub(crate) async fn reset_draino(ctx: &Ctx, node: &str) -> Result<(), Stop> {
    if !ctx.unattended.draino {
        return Ok(());
    }
    let now = ctx
        .nodes
        .get(node)
        .map(|n| annotations_of(&n))
        .unwrap_or_default();
    let reset: serde_json::Map<String, serde_json::Value> = draino_activities(&now)
        .into_iter()
        .map(|a| (a.annotation, json!("")))
        .collect();
    if reset.is_empty() {
        return Ok(());
    }
    annotate(ctx, node, serde_json::Value::Object(reset)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn only_this_runs_value_counts() {
        let hook = Awaited {
            annotation: "rook.io/pre-drain".into(),
            wants: Wants::Echo,
            timeout: Duration::from_secs(60),
            on_timeout: OnTimeout::Fail,
        };
        let value = "abc/1700000000000";
        assert_eq!(
            answer(&hook, &map(&[("rook.io/pre-drain", value)]), value),
            Answer::Yes
        );
        // An old run's value never counts.
        assert!(matches!(
            answer(&hook, &map(&[("rook.io/pre-drain", "abc/1600000000000")]), value),
            Answer::Waiting(w) if w.contains("waiting for")
        ));
        assert!(matches!(
            answer(&hook, &map(&[]), value),
            Answer::Waiting(_)
        ));
    }

    #[test]
    fn draino_pre_activities_with_their_timeouts() {
        let node = map(&[
            (
                "node-lifecycle.datadoghq.com/pre-activity-backup",
                "processing",
            ),
            (
                "node-lifecycle.datadoghq.com/timeout-pre-activity-backup",
                "2m",
            ),
            ("node-lifecycle.datadoghq.com/pre-activity-dns", "done"),
            ("other", "x"),
        ]);
        let found = draino_activities(&node);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].timeout, Duration::from_secs(120));
        assert_eq!(found[1].timeout, DRAINO_TIMEOUT);
        assert!(matches!(answer(&found[0], &node, "v"), Answer::Waiting(_)));
        assert_eq!(answer(&found[1], &node, "v"), Answer::Yes);
        let failed = map(&[("node-lifecycle.datadoghq.com/pre-activity-backup", "failed")]);
        assert!(matches!(answer(&found[0], &failed, "v"), Answer::Failed(_)));
    }
}
