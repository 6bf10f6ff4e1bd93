//! Watches through the kube crate: events in order, and recovery from a
//! 410 Expired when the sandbox's history no longer reaches back.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use serde_json::json;

use crate::harness::Cluster;

const ONE_NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";

async fn client(c: &Cluster) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(&c.kubeconfig).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("config");
    kube::Client::try_from(config).expect("client")
}

/// The stream's next event other than a bookmark: its type and pod.
async fn next_change(
    stream: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<Pod>>> + Unpin),
) -> (&'static str, Pod) {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .expect("event in time")
            .expect("no stream error")
            .expect("stream open");
        return match event {
            WatchEvent::Added(p) => ("ADDED", p),
            WatchEvent::Modified(p) => ("MODIFIED", p),
            WatchEvent::Deleted(p) => ("DELETED", p),
            WatchEvent::Bookmark(_) => continue,
            WatchEvent::Error(e) => panic!("watch error {e:?}"),
        };
    }
}

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default",
            "annotations": {"sandbox.kubectl-maintain.io/shutdown-seconds": "0"}},
        "spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 0, "containers": [{"name": "c", "image": "x"}]}
    }))
    .expect("pod")
}

#[test]
fn watch_sees_added_modified_deleted_in_order() {
    let c = Cluster::start(ONE_NODE, 33);
    c.runtime().block_on(async {
        let api: Api<Pod> = Api::namespaced(client(&c).await, "default");
        let list = api
            .list(&kube::api::ListParams::default())
            .await
            .expect("list");
        let rv = list
            .metadata
            .resource_version
            .expect("list has a resourceVersion");
        assert!(!rv.is_empty());
        let mut stream = api
            .watch(&WatchParams::default().timeout(30), &rv)
            .await
            .expect("watch")
            .boxed();
        api.create(&PostParams::default(), &pod("w"))
            .await
            .expect("create");
        api.patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .expect("patch");
        api.delete("w", &DeleteParams::default())
            .await
            .expect("delete");

        let mut seen = Vec::new();
        let mut last_rv = 0u64;
        while seen.len() < 5 {
            let (kind, p) = next_change(&mut stream).await;
            let rv: u64 = p
                .metadata
                .resource_version
                .as_deref()
                .expect("rv")
                .parse()
                .expect("numeric rv");
            assert!(rv > last_rv, "resourceVersions rise");
            last_rv = rv;
            seen.push(kind);
            if kind == "DELETED" {
                break;
            }
        }
        // The kubelet's own status write (Running, Ready) is a MODIFIED too.
        assert_eq!(seen.first(), Some(&"ADDED"));
        assert_eq!(seen.last(), Some(&"DELETED"));
        assert!(seen.contains(&"MODIFIED"));
    });
}

