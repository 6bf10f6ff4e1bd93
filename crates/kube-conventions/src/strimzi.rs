//! Strimzi's Drain Cleaner, as both sides read it: the plugin, which waits
//! for the Strimzi Cluster Operator to roll a pod whose eviction the
//! webhook refused, and the sandbox, which plays the webhook
//! (strimzi/drain-cleaner, src/main/java/io/strimzi/ValidatingWebhook.java).

/// The annotation the Drain Cleaner sets and the operator acts on.
pub const ROLL: &str = "strimzi.io/manual-rolling-update";

/// The Kafka cluster of a pod the Drain Cleaner takes evictions of, from
/// its `strimzi.io/kind` and `strimzi.io/name` labels: kind `Kafka`, a
/// name ending in `-kafka` (a broker) or `-zookeeper` after the cluster's.
pub fn drain_cleaner_cluster<'a>(kind: Option<&str>, name: Option<&'a str>) -> Option<&'a str> {
    if kind != Some("Kafka") {
        return None;
    }
    let name = name?;
    [name.strip_suffix("-kafka"), name.strip_suffix("-zookeeper")]
        .into_iter()
        .flatten()
        .find(|cluster| !cluster.is_empty())
}

#[cfg(test)]
mod tests {
    use super::drain_cleaner_cluster as cluster;

    #[test]
    fn the_drain_cleaner_takes_kafka_and_zookeeper_pods_alone() {
        assert_eq!(
            cluster(Some("Kafka"), Some("my-cluster-kafka")),
            Some("my-cluster")
        );
        assert_eq!(
            cluster(Some("Kafka"), Some("my-cluster-zookeeper")),
            Some("my-cluster")
        );
        assert_eq!(
            cluster(Some("Kafka"), Some("my-cluster-entity-operator")),
            None
        );
        assert_eq!(cluster(Some("Kafka"), Some("-kafka")), None);
        assert_eq!(
            cluster(Some("KafkaConnect"), Some("my-connect-kafka")),
            None
        );
        assert_eq!(cluster(None, Some("my-cluster-kafka")), None);
        assert_eq!(cluster(Some("Kafka"), None), None);
    }
}
