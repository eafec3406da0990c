//! What the C compiler finds in the system's headers, for tests that hold
//! Rust layouts and constants against the C definitions rather than against
//! numbers copied from them.

use std::process::Command;

/// The values of C expressions `exprs` (sizes, offsets, constants) in a
/// program including `headers`. Panics, failing the test, without a C
/// compiler (`$CC`, else `cc`).
pub fn values(headers: &[&str], exprs: &[&str]) -> Vec<u64> {
    let mut c = String::from("#include <stddef.h>\n#include <stdio.h>\n");
    for h in headers {
        c += &format!("#include <{h}>\n");
    }
    c += "int main(void)\n{\n";
    for e in exprs {
        c += &format!("\tprintf(\"%llu\\n\", (unsigned long long)({e}));\n");
    }
    c += "\treturn 0;\n}\n";
    let dir = std::env::temp_dir().join(format!(
        "ncdevmem-c-headers-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, bin) = (dir.join("values.c"), dir.join("values"));
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("this test needs a C compiler ({cc}): {e}"));
    assert!(
        built.status.success(),
        "{cc} failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&bin).output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let values: Vec<u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(values.len(), exprs.len());
    values
}

/// Checks `(C expression, Rust value)` pairs; fails listing every mismatch.
pub fn check(headers: &[&str], pairs: &[(&str, u64)]) {
    let exprs: Vec<&str> = pairs.iter().map(|p| p.0).collect();
    let wrong: Vec<String> = pairs
        .iter()
        .zip(values(headers, &exprs))
        .filter(|((_, rust), c)| rust != c)
        .map(|((expr, rust), c)| format!("{expr}: C {c}, Rust {rust}"))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}
