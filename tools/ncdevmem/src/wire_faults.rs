//! `--wire-faults`: devmemnic's hostile wire for one run. Sets the knobs of
//! the receive side of `-f IFACE` (debugfs `devmemnic/<parent>/wire_faults/`,
//! Documentation/hardening.rst) and puts back what they held when the run
//! ends, however it ends (the guard's drop).
//!
//! By hand: these are one driver's debugfs files, which no crate knows. The
//! knob names are the directory's own files, so this follows the module
//! that is loaded rather than a list of its own.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One knob and the value a run gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    pub name: String,
    pub value: u32,
}

/// The knobs `--wire-faults` sets, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireSpec(pub Vec<Knob>);

impl std::str::FromStr for WireSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        parse_spec(s).map(WireSpec)
    }
}

/// Parses `NAME=VALUE[,NAME=VALUE...]` (values decimal or `0x` hex, names of
/// letters, digits and `_`), as `--wire-faults` takes it.
pub fn parse_spec(s: &str) -> Result<Vec<Knob>, String> {
    let mut knobs: Vec<Knob> = Vec::new();
    for part in s.split(',') {
        let (name, value) = part
            .split_once('=')
            .ok_or_else(|| format!("{part:?} is not NAME=VALUE"))?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("{name:?} is not a knob name"));
        }
        let value = match value.strip_prefix("0x") {
            Some(hex) => u32::from_str_radix(hex, 16),
            None => value.parse(),
        }
        .map_err(|_| format!("{name}: {value:?} is not a 32-bit number"))?;
        if knobs.iter().any(|k| k.name == name) {
            return Err(format!("{name} is given twice"));
        }
        knobs.push(Knob {
            name: name.to_string(),
            value,
        });
    }
    Ok(knobs)
}

/// The spec as `parse_spec` reads it.
pub fn format_spec(knobs: &[Knob]) -> String {
    knobs
        .iter()
        .map(|k| format!("{}={}", k.name, k.value))
        .collect::<Vec<_>>()
        .join(",")
}

/// Where debugfs is mounted, from `mountinfo` (`/proc/self/mountinfo`'s
/// text): its first mount. `ip netns exec` mounts a fresh sysfs, so inside
/// it `/sys/kernel/debug` is an empty directory until debugfs is mounted
/// again.
pub fn debugfs_in(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let fstype = right.split_whitespace().next()?;
        let mount_point = left.split_whitespace().nth(4)?;
        (fstype == "debugfs").then(|| PathBuf::from(mount_point))
    })
}

/// Where this process sees debugfs, or an error saying how to mount it.
pub fn debugfs() -> io::Result<PathBuf> {
    let info = fs::read_to_string("/proc/self/mountinfo")?;
    debugfs_in(&info).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "debugfs is not mounted here (mount -t debugfs none /sys/kernel/debug; \
             inside ip netns exec too, which mounts a sysfs of its own)",
        )
    })
}

/// The wire-fault directory of `iface`: under `debugfs`, devmemnic's folder
/// named after the device's parent (`/sys/class/net/IFACE/device`'s name).
pub fn dir_of(sys_class_net: &Path, debugfs: &Path, iface: &str) -> io::Result<PathBuf> {
    let link = sys_class_net.join(iface).join("device");
    let parent = fs::read_link(&link).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "{}: {e} (no such device, or one without a parent device)",
                link.display()
            ),
        )
    })?;
    let name = parent
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{}: a link to no device", link.display())))?;
    let dir = debugfs.join("devmemnic").join(name).join("wire_faults");
    if !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{iface} has no wire faults: {} is missing (not a devmemnic device, a module \
                 without them, or debugfs not mounted there)",
                dir.display()
            ),
        ));
    }
    Ok(dir)
}

/// Knobs set for a run; the values they held go back on drop.
pub struct WireFaults {
    /// (knob file, the value it held), in the order set.
    saved: Vec<(PathBuf, String)>,
}

impl WireFaults {
    /// Sets `knobs` in `dir`. An unknown name fails before any is set; a
    /// write that fails puts back the ones set before it.
    pub fn set(dir: &Path, knobs: &[Knob]) -> io::Result<Self> {
        for k in knobs {
            if !dir.join(&k.name).is_file() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "no wire-fault knob {:?}; {} has: {}",
                        k.name,
                        dir.display(),
                        names(dir)?
                    ),
                ));
            }
        }
        let mut set = WireFaults { saved: Vec::new() };
        for k in knobs {
            let path = dir.join(&k.name);
            let old = fs::read_to_string(&path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            fs::write(&path, format!("{}\n", k.value))
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            set.saved.push((path, old.trim().to_string()));
        }
        Ok(set)
    }
}

