//! The one home of a pod's eviction: what the driver (crate::drain::driver)
//! calls when a node's machine says to send one, and everything it takes.
//! - `evictor`: the eviction subresource (policy/v1; or, with
//!   `--disable-eviction`, a delete; `--deadline`'s delete) and what its
//!   answer means;
//! - `request`: Kubernetes 1.37's EvictionRequest, tried first when the
//!   cluster serves it (which it does is crate::client::served), falling
//!   back to the subresource;
//! - `gang`: a pod of a group disrupted whole goes with its gang or not at
//!   all; `kubevirt` and `strimzi`: a refused pod whose eviction an
//!   operator took over (KubeVirt evacuating a VM, the Strimzi Cluster
//!   Operator rolling a Kafka pod);
//! - `refusal`: how kube-apiserver words a budget's refusal, read by both.
//!
//! What an answer does to the node's drain is the machine's
//! (crate::drain::machine, `answers`); this module only asks and reads.

pub(crate) mod evictor;
pub(crate) mod gang;
pub(crate) mod kubevirt;
mod refusal;
pub(crate) mod request;
pub(crate) mod strimzi;

pub(crate) use evictor::Evictor;
pub(crate) use refusal::PDB_REFUSAL;

use super::budgets;
use super::context::DrainContext;
use super::machine::{Answer, Input};
use crate::policy::classify::HandledBy;
use crate::vocabulary::pod_key::PodKey;

/// `--deadline`: one delete, budgets bypassed, with the pod's grace period.
pub(super) async fn force(ctx: &DrainContext, key: PodKey, uid: String, grace: i64) -> Input {
    let answer = {
        let _permit = ctx.slots.acquire().await;
        ctx.evictor.force(&key, &uid, grace).await
    };
    Input::Answer {
        key,
        uid,
        answer,
        evacuation: None,
    }
}

/// One eviction, under the drain-wide limit; for a refused pod an
/// operator handles, also whether it has taken the eviction over. A pod of a group
/// disrupted whole goes with the rest of its gang or not at all
/// (`gang`); a grouped pod goes through the eviction
/// subresource, which EvictionRequests do not take it from.
pub(super) async fn pod(
    ctx: &DrainContext,
    key: PodKey,
    uid: String,
    handled_by: Option<HandledBy>,
    group: Option<String>,
) -> Input {
    if let Some(group) = &group
        && ctx.clients.served().await.is_ok_and(|s| s.pod_groups)
    {
        match gang::judge(&ctx.clients.main, &key, group).await {
            gang::Verdict::Held { pdb, message } => {
                let answer = Answer::PdbBlocked {
                    pdb,
                    api_message: message.clone(),
                    message,
                    retry_after: None,
                };
                return Input::Answer {
                    key,
                    uid,
                    answer,
                    evacuation: None,
                };
            }
            gang::Verdict::Together(others) => {
                for (other, other_uid) in others {
                    let _permit = ctx.slots.acquire().await;
                    let _ = ctx.evictor.evict_directly(&other, &other_uid).await;
                }
            }
            gang::Verdict::Alone => {}
        }
    }
    let answer = {
        let _permit = ctx.slots.acquire().await;
        if group.is_some() {
            ctx.evictor.evict_directly(&key, &uid).await
        } else {
            ctx.evictor.evict(&key, &uid, false).await
        }
    };
    if let Some(requests) = &ctx.evictor.requests {
        for warning in requests.take_warnings() {
            ctx.events.warn_once(warning);
        }
    }
    let answer = match answer {
        // A budget's 403 does not name it: looked up, as one selects the pod.
        Answer::PdbBlocked {
            pdb,
            message,
            api_message,
            retry_after,
        } if pdb.is_empty() => {
            let names = budgets::lookup::budgets_selecting(&ctx.clients.main, &key).await;
            match names.and_then(|n| n.into_iter().next()) {
                Some(pdb) => Answer::PdbBlocked {
                    pdb,
                    message,
                    api_message,
                    retry_after,
                },
                None => Answer::Retry {
                    retry_after,
                    message,
                    throttled: false,
                },
            }
        }
        Answer::MultiplePdbs(message) => {
            let names = budgets::lookup::budgets_selecting(&ctx.clients.main, &key).await;
            Answer::MultiplePdbs(match names {
                Some(names) if !names.is_empty() => format!(
                    "{message} (PodDisruptionBudgets {} select it)",
                    names.join(", ")
                ),
                _ => message,
            })
        }
        other => other,
    };
    let evacuation = taken_over(ctx, &key, &answer, handled_by.as_ref()).await;
    Input::Answer {
        key,
        uid,
        answer,
        evacuation,
    }
}

/// Whether the operator that handles a refused pod took its eviction over
/// (KubeVirt evacuating its VM, the Strimzi Cluster Operator rolling it):
/// then the refusal is progress.
async fn taken_over(
    ctx: &DrainContext,
    key: &PodKey,
    answer: &Answer,
    handled_by: Option<&HandledBy>,
) -> Option<crate::vocabulary::outcome::Cause> {
    match (answer, handled_by) {
        (
            Answer::PdbBlocked { .. }
            | Answer::Retry {
                throttled: false, ..
            },
            Some(HandledBy::Strimzi { cluster }),
        ) => strimzi::handed_over(&ctx.clients.main, key, cluster, answer).await,
        (Answer::PdbBlocked { .. }, Some(HandledBy::KubeVirt { vmi })) => {
            match kubevirt::evacuation(&ctx.clients.main, &key.namespace, vmi).await {
                Ok(cause) => cause,
                Err(error) => {
                    ctx.events
                        .warn_once(crate::vocabulary::warning::Warning::CannotReadVms { error });
                    None
                }
            }
        }
        _ => None,
    }
}
