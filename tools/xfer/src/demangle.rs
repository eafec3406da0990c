//! Rust symbol names in perf's reports: the module's functions are
//! v0-mangled in kallsyms, and the guest's perf does not demangle them.

/// `line` with each whitespace-separated word that is a Rust symbol name
/// (legacy or v0 mangling) replaced by its demangled form, without the hash;
/// spacing and other words are kept.
pub fn words(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while !rest.is_empty() {
        let word_at = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..word_at]);
        rest = &rest[word_at..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        match rustc_demangle::try_demangle(word) {
            Ok(d) if word.starts_with("_R") || word.starts_with("_ZN") => {
                out.push_str(&format!("{d:#}"))
            }
            _ => out.push_str(word),
        }
        rest = &rest[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_rust_words_only() {
        assert_eq!(
            words("  12.5%  [devmemnic]  [k] _RNvNtCs1234_9devmemnic2rx7receive x"),
            "  12.5%  [devmemnic]  [k] devmemnic::rx::receive x"
        );
        assert_eq!(
            words("1% _ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
            "1% core::ptr::drop_in_place"
        );
        assert_eq!(words("3% memcpy_orig\t_Rbogus"), "3% memcpy_orig\t_Rbogus");
    }
}
