//! `resource.Quantity` as Kubernetes writes it (`500m`, `2`, `1Gi`, `1.5e3`,
//! `128974848`), read into thousandths so that CPU and bytes share one
//! integer type (k8s.io/apimachinery/pkg/api/resource/quantity.go: decimal
//! SI suffixes, binary `Ki`..`Ei`, and decimal exponents). A fraction of a
//! thousandth rounds up, as the apiserver rounds requests up.

/// A quantity in thousandths: `500m` is 500, `1` is 1000, `1Ki` is 1_024_000.
pub fn parse_milli(s: &str) -> Option<i64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    if number.is_empty() {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let scale: f64 = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e if e.starts_with(['e', 'E']) => 10f64.powi(e[1..].parse().ok()?),
        _ => return None,
    };
    let milli = (value * scale * 1000.0).ceil();
    (milli.is_finite() && milli.abs() < i64::MAX as f64).then_some(milli as i64)
}

/// A quantity as JSON carries it: a string, or (in hand-written YAML) a number.
pub fn milli_of(v: &serde_json::Value) -> Option<i64> {
    match v {
        serde_json::Value::String(s) => parse_milli(s),
        serde_json::Value::Number(n) => n.as_f64().and_then(|f| parse_milli(&f.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_as_the_apiserver_reads_them() {
        assert_eq!(parse_milli("500m"), Some(500));
        assert_eq!(parse_milli("2"), Some(2000));
        assert_eq!(parse_milli("0.1"), Some(100));
        assert_eq!(parse_milli("1Ki"), Some(1_024_000));
        assert_eq!(parse_milli("1Gi"), Some(1_073_741_824_000));
        assert_eq!(parse_milli("128M"), Some(128_000_000_000));
        assert_eq!(parse_milli("1.5e3"), Some(1_500_000));
        assert_eq!(parse_milli("1.0001m"), Some(2), "a fraction rounds up");
        assert_eq!(milli_of(&serde_json::json!(4)), Some(4000));
        for bad in ["", "m", "1x", "Gi"] {
            assert_eq!(parse_milli(bad), None, "{bad}");
        }
    }
}
