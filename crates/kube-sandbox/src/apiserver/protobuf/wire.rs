//! The protobuf wire format as Kubernetes writes it: varints and
//! length-delimited fields (https://protobuf.dev/programming-guides/encoding/).
//! gogo-protobuf, which generates Kubernetes' marshallers, writes every
//! non-pointer field even when empty, so a field left at its zero value is
//! on the wire and must read as absent.

/// One field's value on the wire.
#[derive(Clone, Copy)]
pub(super) enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// A fixed32 or fixed64, which no Kubernetes message the sandbox reads uses.
    Fixed(u64),
}

/// A body that is not well-formed protobuf.
#[derive(Debug)]
pub(super) struct Malformed;

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Option<u64> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.buf.split_first()?;
            self.buf = rest;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(out);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.buf.len() < n {
            return None;
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(head)
    }

    fn fixed(&mut self, n: usize) -> Option<u64> {
        let bytes = self.take(n)?;
        Some(
            bytes
                .iter()
                .rev()
                .fold(0, |acc, b| acc << 8 | u64::from(*b)),
        )
    }

    fn field(&mut self) -> Option<(u64, Wire<'a>)> {
        let tag = self.varint()?;
        let value = match tag & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => Wire::Fixed(self.fixed(8)?),
            2 => {
                let len = usize::try_from(self.varint()?).ok()?;
                Wire::Bytes(self.take(len)?)
            }
            5 => Wire::Fixed(self.fixed(4)?),
            _ => return None,
        };
        Some((tag >> 3, value))
    }
}

/// The fields of one message, in the order written.
pub(super) fn fields(buf: &[u8]) -> Result<Vec<(u64, Wire<'_>)>, Malformed> {
    let mut r = Reader { buf };
    let mut out = Vec::new();
    while !r.buf.is_empty() {
        out.push(r.field().ok_or(Malformed)?);
    }
    Ok(out)
}

/// Whether a value is its field's zero: 0, false, an empty string or list,
/// or a message whose fields are all zero (gogo writes those too).
pub(super) fn is_zero(value: Wire<'_>) -> bool {
    match value {
        Wire::Varint(v) | Wire::Fixed(v) => v == 0,
        Wire::Bytes(b) => {
            b.is_empty() || fields(b).is_ok_and(|inner| inner.into_iter().all(|(_, v)| is_zero(v)))
        }
    }
}

#[cfg(test)]
pub(super) mod write {
    //! The writer the tests build bodies with.

    pub(crate) fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    pub(crate) fn number(field: u64, v: u64, out: &mut Vec<u8>) {
        varint(field << 3, out);
        varint(v, out);
    }

    pub(crate) fn bytes(field: u64, b: &[u8], out: &mut Vec<u8>) {
        varint(field << 3 | 2, out);
        varint(b.len() as u64, out);
        out.extend_from_slice(b);
    }
}
