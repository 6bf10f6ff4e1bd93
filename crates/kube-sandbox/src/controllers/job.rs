//! Job controller: run pods until `completions` have succeeded, at most
//! `parallelism` at a time; a pod deleted before it finished is replaced.

use crate::objects::path::At;
use serde_json::{Value, json};

use super::template::pod_from_template;
use crate::clock::now_rfc3339;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

pub(crate) fn reconcile(store: &mut Store, key: &Key) {
    let Some(job) = store.get(Resource::Jobs, key) else {
        return;
    };
    if pods::is_terminating(&job) || pods::condition_true(&job, "Complete") {
        return;
    }
    let owned = super::owned_pods(store, &job);
    let completions = job
        .at("/spec/completions")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let parallelism = job
        .at("/spec/parallelism")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let succeeded = owned
        .iter()
        .filter(|p| pods::phase(p) == "Succeeded")
        .count() as i64;
    let failed = owned.iter().filter(|p| pods::phase(p) == "Failed").count() as i64;
    let active = owned
        .iter()
        .filter(|p| !pods::is_terminal(p) && !pods::is_terminating(p))
        .count() as i64;
    let want_active = parallelism.min(completions - succeeded).max(0);
    for _ in active..want_active {
        let _ = super::create_pod(store, &job, pod_from_template(&job, None), "job-controller");
    }
    let now = now_rfc3339();
    let done = succeeded >= completions;
    let _ = store.modify(Resource::Jobs, key, |j| {
        let st = &mut j["status"];
        if st.get("startTime").is_none() {
            st["startTime"] = json!(now);
        }
        st["active"] = json!(want_active.max(active));
        st["succeeded"] = json!(succeeded);
        st["failed"] = json!(failed);
        if done {
            st["active"] = json!(0);
            st["completionTime"] = json!(now);
            pods::set_condition(j, "Complete", "True", "", "", &now);
        }
    });
}
