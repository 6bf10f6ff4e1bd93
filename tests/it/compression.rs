//! Large answers come gzipped, as kube-apiserver sends them to clients that
//! accept gzip (over 128 KiB, not watches), to the real kubectl and to our
//! drain alike; `--disable-compression` turns it off for both.

use kube_sandbox::request_log::Entry;

use crate::harness::Cluster;
use crate::pool::pool;

/// The PodDisruptionBudgets listed across namespaces by the latest such
/// request of a client whose User-Agent contains `agent`.
fn budget_list(c: &Cluster, agent: &str) -> Entry {
    c.requests()
        .into_iter()
        .rev()
        .find(|e| {
            e.method == "GET"
                && e.path == "/apis/policy/v1/poddisruptionbudgets"
                && !e.query.contains("watch=")
                && e.user_agent.contains(agent)
        })
        .unwrap_or_else(|| panic!("no list of every budget by {agent}"))
}

#[test]
fn large_lists_come_gzipped_unless_compression_is_disabled() {
    // 300 budgets of about 600 bytes: a list of every budget is over 128 KiB.
    let mut s = pool(&[("n0", "a"), ("n1", "b")], 2, 4, "maxUnavailable: 1");
    for i in 0..300 {
        s = s.pdb(&format!("idle-{i:03}"), "minAvailable: 1");
    }
    // Over HTTPS: client-go hands plain HTTP to Go's default transport,
    // which asks for gzip whatever --disable-compression says.
    let c = Cluster::start(&s.yaml(), 33);
    c.wait_settled();

    for minor in [27, 33] {
        let listed = c.kubectl_minor(minor, &["get", "pdb", "-A", "-o", "name"]);
        listed.success();
        assert_eq!(listed.stdout.lines().count(), 301, "{listed:?}");
        let zipped = budget_list(&c, "kubectl");
        assert_eq!(zipped.content_encoding, "gzip", "{zipped:?}");
        let plain = ["get", "pdb", "-A", "-o", "name", "--disable-compression"];
        c.kubectl_minor(minor, &plain).success();
        let plain = budget_list(&c, "kubectl");
        assert_eq!(plain.content_encoding, "", "{plain:?}");
        assert!(
            zipped.response_bytes * 4 < plain.response_bytes,
            "{zipped:?} {plain:?}"
        );
    }

    let drain = ["drain", "-l", "pool=blue", "--max-parallel", "2"];
    let tail = ["--ignore-daemonsets", "--timeout", "60s"];
    c.maintain(&[&drain[..], &tail[..], &["--disable-compression"]].concat())
        .success();
    assert_eq!(budget_list(&c, "kubectl-maintain").content_encoding, "");
    c.maintain(&["uncordon", "n0", "n1"]).success();
    c.maintain(&[&drain[..], &tail[..]].concat()).success();
    let ours = budget_list(&c, "kubectl-maintain");
    assert_eq!(ours.content_encoding, "gzip", "{ours:?}");
    // Watches are never compressed.
    let watches: Vec<Entry> = c
        .requests()
        .into_iter()
        .filter(|e| e.query.contains("watch="))
        .collect();
    assert!(!watches.is_empty());
    assert!(watches.iter().all(|e| e.content_encoding.is_empty()));
}
