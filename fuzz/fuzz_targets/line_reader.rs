//! The proxy's bounded line reader (`framing::LineBuf`, its blocking face,
//! the stdio transport's), against a model: any bytes, any limit, any
//! reader buffer size; each line is what splitting after every newline
//! gives, a line over the limit (its newline counted) is `TooLong`, and the
//! end comes once, after the last line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve_runtime::framing::{Line, LineBuf};

fuzz_target!(|data: &[u8]| {
    let [max, capacity, input @ ..] = data else {
        return;
    };
    let max = usize::from(*max);
    let capacity = usize::from(*capacity % 32) + 1;
    let mut reader = std::io::BufReader::with_capacity(capacity, input);
    let mut lines = LineBuf::new(max);
    for expected in input.split_inclusive(|&b| b == b'\n') {
        match lines.next_blocking(&mut reader).unwrap() {
            Line::Complete => {
                assert!(expected.len() <= max, "{expected:?} is over {max}");
                assert_eq!(lines.line(), expected);
            }
            Line::TooLong => assert!(expected.len() > max, "{expected:?} is within {max}"),
            Line::Eof => panic!("the end before {expected:?}"),
        }
    }
    for _ in 0..2 {
        assert!(matches!(
            lines.next_blocking(&mut reader).unwrap(),
            Line::Eof
        ));
    }
});
