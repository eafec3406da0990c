//! `--page-pools`: the page pools of this network namespace's devices
//! (netdev.rs's `page-pool-get` dump), one line per pool, then totals.

use crate::netdev::{page_pools, PagePoolInfo};
use std::io;

/// The lines to print: one per pool, then the totals (the detached ones'
/// inflight buffers apart: a pool waiting for them after its device let it
/// go).
fn lines(pools: &[PagePoolInfo]) -> Vec<String> {
    let opt = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
    let mut out: Vec<String> = pools
        .iter()
        .map(|p| {
            format!(
                "page-pool id={} ifindex={} inflight={} inflight_mem={} detached={} dmabuf={}",
                p.id,
                opt(p.ifindex),
                p.inflight,
                p.inflight_mem,
                if p.detached { "yes" } else { "no" },
                opt(p.dmabuf)
            )
        })
        .collect();
    let detached: Vec<_> = pools.iter().filter(|p| p.detached).collect();
    out.push(format!(
        "page-pools pools={} inflight={} detached={} detached_inflight={}",
        pools.len(),
        pools.iter().map(|p| p.inflight).sum::<u64>(),
        detached.len(),
        detached.iter().map(|p| p.inflight).sum::<u64>()
    ));
    out
}

/// Lists the page pools on stdout.
pub fn run() -> io::Result<()> {
    let pools = page_pools()?.map_err(|e| io::Error::other(format!("page-pool-get: {e}")))?;
    for l in lines(&pools) {
        println!("{l}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_pool_then_totals_with_the_detached_apart() {
        let pools = [
            PagePoolInfo {
                id: 3,
                ifindex: Some(2),
                inflight: 10,
                inflight_mem: 40960,
                detached: false,
                dmabuf: Some(1),
            },
            PagePoolInfo {
                id: 4,
                ifindex: None,
                inflight: 5,
                inflight_mem: 20480,
                detached: true,
                dmabuf: None,
            },
        ];
        assert_eq!(
            lines(&pools),
            [
                "page-pool id=3 ifindex=2 inflight=10 inflight_mem=40960 detached=no dmabuf=1",
                "page-pool id=4 ifindex=- inflight=5 inflight_mem=20480 detached=yes dmabuf=-",
                "page-pools pools=2 inflight=15 detached=1 detached_inflight=5",
            ]
        );
    }

    #[test]
    fn no_pools_is_a_line_of_zeros() {
        assert_eq!(
            lines(&[]),
            ["page-pools pools=0 inflight=0 detached=0 detached_inflight=0"]
        );
    }
}
