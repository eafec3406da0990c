// SPDX-License-Identifier: GPL-2.0

//! `module!` across kernels (7.2 takes `authors: [..]`, 6.12 `author:`), and
//! the module information this build adds (`.modinfo`: its features, the
//! symbol namespaces it imports).

/// Declares the module with one author, in whichever form the kernel's
/// `module!` takes.
#[cfg(dmn_module_authors)]
#[macro_export]
macro_rules! kernel_module {
    (type: $t:tt, name: $n:tt, author: $a:tt, description: $d:tt, license: $l:tt $(,)?) => {
        ::kernel::prelude::module! {
            type: $t,
            name: $n,
            authors: [$a],
            description: $d,
            license: $l,
        }
    };
}

/// Declares the module with one author, in whichever form the kernel's
/// `module!` takes.
#[cfg(not(dmn_module_authors))]
#[macro_export]
macro_rules! kernel_module {
    (type: $t:tt, name: $n:tt, author: $a:tt, description: $d:tt, license: $l:tt $(,)?) => {
        ::kernel::prelude::module! {
            type: $t,
            name: $n,
            author: $a,
            description: $d,
            license: $l,
        }
    };
}

/// What this build does beyond devmem RX, by the probes of `Kbuild`, in the
/// names of `scripts/kernel-features` (`modinfo -F features devmemnic.ko`):
/// `make check` holds it against what the kernel offers, so a probe that
/// misses on a new kernel fails the check instead of leaving a feature
/// untested. `kunit` where the KUnit suites are built (`CONFIG_KUNIT=y`).
const FEATURES: &[&str] = &[
    "devmem-rx",
    "xdp",
    #[cfg(dmn_netmem_tx)]
    "devmem-tx",
    #[cfg(dmn_hds_thresh)]
    "hds-thresh",
    #[cfg(dmn_queue_qcfg)]
    "rx-buf-len",
    #[cfg(dmn_napi_config)]
    "napi-config",
    #[cfg(CONFIG_KUNIT)]
    "kunit",
];

/// `MODULE_INFO(features, ...)`: [`FEATURES`], space-separated.
#[link_section = ".modinfo"]
#[used(compiler)]
static FEATURES_INFO: [u8; modinfo_len("features", FEATURES)] = modinfo("features", FEATURES);

/// `MODULE_IMPORT_NS("NETDEV_INTERNAL")`: the namespace 7.2 exports
/// `netdev_rx_queue_restart()` in (`queue_mgmt.rs`).
#[cfg(dmn_restart_exported)]
#[link_section = ".modinfo"]
#[used(compiler)]
static IMPORT_NS_INFO: [u8; modinfo_len("import_ns", &["NETDEV_INTERNAL"])] =
    modinfo("import_ns", &["NETDEV_INTERNAL"]);

/// The length of the `.modinfo` entry `key=v1 v2 ...` (one or more values),
/// with its NUL.
const fn modinfo_len(key: &str, vals: &[&str]) -> usize {
    // The key and the NUL; each value and the `=` or space before it.
    let mut n = key.len() + 1;
    let mut i = 0;
    while i < vals.len() {
        n += vals[i].len() + 1;
        i += 1;
    }
    n
}

/// The `.modinfo` entry `key=v1 v2 ...` and its NUL (`N` is its
/// [`modinfo_len`]), as `MODULE_INFO` and `module!` write a loadable
/// module's.
const fn modinfo<const N: usize>(key: &str, vals: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut n = 0;
    // The key, then each value after `=` or a space.
    let mut v = 0;
    while v <= vals.len() {
        let b = if v == 0 { key } else { vals[v - 1] }.as_bytes();
        if v > 0 {
            out[n] = if v == 1 { b'=' } else { b' ' };
            n += 1;
        }
        let mut i = 0;
        while i < b.len() {
            out[n] = b[i];
            n += 1;
            i += 1;
        }
        v += 1;
    }
    out
}
