//! `--in-cluster` (issue #30, first part): the objects a run in the cluster
//! is made of, rendered for GitOps and accepted by the API server as the
//! real kubectl applies them, applied with the submitter recorded, kept
//! away from the nodes they take, and cleaned up.

use std::time::Duration;

use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;

use crate::harness::Cluster;
use crate::pool::four_nodes;

pub(crate) const ROLL: [&str; 7] = [
    "roll",
    "-l",
    "pool=blue",
    "--ignore-daemonsets",
    "--in-cluster",
    "--timeout",
    "10m",
];

fn rules_of(c: &Cluster, name: &str) -> String {
    c.get(Resource::ClusterRoles, "", name)
        .map(|r| r["rules"].to_string())
        .unwrap_or_default()
}

/// The Job a submission names.
pub(crate) fn run_name(out: &str) -> String {
    let at = out.find("job.batch/").expect("the Job named") + "job.batch/".len();
    out[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches(':')
        .to_string()
}

#[test]
fn render_applies_nothing_and_the_real_kubectl_server_dry_run_accepts_it() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let mut args = ROLL.to_vec();
    args.extend([
        "--render",
        "--surge",
        "--taint",
        "maintenance=roll:NoExecute",
    ]);
    let before = c.requests().len();
    let out = c.maintain(&args);
    out.success();
    assert_eq!(c.requests().len(), before, "--render asks the API nothing");
    let file = c.dir.path().join("run.yaml");
    std::fs::write(&file, &out.stdout).unwrap();
    let apply = c.kubectl_minor(
        33,
        &["apply", "--dry-run=server", "-f", file.to_str().unwrap()],
    );
    apply.success();
    for kind in [
        "serviceaccount",
        "clusterrole.rbac.authorization.k8s.io",
        "clusterrolebinding.rbac.authorization.k8s.io",
        "configmap",
        "job.batch",
    ] {
        assert!(
            apply
                .stdout
                .contains(&format!("{kind}/kubectl-maintain-roll-")),
            "{apply:?}"
        );
    }
    assert!(c.sandbox.view().list(Resource::ServiceAccounts).is_empty());
    assert!(out.stdout.contains("system-cluster-critical"), "{out:?}");
    assert!(
        out.stdout.contains("key: maintenance"),
        "a toleration of its own taint: {out:?}"
    );
}

#[test]
fn a_submitted_roll_is_recorded_kept_away_from_its_pool_and_cleaned_up() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let mut roll = ROLL.to_vec();
    roll.push("--surge");
    let out = c.maintain(&roll);
    out.success();
    let name = run_name(&out.stderr);
    assert!(out.stderr.contains("kubectl maintain status -w"), "{out:?}");
    let job = c
        .get(Resource::Jobs, "kube-system", &name)
        .expect("the Job");
    assert_eq!(
        job["metadata"]["annotations"]["kubectl-maintain.io/submitted-by"],
        "kubernetes-admin"
    );
    // --timeout bounds each node: a roll's Job has no deadline of its own.
    assert!(job["spec"].get("activeDeadlineSeconds").is_none(), "{job}");
    assert_eq!(
        job["spec"]["template"]["spec"]["restartPolicy"],
        "OnFailure"
    );
    let args = job["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(
        !args.contains("--in-cluster") && args.contains("--yes"),
        "{args}"
    );
    let events = c.kubectl(&[
        "-n",
        "kube-system",
        "get",
        "events",
        "--field-selector",
        "reason=Submitted",
    ]);
    assert!(
        events.stdout.contains("submitted by kubernetes-admin"),
        "{events:?}"
    );
    // Its pod runs on a node the roll does not take.
    c.wait_for("the Job's pod bound", Duration::from_secs(10), |c| {
        c.pods().iter().any(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .starts_with(&name)
                && pods::node_name(p).is_some_and(|n| n.starts_with("spare"))
        })
    });

    // A drain needs less than a roll with --surge.
    let drain = c.maintain(&["drain", "r1", "--ignore-daemonsets", "--in-cluster"]);
    drain.success();
    let drain_name = run_name(&drain.stderr);
    let (roll_rules, drain_rules) = (rules_of(&c, &name), rules_of(&c, &drain_name));
    assert!(
        roll_rules.contains("deployments") && roll_rules.contains("\"create\""),
        "{roll_rules}"
    );
    assert!(
        !drain_rules.contains("deployments") && !drain_rules.contains("\"create\",\"update\""),
        "{drain_rules}"
    );

    // --cleanup with the same flags removes what it made but the Job.
    roll.push("--cleanup");
    c.maintain(&roll).success();
    assert!(c.get(Resource::ClusterRoles, "", &name).is_none());
    assert!(c.get(Resource::ClusterRoleBindings, "", &name).is_none());
    assert!(
        c.get(Resource::ServiceAccounts, "kube-system", &name)
            .is_none()
    );
    assert!(c.get(Resource::Jobs, "kube-system", &name).is_some());
    assert!(c.get(Resource::ClusterRoles, "", &drain_name).is_some());
}

#[test]
fn what_cannot_run_in_a_pod_is_refused_before_any_request() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let before = c.requests().len();
    for extra in [&["--exec", "reboot"][..], &["--dry-run"], &["--simulate"]] {
        let mut args = ROLL.to_vec();
        args.extend(extra);
        let out = c.maintain(&args);
        assert_eq!(out.code, 2, "{extra:?}: {out:?}");
    }
    let plan = c.maintain(&["plan", "r1", "--in-cluster"]);
    assert_eq!(plan.code, 2, "{plan:?}");
    assert_eq!(c.requests().len(), before);
}