impl Drop for WireFaults {
    fn drop(&mut self) {
        // In the reverse of the order set, as a stack of changes unwinds.
        for (path, old) in self.saved.iter().rev() {
            if let Err(e) = fs::write(path, format!("{old}\n")) {
                eprintln!("ncdevmem-rs: could not restore {}: {e}", path.display());
            }
        }
    }
}

/// The knob files of `dir`, sorted, comma-separated.
fn names(dir: &Path) -> io::Result<String> {
    let mut v: Vec<String> = fs::read_dir(dir)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    v.sort();
    Ok(v.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A scratch tree: `sys/class/net/dmnic1/device` -> a parent named
    /// `devmemnic.1`, and `debug/devmemnic/devmemnic.1/wire_faults/` with
    /// two knobs.
    struct Tree(PathBuf);

    impl Tree {
        fn new(tag: &str) -> Self {
            let root =
                std::env::temp_dir().join(format!("ncdevmem-rs-wire-{tag}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&root);
            let net = root.join("sys/class/net/dmnic1");
            fs::create_dir_all(&net).unwrap();
            symlink("../../../devices/platform/devmemnic.1", net.join("device")).unwrap();
            let dir = root.join("debug/devmemnic/devmemnic.1/wire_faults");
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("seed"), "0\n").unwrap();
            fs::write(dir.join("drop_ppm"), "5\n").unwrap();
            Tree(root)
        }

        fn dir(&self) -> PathBuf {
            dir_of(
                &self.0.join("sys/class/net"),
                &self.0.join("debug"),
                "dmnic1",
            )
            .unwrap()
        }

        fn read(&self, knob: &str) -> String {
            fs::read_to_string(self.dir().join(knob)).unwrap()
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn spec_parses_and_formats_back() {
        let k = parse_spec("seed=7,drop_ppm=20000,queues=0x5").unwrap();
        assert_eq!(
            k,
            vec![
                Knob {
                    name: "seed".into(),
                    value: 7
                },
                Knob {
                    name: "drop_ppm".into(),
                    value: 20000
                },
                Knob {
                    name: "queues".into(),
                    value: 5
                },
            ]
        );
        assert_eq!(format_spec(&k), "seed=7,drop_ppm=20000,queues=5");
        assert_eq!(parse_spec(&format_spec(&k)).unwrap(), k);
    }

    #[test]
    fn bad_specs_are_refused() {
        for bad in [
            "",
            "seed",
            "seed=",
            "=1",
            "seed=-1",
            "seed=4294967296",
            "seed=0xg",
            "../x=1",
            "seed=1,seed=2",
            "seed=1,",
        ] {
            assert!(parse_spec(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(parse_spec("seed=4294967295").is_ok());
    }

    #[test]
    fn set_then_drop_restores() {
        let t = Tree::new("restore");
        let knobs = parse_spec("seed=9,drop_ppm=30000").unwrap();
        {
            let _set = WireFaults::set(&t.dir(), &knobs).unwrap();
            assert_eq!(t.read("seed"), "9\n");
            assert_eq!(t.read("drop_ppm"), "30000\n");
        }
        assert_eq!(t.read("seed"), "0\n");
        assert_eq!(t.read("drop_ppm"), "5\n");
    }

    #[test]
    fn unknown_knob_sets_nothing_and_names_the_known_ones() {
        let t = Tree::new("unknown");
        let knobs = parse_spec("seed=9,dorp_ppm=1").unwrap();
        let e = WireFaults::set(&t.dir(), &knobs).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let msg = e.to_string();
        assert!(
            msg.contains("\"dorp_ppm\"") && msg.contains("drop_ppm, seed"),
            "{msg}"
        );
        assert_eq!(t.read("seed"), "0\n");
    }

    #[test]
    fn debugfs_is_found_in_mountinfo() {
        let info = "\
22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw
31 22 0:7 / /sys/kernel/debug rw,nosuid shared:14 - debugfs debugfs rw
40 31 0:12 / /sys/kernel/debug/tracing rw - tracefs tracefs rw
";
        assert_eq!(debugfs_in(info), Some(PathBuf::from("/sys/kernel/debug")));
        assert_eq!(debugfs_in("22 1 0:21 / /sys rw - sysfs sysfs rw\n"), None);
        assert_eq!(debugfs_in(""), None);
    }

    #[test]
    fn a_device_without_faults_is_a_clear_error() {
        let t = Tree::new("missing");
        let net = t.0.join("sys/class/net");
        let e = dir_of(&net, &t.0.join("debug"), "eth9").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let other = net.join("lo");
        fs::create_dir_all(&other).unwrap();
        symlink("../../../devices/virtual/foo", other.join("device")).unwrap();
        let e = dir_of(&net, &t.0.join("debug"), "lo").unwrap_err();
        assert!(e.to_string().contains("lo has no wire faults"), "{e}");
    }
}
