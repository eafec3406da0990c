//! The NIC as both servers (devmem TCP, zcrx) want it, set as upstream's
//! server does with `ethtool`: flow steering reset, header split on, RSS
//! over queues 0..START-1, and a rule steering the flow to queue START. The
//! returned [`NicConfig`] undoes it all when dropped.

use crate::cli::Opts;
use crate::ethtool_ioctl::{unmap, FlowRule};
use crate::ethtool_nl::DataSplit;
use crate::nic::{Nic, NicConfig, NicOps};
use std::io;

/// The ntuple rule: TCP to SERVER_IP:PORT (from -c CLIENT_IP:PORT if
/// given) to queue START.
pub fn flow_rule(o: &Opts) -> io::Result<FlowRule> {
    let server = unmap(o.server.unwrap());
    FlowRule::tcp(
        o.client,
        Some(server),
        o.client.map(|_| o.port),
        Some(o.port),
        o.start,
    )
    .map_err(io::Error::other)
}

/// Configures interface `iface` for the server of `o`.
pub fn configure(o: &Opts, iface: &str) -> io::Result<NicConfig<Nic>> {
    let rule = flow_rule(o)?;
    configure_nic(o, Nic::open(iface)?, &rule)
}

/// Configures `nic` for the server of `o`, steering with `rule`.
fn configure_nic<B: NicOps>(o: &Opts, nic: B, rule: &FlowRule) -> io::Result<NicConfig<B>> {
    let mut cfg = NicConfig::new(nic);
    // Upstream: `ethtool -K IF ntuple off; ethtool -K IF ntuple on`. Here the
    // rules are deleted one by one and put back on exit.
    cfg.reset_rules()?;
    match cfg.ensure_ntuple() {
        // Some drivers take rules without the feature flag (or fix it on).
        Err(e) if e.unsupported() => eprintln!("ncdevmem-rs: warning: {e}"),
        Err(e) => return Err(e.into()),
        Ok(_) => {}
    }
    cfg.set_data_split(DataSplit::Enabled)?;
    cfg.set_rss_equal(o.start)?;
    cfg.add_rule(rule)?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_args;
    use crate::ethtool_ioctl::{self as ioc, decode_rule};
    use crate::nic::mock::MockNic;
    use std::cell::RefCell;
    use std::rc::Rc;

    fn opts(line: &str) -> Opts {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse_args(&args).unwrap()
    }

    #[test]
    fn the_rule_names_the_client_only_when_given() {
        let r = flow_rule(&opts("-l -s 10.9.0.2 -p 5300 -f eth1 -t 4")).unwrap();
        assert_eq!((r.src, r.sport), (None, None));
        assert_eq!(r.dst, Some("10.9.0.2".parse().unwrap()));
        assert_eq!((r.dport, r.queue, r.ipv6), (Some(5300), 4, false));

        let r = flow_rule(&opts("-l -s fd00::2 -c fd00::1 -p 5300 -f eth1")).unwrap();
        assert_eq!(r.src, Some("fd00::1".parse().unwrap()));
        assert_eq!(
            (r.sport, r.dport, r.queue, r.ipv6),
            (Some(5300), Some(5300), 8, true)
        );
    }

    #[test]
    fn an_ipv4_mapped_server_address_makes_an_ipv4_rule() {
        let r = flow_rule(&opts("-l -s ::ffff:10.9.0.2 -f eth1")).unwrap();
        assert_eq!(r.dst, Some("10.9.0.2".parse().unwrap()));
        assert!(!r.ipv6);
    }

    fn device(log: &Rc<RefCell<Vec<String>>>) -> MockNic {
        MockNic {
            sink: Some(log.clone()),
            ..MockNic::sixteen_queues()
        }
    }

    #[test]
    fn the_nic_is_set_as_upstreams_server_sets_it_and_restored_on_drop() {
        let o = opts("-l -s 10.9.0.2 -p 5201 -f eth1 -t 4");
        let rule = flow_rule(&o).unwrap();
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut d = device(&log);
        let old = ioc::encode_insert(&FlowRule { queue: 1, ..rule }, 9);
        d.rules.push((9, old));
        let mut cfg = configure_nic(&o, d, &rule).unwrap();
        let nic = cfg.nic();
        assert_eq!(nic.split, Some(DataSplit::Enabled));
        assert_eq!(nic.table, ioc::equal_table(128, 4));
        assert_ne!(nic.flags & ioc::ETH_FLAG_NTUPLE, 0);
        assert_eq!(nic.rules.len(), 1);
        assert_eq!(decode_rule(&nic.rules[0].1), Some(rule));
        assert_eq!(
            log.borrow()[..3],
            [
                "delete 9".to_string(),
                format!("flags {:#x}", ioc::ETH_FLAG_NTUPLE),
                "split on".into()
            ]
        );
        drop(cfg);
        // Undone last first: header split off, ntuple off, the old rule back.
        let log = log.borrow();
        assert_eq!(
            log[log.len() - 3..],
            ["split off", "flags 0x0", "insert 9"],
            "{log:?}"
        );
    }

    #[test]
    fn a_failed_step_gives_back_what_was_done_before_it() {
        let o = opts("-l -s 10.9.0.2 -f eth1 -t 4");
        let rule = flow_rule(&o).unwrap();
        let log = Rc::new(RefCell::new(Vec::new()));
        let d = MockNic {
            fail: vec!["insert"],
            ..device(&log)
        };
        assert!(configure_nic(&o, d, &rule).is_err());
        let log = log.borrow();
        assert_eq!(log[log.len() - 2..], ["split off", "flags 0x0"], "{log:?}");
    }
}
