//! A JSON pointer read without allocating. serde_json's `Value::pointer`
//! unescapes every token into a new String (`~1`, `~0`), which made it most
//! of the scheduler's cost on a 5,000-node cluster: each replacement pod's
//! filters read a few paths of hundreds of nodes. `at` allocates only for
//! a token that has an escape; the whole sandbox reads pointers with it.

use serde_json::Value;

pub(crate) trait At {
    /// The value at a JSON pointer (RFC 6901), as `Value::pointer`.
    fn at(&self, pointer: &str) -> Option<&Value>;
}

impl At for Value {
    fn at(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/').try_fold(self, |target, token| {
            if token.contains('~') {
                let token = token.replace("~1", "/").replace("~0", "~");
                step(target, &token)
            } else {
                step(target, token)
            }
        })
    }
}

fn step<'a>(target: &'a Value, token: &str) -> Option<&'a Value> {
    match target {
        Value::Object(map) => map.get(token),
        Value::Array(list) => {
            // As RFC 6901: no leading zeros, no sign.
            if token.starts_with('+') || (token.len() > 1 && token.starts_with('0')) {
                return None;
            }
            list.get(token.parse::<usize>().ok()?)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_pointer_reads() {
        let v = json!({"a": {"b/c": [1, {"d~e": 2}], "": 3}});
        for p in [
            "",
            "/a",
            "/a/b~1c",
            "/a/b~1c/1/d~0e",
            "/a/b~1c/0",
            "/a/",
            "/x",
            "/a/b~1c/01",
            "/a/b~1c/9",
            "a",
        ] {
            assert_eq!(v.at(p), v.pointer(p), "{p}");
        }
    }
}
