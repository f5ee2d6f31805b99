//! "Did you mean" suggestions.

/// The candidate closest to `word`, if one is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&lower, &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, c)| c)
}

/// `did you mean `x`?` for the closest candidate.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    closest(word, candidates).map(|c| format!("did you mean `{c}`?"))
}

/// Items in backticks, joined: `` `a`, `b` ``.
pub fn backticked<S: AsRef<str>>(items: impl IntoIterator<Item = S>, separator: &str) -> String {
    items
        .into_iter()
        .map(|i| format!("`{}`", i.as_ref()))
        .collect::<Vec<_>>()
        .join(separator)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_misses_only() {
        assert_eq!(
            closest("actoin", ["action", "path", "content"]),
            Some("action")
        );
        assert_eq!(
            closest("readOnly", ["readOnlyHint", "openWorldHint"]),
            Some("readOnlyHint")
        );
        assert_eq!(closest("zzz", ["action", "path"]), None);
    }
}
