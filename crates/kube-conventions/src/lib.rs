//! How Kubernetes writes things down, shared by the plugin and the sandbox:
//! object names, label selectors, resource quantities, `metav1.Time` and kubectl's human durations,
//! positions of YAML errors, which pods Strimzi's Drain Cleaner takes, and
//! which pods an eviction lets go without their budgets.

pub mod eviction;
pub mod names;
pub mod quantity;
pub mod selector;
pub mod strimzi;
pub mod time;
pub mod yaml;

/// `1 pod`, `2 pods`: a count with its noun, for messages people read.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// FNV-1a: a stable 64-bit digest (seeded identifiers, a document's or a
/// command's fingerprint).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_read_as_english() {
        assert_eq!(super::count(1, "pod"), "1 pod");
        assert_eq!(super::count(0, "pod"), "0 pods");
        assert_eq!(super::count(2, "disruption"), "2 disruptions");
    }
}
