//! Times as the project writes them: RFC 3339, UTC, with milliseconds
//! (audit lines, signing times).

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as RFC 3339 UTC with milliseconds (`2026-11-23T01:02:03.456Z`).
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Written digit by digit: an audit line and a log record each carry
    // one, on a request's path, where `format!` cost ten times as much.
    let mut out = String::with_capacity(24);
    let parts: [(u64, usize, char); 7] = [
        (year.unsigned_abs(), 4, '-'),
        (month.unsigned_abs(), 2, '-'),
        (day.unsigned_abs(), 2, 'T'),
        (rest / 3_600, 2, ':'),
        (rest % 3_600 / 60, 2, ':'),
        (rest % 60, 2, '.'),
        (u64::from(since.subsec_millis()), 3, 'Z'),
    ];
    for (n, width, then) in parts {
        push_padded(&mut out, n, width);
        out.push(then);
    }
    out
}

/// `n` in decimal, zero-padded to at least `width` digits.
fn push_padded(out: &mut String, n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let (mut at, mut rest) = (digits.len(), n);
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let start = at.min(digits.len().saturating_sub(width));
    out.extend(digits[start..].iter().map(|&d| char::from(d)));
}

/// Seconds since the epoch, for a signature's `iat`: `SOURCE_DATE_EPOCH`
/// when it is set (reproducible releases), else now.
pub fn signing_time() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc3339_utc() {
        let at = |secs: u64, millis: u64| {
            rfc3339(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_795_395_723, 456), "2026-11-23T01:02:03.456Z");
        assert_eq!(at(4_107_542_399, 999), "2100-02-28T23:59:59.999Z");
        // Past the year 9999: more digits, as `{:04}` writes them.
        assert_eq!(at(253_402_300_800, 1), "10000-01-01T00:00:00.001Z");
        // Digit by digit as `format!` writes it, over three centuries.
        for secs in (0..10_000_000_000_u64).step_by(7_654_321) {
            let since = Duration::from_secs(secs);
            let (days, rest) = (secs / 86_400, secs % 86_400);
            let text = at(secs, 42);
            assert_eq!(text.len(), 24, "{text}");
            assert_eq!(
                &text[11..],
                format!(
                    "{:02}:{:02}:{:02}.042Z",
                    rest / 3_600,
                    rest % 3_600 / 60,
                    rest % 60
                ),
                "{since:?} {days}"
            );
        }
    }
}
