//! W3C trace context, as MCP 2026-07-28 carries it in a request's `_meta`
//! and HTTP in a `traceparent` header.

/// A request's W3C trace context (`traceparent`: version, trace id, parent
/// span id, flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace.
    pub trace_id: u128,
    /// The span the request comes from.
    pub span_id: u64,
    /// Whether the caller records the trace.
    pub sampled: bool,
}

impl TraceParent {
    /// Reads `00-<32 hex>-<16 hex>-<2 hex>` (a later version's first four
    /// fields too); `None` for anything else, or all-zero ids.
    pub fn parse(text: &str) -> Option<TraceParent> {
        let mut parts = text.trim().split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let hex = |s: &str, n: usize| {
            s.len() == n
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if !hex(version, 2) || version == "ff" || (version == "00" && parts.next().is_some()) {
            return None;
        }
        if !hex(trace, 32) || !hex(span, 16) || !hex(flags, 2) {
            return None;
        }
        let trace_id = u128::from_str_radix(trace, 16).ok()?;
        let span_id = u64::from_str_radix(span, 16).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        (trace_id != 0 && span_id != 0).then_some(TraceParent {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
        })
    }

    /// The `traceparent` text of this context.
    pub fn header(&self) -> String {
        // Written into bytes on the stack: `format!`'s padded hex, or a
        // `push` a digit, cost more than the rest of a forwarded call's
        // tracing.
        let mut header = *b"00-00000000000000000000000000000000-0000000000000000-00";
        hex_into(&mut header[3..35], self.trace_id);
        hex_into(&mut header[36..52], u128::from(self.span_id));
        if self.sampled {
            header[54] = b'1';
        }
        String::from_utf8(header.to_vec()).unwrap_or_default()
    }
}

/// A trace id as W3C and OTLP's JSON write it: 32 lower-case hex digits.
pub fn trace_id_hex(id: u128) -> String {
    hex(id, 32)
}

/// A span id as W3C and OTLP's JSON write it: 16 lower-case hex digits.
pub fn span_id_hex(id: u64) -> String {
    hex(u128::from(id), 16)
}

/// The low `digits` (at most 32) hex digits of `value`, lower case,
/// zero-padded.
fn hex(value: u128, digits: usize) -> String {
    let mut text = [0u8; 32];
    let text = &mut text[32 - digits.min(32)..];
    hex_into(text, value);
    String::from_utf8(text.to_vec()).unwrap_or_default()
}

/// `out.len()` low hex digits of `value` into `out`, lower case,
/// zero-padded.
fn hex_into(out: &mut [u8], value: u128) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut value = value;
    for digit in out.iter_mut().rev() {
        *digit = HEX[(value & 0xf) as usize];
        value >>= 4;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_written_as_format_would() {
        for (trace_id, span_id, sampled) in [
            (0, 1, false),
            (1, 0, true),
            (u128::MAX, u64::MAX, true),
            (0x4bf92f3577b34da6a3ce929d0e0e4736, 0x00f067aa0ba902b7, true),
            (
                0x0af7651916cd43dd8448eb211c80319c,
                0xb7ad6b7169203331,
                false,
            ),
        ] {
            let parent = TraceParent {
                trace_id,
                span_id,
                sampled,
            };
            let expected = format!(
                "00-{trace_id:032x}-{span_id:016x}-{:02x}",
                u8::from(sampled)
            );
            assert_eq!(parent.header(), expected);
            assert_eq!(trace_id_hex(trace_id), format!("{trace_id:032x}"));
            assert_eq!(span_id_hex(span_id), format!("{span_id:016x}"));
            // All-zero ids are invalid, and read as none.
            let valid = trace_id != 0 && span_id != 0;
            assert_eq!(
                TraceParent::parse(&parent.header()),
                valid.then_some(parent)
            );
        }
    }

    #[test]
    fn traceparents_are_read_and_written_as_w3c_says() {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let parent = TraceParent::parse(text).unwrap();
        assert_eq!(parent.trace_id, 0x4bf92f3577b34da6a3ce929d0e0e4736);
        assert_eq!(parent.span_id, 0x00f067aa0ba902b7);
        assert!(parent.sampled);
        assert_eq!(parent.header(), text);
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert!(TraceParent::parse(bad).is_none(), "{bad}");
        }
        // A later version: its first four fields.
        assert!(
            TraceParent::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-x")
                .is_some()
        );
    }
}
