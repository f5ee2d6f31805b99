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
        // Written digit by digit: `format!`'s padded hex costs more than
        // the rest of a forwarded call's tracing.
        let mut header = String::with_capacity(55);
        header.push_str("00-");
        push_hex(&mut header, self.trace_id, 32);
        header.push('-');
        push_hex(&mut header, u128::from(self.span_id), 16);
        header.push_str(if self.sampled { "-01" } else { "-00" });
        header
    }
}

/// A trace id as W3C and OTLP's JSON write it: 32 lower-case hex digits.
pub fn trace_id_hex(id: u128) -> String {
    let mut text = String::with_capacity(32);
    push_hex(&mut text, id, 32);
    text
}

/// A span id as W3C and OTLP's JSON write it: 16 lower-case hex digits.
pub fn span_id_hex(id: u64) -> String {
    let mut text = String::with_capacity(16);
    push_hex(&mut text, u128::from(id), 16);
    text
}

/// The low `digits` hex digits of `value`, lower case, zero-padded.
fn push_hex(out: &mut String, value: u128, digits: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..digits).rev() {
        let nibble = (value >> (shift * 4)) & 0xf;
        out.push(char::from(HEX[nibble as usize]));
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
