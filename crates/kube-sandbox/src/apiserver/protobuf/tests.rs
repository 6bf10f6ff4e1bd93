use serde_json::json;

use super::wire::write::{bytes, number};
use super::*;

/// A body as kubectl sends it: the magic, then `runtime.Unknown`.
fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::new();
    bytes(1, api_version.as_bytes(), &mut type_meta);
    bytes(2, kind.as_bytes(), &mut type_meta);
    let mut body = MAGIC.to_vec();
    bytes(1, &type_meta, &mut body);
    bytes(2, raw, &mut body);
    bytes(4, CONTENT_TYPE.as_bytes(), &mut body);
    body
}

fn entry(field: u64, key: &str, value: &[u8], out: &mut Vec<u8>) {
    let mut e = Vec::new();
    bytes(1, key.as_bytes(), &mut e);
    bytes(2, value, &mut e);
    bytes(field, &e, out);
}

#[test]
fn delete_options_decode_as_their_json() {
    let mut pre = Vec::new();
    bytes(1, b"uid-1", &mut pre);
    let mut raw = Vec::new();
    number(1, 7, &mut raw);
    bytes(2, &pre, &mut raw);
    bytes(5, b"All", &mut raw);
    assert_eq!(
        decode(&envelope("v1", "DeleteOptions", &raw)).unwrap(),
        json!({"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 7,
               "preconditions": {"uid": "uid-1"}, "dryRun": ["All"]})
    );
    assert!(matches!(decode(b"{}"), Err(Refused::Malformed(_))));
    assert!(
        matches!(decode(b"k8s\0\x12\x05ab"), Err(Refused::Malformed(_))),
        "truncated"
    );
}

/// A Deployment as `kubectl create deployment web --image=nginx
/// --replicas=2` writes it: zero-valued fields on the wire, an unset
/// creationTimestamp as Go's zero time, a status of zeros.
#[test]
fn a_created_deployment_reads_as_its_json_without_the_zeros() {
    let mut zero_time = Vec::new();
    number(1, GO_ZERO_TIME as u64, &mut zero_time);
    let mut meta = Vec::new();
    bytes(1, b"web", &mut meta);
    bytes(3, b"", &mut meta);
    bytes(8, &zero_time, &mut meta);
    entry(11, "app", b"web", &mut meta);
    let mut selector = Vec::new();
    entry(1, "app", b"web", &mut selector);
    let mut limits = Vec::new();
    bytes(1, b"250m", &mut limits);
    let mut resources = Vec::new();
    entry(1, "cpu", &limits, &mut resources);
    let mut container = Vec::new();
    bytes(1, b"nginx", &mut container);
    bytes(2, b"nginx", &mut container);
    bytes(5, b"", &mut container);
    bytes(8, &resources, &mut container);
    number(16, 0, &mut container);
    let mut pod_spec = Vec::new();
    bytes(2, &container, &mut pod_spec);
    let mut template_meta = Vec::new();
    entry(11, "app", b"web", &mut template_meta);
    let mut template = Vec::new();
    bytes(1, &template_meta, &mut template);
    bytes(2, &pod_spec, &mut template);
    let mut surge = Vec::new();
    number(1, 1, &mut surge);
    bytes(3, b"25%", &mut surge);
    let mut rolling = Vec::new();
    bytes(2, &surge, &mut rolling);
    let mut strategy = Vec::new();
    bytes(2, &rolling, &mut strategy);
    let mut spec = Vec::new();
    number(1, 2, &mut spec);
    bytes(2, &selector, &mut spec);
    bytes(3, &template, &mut spec);
    bytes(4, &strategy, &mut spec);
    number(5, 0, &mut spec);
    let mut status = Vec::new();
    number(1, 0, &mut status);
    number(2, 0, &mut status);
    let mut raw = Vec::new();
    bytes(1, &meta, &mut raw);
    bytes(2, &spec, &mut raw);
    bytes(3, &status, &mut raw);
    assert_eq!(
        decode(&envelope("apps/v1", "Deployment", &raw)).unwrap(),
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx",
                                             "resources": {"limits": {"cpu": "250m"}}}]},
                },
                "strategy": {"rollingUpdate": {"maxSurge": "25%"}},
            },
        })
    );
}

#[test]
fn a_field_the_sandbox_does_not_read_is_refused_when_it_holds_a_value() {
    let mut volume = Vec::new();
    bytes(1, b"data", &mut volume);
    let mut pod_spec = Vec::new();
    bytes(1, &volume, &mut pod_spec);
    let mut raw = Vec::new();
    bytes(2, &pod_spec, &mut raw);
    let refused = decode(&envelope("v1", "Pod", &raw)).unwrap_err();
    assert!(
        matches!(&refused, Refused::Unread(m) if m.contains("field 1 of PodSpec")),
        "{refused}"
    );
    let refused = decode(&envelope("v1", "Service", b"")).unwrap_err();
    assert!(
        matches!(&refused, Refused::Unread(m) if m.contains("\"Service\"")),
        "{refused}"
    );
    // A PDB's numbers: minAvailable as an int, a secret's bytes as base64.
    let mut min = Vec::new();
    number(2, 1, &mut min);
    let mut spec = Vec::new();
    bytes(1, &min, &mut spec);
    let mut raw = Vec::new();
    bytes(2, &spec, &mut raw);
    assert_eq!(
        decode(&envelope("policy/v1", "PodDisruptionBudget", &raw)).unwrap()["spec"],
        json!({"minAvailable": 1})
    );
    let mut raw = Vec::new();
    entry(2, "password", b"hunter2", &mut raw);
    assert_eq!(
        decode(&envelope("v1", "Secret", &raw)).unwrap()["data"],
        json!({"password": "aHVudGVyMg=="})
    );
}
