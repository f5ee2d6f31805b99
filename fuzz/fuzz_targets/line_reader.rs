//! The proxy's bounded line reader (`framing::LineBuf`, its filling face,
//! the stdio transport's), against a model: any bytes, any limit, any size
//! of reads; each line is what splitting after every newline gives, a line
//! over the limit (its newline counted) is `TooLong`, and the end comes
//! once, after the last line, whether lines are taken out or not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve_runtime::framing::{Line, LineBuf};

fuzz_target!(|data: &[u8]| {
    let [max, capacity, input @ ..] = data else {
        return;
    };
    let max = usize::from(*max);
    let size = usize::from(*capacity % 32) + 1;
    let take = capacity & 0x80 != 0;
    let mut at = 0;
    // A read of at most `size` bytes, into the reader's own buffer.
    let mut fill = |buf: &mut Vec<u8>| {
        let n = size.min(input.len() - at);
        buf.extend_from_slice(&input[at..at + n]);
        at += n;
        Ok::<_, std::io::Error>(n)
    };
    let mut lines = LineBuf::new(max);
    for expected in input.split_inclusive(|&b| b == b'\n') {
        match lines.next_filling(&mut fill).unwrap() {
            Line::Complete => {
                assert!(expected.len() <= max, "{expected:?} is over {max}");
                assert_eq!(lines.line(), expected);
                if take {
                    assert_eq!(lines.take_line(), expected);
                }
            }
            Line::TooLong => assert!(expected.len() > max, "{expected:?} is within {max}"),
            Line::Eof => panic!("the end before {expected:?}"),
        }
    }
    for _ in 0..2 {
        assert!(matches!(lines.next_filling(&mut fill).unwrap(), Line::Eof));
    }
});
