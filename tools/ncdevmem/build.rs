//! Numbers the ethtool family's requests from its YNL spec.
//!
//! netlink-bindings 0.3.5 encodes ethtool's attributes right but numbers its
//! requests as if every operation took one: the spec's `enum-model:
//! directional` gives request ids only to operations with a `do` or `dump`
//! (not to `-ntf` notifications), so its rings-get is 21 where the kernel's
//! `ETHTOOL_MSG_RINGS_GET` is 15. This writes `ethtool_requests.rs` with one
//! constant per request, numbered as the kernel's YNL tooling does
//! (tools/net/ynl/pyynl/lib/nlspec.py, `_dictify_ops_directional`), from
//! specs/ethtool.yaml, Linux 7.3's Documentation/netlink/specs/ethtool.yaml
//! (request ids are uAPI: older kernels have a prefix of the same list).

use std::fmt::Write;
use yaml_rust2::{Yaml, YamlLoader};

fn main() {
    let spec = "specs/ethtool.yaml";
    println!("cargo::rerun-if-changed={spec}");
    let text = std::fs::read_to_string(spec).expect("read the ethtool spec");
    let docs = YamlLoader::load_from_str(&text).expect("parse the ethtool spec");
    let ops = &docs[0]["operations"];
    assert_eq!(ops["enum-model"].as_str(), Some("directional"));
    let mut out = String::new();
    let mut next = 1;
    for op in ops["list"].as_vec().expect("an operations list") {
        let name = op["name"].as_str().expect("an operation name");
        let mode = match (&op["do"], &op["dump"]) {
            (Yaml::BadValue, Yaml::BadValue) => continue, // notify or event: no request
            (Yaml::BadValue, dump) => dump,
            (doit, _) => doit,
        };
        let id = mode["request"]["value"].as_i64().unwrap_or(next);
        let konst = name.to_uppercase().replace('-', "_");
        writeln!(
            out,
            "/// `ETHTOOL_MSG_{konst}`.\npub const {konst}: u8 = {id};"
        )
        .unwrap();
        next = id + 1;
    }
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("ethtool_requests.rs");
    std::fs::write(dest, out).expect("write ethtool_requests.rs");
}
