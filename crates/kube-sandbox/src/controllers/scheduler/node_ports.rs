//! NodePorts: a host port the pod asks for must be free on the node: no
//! pod there holds the same protocol and port on the same host IP, where
//! an empty or `0.0.0.0` host IP conflicts with every IP (kubernetes
//! pkg/scheduler/framework/plugins/nodeports/node_ports.go and
//! framework.HostPortInfo).

use crate::objects::path::At;
use serde_json::Value;

pub(super) const REASON: &str = "node(s) didn't have free ports for the requested pod ports";

/// (protocol, host IP, port) of each host port a pod asks for.
pub(super) fn host_ports(pod: &Value) -> Vec<(String, String, i64)> {
    ["containers", "initContainers"]
        .iter()
        .filter_map(|f| pod.at(&format!("/spec/{f}")).and_then(Value::as_array))
        .flatten()
        .filter_map(|c| c["ports"].as_array())
        .flatten()
        .filter_map(|p| {
            let port = p["hostPort"].as_i64().filter(|n| *n > 0)?;
            let ip = match p["hostIP"].as_str().unwrap_or_default() {
                "" => "0.0.0.0",
                ip => ip,
            };
            Some((
                p["protocol"].as_str().unwrap_or("TCP").to_string(),
                ip.to_string(),
                port,
            ))
        })
        .collect()
}

fn conflict(a: &(String, String, i64), b: &(String, String, i64)) -> bool {
    a.0 == b.0 && a.2 == b.2 && (a.1 == b.1 || a.1 == "0.0.0.0" || b.1 == "0.0.0.0")
}

/// `wanted` against the ports of the pods already on the node.
pub(super) fn filter<'a>(
    wanted: &[(String, String, i64)],
    on_node: impl Iterator<Item = &'a Value>,
) -> Result<(), String> {
    for other in on_node {
        let used = host_ports(other);
        if wanted.iter().any(|w| used.iter().any(|u| conflict(w, u))) {
            return Err(REASON.into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with_port(port: i64, ip: &str, protocol: &str) -> Value {
        json!({"spec": {"containers": [{"ports": [{"containerPort": 80, "hostPort": port, "hostIP": ip, "protocol": protocol}]}]}})
    }

    #[test]
    fn the_same_port_and_protocol_conflict_unless_on_other_ips() {
        let wanted = host_ports(&with_port(8080, "", "TCP"));
        let taken = with_port(8080, "10.0.0.1", "TCP");
        assert_eq!(filter(&wanted, [&taken].into_iter()), Err(REASON.into()));
        let udp = with_port(8080, "", "UDP");
        assert_eq!(filter(&wanted, [&udp].into_iter()), Ok(()));
        let specific = host_ports(&with_port(8080, "10.0.0.2", "TCP"));
        assert_eq!(filter(&specific, [&taken].into_iter()), Ok(()));
    }
}