#[test]
fn watcher_relists_after_expired_and_misses_nothing() {
    // Streams are cut after three events, so the watcher keeps resuming
    // from its last version; halfway the sandbox drops its history (as etcd
    // compaction does), so that version is too old and it must list again.
    let c = Cluster::start_with(ONE_NODE, 33, |cfg| {
        cfg.faults.watch_cut_after = 3;
    });
    c.runtime().block_on(async {
        let api: Api<Pod> = Api::namespaced(client(&c).await, "default");
        let (reader, writer) = reflector::store::<Pod>();
        let stream = reflector(writer, watcher(api.clone(), watcher::Config::default()))
            .default_backoff()
            .applied_objects();
        let handle = tokio::spawn(async move {
            futures::pin_mut!(stream);
            while stream.next().await.is_some() {}
        });
        reader.wait_until_ready().await.expect("reflector ready");
        for i in 0..12 {
            api.create(&PostParams::default(), &pod(&format!("p{i}")))
                .await
                .expect("create");
            if i == 5 {
                c.sandbox.compact_history();
            }
        }
        for i in 0..12 {
            if i % 3 == 0 {
                api.delete(&format!("p{i}"), &DeleteParams::default())
                    .await
                    .expect("delete");
            }
        }
        let want: std::collections::BTreeSet<String> = (0..12)
            .filter(|i| i % 3 != 0)
            .map(|i| format!("p{i}"))
            .collect();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let have: std::collections::BTreeSet<String> = reader
                .state()
                .iter()
                .filter_map(|p| p.metadata.name.clone())
                .collect();
            if have == want {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "reflector has {have:?}, want {want:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        handle.abort();
    });
    let lists = c
        .requests()
        .into_iter()
        .filter(|r| {
            r.path == "/api/v1/namespaces/default/pods"
                && r.method == "GET"
                && !r.query.contains("watch=true")
        })
        .count();
    assert!(
        lists >= 2,
        "the watcher listed again after 410 Expired ({lists} lists): {:#?}",
        c.requests()
            .iter()
            .map(|r| format!("{} {}?{} {}", r.method, r.path, r.query, r.status))
            .collect::<Vec<_>>()
    );
}

/// A watch-list (`sendInitialEvents`, as recent client-go and kube informers
/// start): the current objects, then the bookmark that ends them, so the
/// informer's initial sync finishes instead of waiting forever.
#[test]
fn a_streaming_list_ends_its_initial_events() {
    let c = Cluster::start(ONE_NODE, 33);
    c.runtime().block_on(async {
        let api: Api<Pod> = Api::namespaced(client(&c).await, "default");
        for name in ["a", "b"] {
            api.create(&PostParams::default(), &pod(name))
                .await
                .expect("create");
        }
        let config = watcher::Config::default().streaming_lists();
        let mut events = watcher(api, config).boxed();
        let mut initial = Vec::new();
        let done = tokio::time::timeout(Duration::from_secs(5), async {
            while let Some(e) = events.try_next().await.expect("watch") {
                match e {
                    watcher::Event::InitApply(p) => {
                        initial.push(p.metadata.name.unwrap_or_default());
                    }
                    watcher::Event::InitDone => return true,
                    _ => {}
                }
            }
            false
        })
        .await;
        assert_eq!(done, Ok(true), "the initial-events-end bookmark came");
        initial.sort();
        assert_eq!(initial, ["a", "b"]);
    });
    // The rules around it, as the apiserver enforces them.
    let bad = c.kubectl(&[
        "get",
        "--raw",
        "/api/v1/pods?watch=true&sendInitialEvents=true",
    ]);
    assert!(
        bad.stderr
            .contains("sendInitialEvents requires setting resourceVersionMatch"),
        "{bad:?}"
    );
}

/// A pod watch of one node (`spec.nodeName=n1`, as each node's drain
/// keeps one) hears of that node's pods only, and, as kube-apiserver's
/// watch cache feeds such a watch by its trigger, the churn of other nodes
/// beyond the whole history does not make it too old.
#[test]
fn a_node_pod_watch_hears_its_node_only_and_outlives_other_nodes_churn() {
    let two = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n";
    let c = Cluster::start_with(two, 33, |cfg| cfg.watch_history = 20);
    c.runtime().block_on(async {
        let api: Api<Pod> = Api::namespaced(client(&c).await, "default");
        let on = |name: &str, node: &str| {
            let mut p = pod(name);
            p.spec.as_mut().expect("spec").node_name = Some(node.to_string());
            p
        };
        let rv = api
            .list(&kube::api::ListParams::default())
            .await
            .expect("list")
            .metadata
            .resource_version
            .expect("rv");
        let params = WatchParams::default()
            .fields("spec.nodeName=n1")
            .timeout(30);
        let mut stream = api.watch(&params, &rv).await.expect("watch").boxed();
        // More changes on n2 than the history keeps.
        for i in 0..25 {
            let p = on(&format!("other{i}"), "n2");
            api.create(&PostParams::default(), &p)
                .await
                .expect("create");
        }
        api.create(&PostParams::default(), &on("mine", "n1"))
            .await
            .expect("create");
        api.delete("mine", &DeleteParams::default())
            .await
            .expect("delete");
        let mut seen = Vec::new();
        while seen.last().is_none_or(|(kind, _)| *kind != "DELETED") {
            let (kind, p) = next_change(&mut stream).await;
            seen.push((kind, p.metadata.name.unwrap_or_default()));
        }
        assert!(
            seen.iter().all(|(_, name)| name == "mine"),
            "only n1's pod: {seen:?}"
        );
        assert_eq!(seen.first().map(|(k, _)| *k), Some("ADDED"), "{seen:?}");
    });
}
