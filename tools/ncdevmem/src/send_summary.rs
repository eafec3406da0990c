//! What a sender (the plain client, devmem TX) prints after its send loop.

use crate::tcp_info::TcpInfo;
use crate::zerocopy::Completions;

/// This process's user and system CPU seconds so far.
pub fn cpu_secs() -> (f64, f64) {
    // SAFETY: an all-zero rusage is valid; getrusage fills it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is writable; RUSAGE_SELF cannot fail with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(u.ru_utime), secs(u.ru_stime))
}

/// What a sender prints after its send loop: bytes, time, and its own CPU
/// time over the loop (setup before the first byte left out).
pub struct SendSummary {
    pub role: &'static str,
    pub bytes: u64,
    pub secs: f64,
    /// User and system CPU seconds over the loop.
    pub cpu: (f64, f64),
    /// The zerocopy sends' completions, for a zerocopy sender.
    pub zc: Option<Completions>,
    /// The sending socket's TCP_INFO counters, after the receiver closed.
    pub tcp: TcpInfo,
}

impl SendSummary {
    /// The summary's fields, in order: numbers only.
    fn fields(&self) -> Vec<(&'static str, String)> {
        let rate = self.bytes as f64 / (1 << 20) as f64 / self.secs.max(1e-9);
        let mut f = vec![("bytes", self.bytes.to_string())];
        if let Some(c) = &self.zc {
            f.push(("sends", c.sends.to_string()));
            f.push(("completions", c.completed.to_string()));
            f.push(("copied", c.copied.to_string()));
        }
        f.push(("secs", format!("{:.3}", self.secs)));
        f.push(("mibps", format!("{rate:.1}")));
        f.push(("cpu_user", format!("{:.3}", self.cpu.0)));
        f.push(("cpu_sys", format!("{:.3}", self.cpu.1)));
        f
    }

    /// The summary line: `ncdevmem-rs ROLE: k=v ...`, or one JSON object;
    /// the TCP_INFO fields last.
    pub fn line(&self, json: bool) -> String {
        let fields = self.fields();
        let tcp = self.tcp.fields(json);
        if json {
            let kv: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{\"role\":\"{}\",{},{tcp}}}", self.role, kv.join(","))
        } else {
            let kv: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("ncdevmem-rs {}: {} {tcp}", self.role, kv.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_summary_text_and_json_carry_the_same_fields() {
        let s = SendSummary {
            role: "devmem-tx",
            bytes: 4096,
            secs: 0.5,
            cpu: (0.25, 0.125),
            zc: Some(Completions {
                sends: 3,
                completed: 3,
                copied: 0,
            }),
            tcp: TcpInfo {
                total_retrans: Some(9),
                retrans: Some(1),
                lost: Some(2),
                reordering: Some(3),
                rcv_ooopack: Some(0),
                dsack_dups: Some(4),
            },
        };
        assert_eq!(
            s.line(false),
            "ncdevmem-rs devmem-tx: bytes=4096 sends=3 completions=3 copied=0 secs=0.500 mibps=0.0 cpu_user=0.250 cpu_sys=0.125 tcp_total_retrans=9 tcp_retrans=1 tcp_lost=2 tcp_reordering=3 tcp_rcv_ooopack=0 tcp_dsack_dups=4"
        );
        assert_eq!(
            s.line(true),
            "{\"role\":\"devmem-tx\",\"bytes\":4096,\"sends\":3,\"completions\":3,\"copied\":0,\"secs\":0.500,\"mibps\":0.0,\"cpu_user\":0.250,\"cpu_sys\":0.125,\"tcp_total_retrans\":9,\"tcp_retrans\":1,\"tcp_lost\":2,\"tcp_reordering\":3,\"tcp_rcv_ooopack\":0,\"tcp_dsack_dups\":4}"
        );
        let plain = SendSummary {
            zc: None,
            role: "client",
            tcp: TcpInfo {
                rcv_ooopack: None,
                dsack_dups: None,
                ..s.tcp
            },
            ..s
        };
        assert_eq!(
            plain.line(false),
            "ncdevmem-rs client: bytes=4096 secs=0.500 mibps=0.0 cpu_user=0.250 cpu_sys=0.125 tcp_total_retrans=9 tcp_retrans=1 tcp_lost=2 tcp_reordering=3 tcp_rcv_ooopack=n/a tcp_dsack_dups=n/a"
        );
        assert!(plain
            .line(true)
            .ends_with(",\"tcp_rcv_ooopack\":null,\"tcp_dsack_dups\":null}"));
    }

    #[test]
    fn the_rate_is_mebibytes_per_second_of_the_loop() {
        let s = SendSummary {
            role: "client",
            bytes: 3 << 20,
            secs: 2.0,
            cpu: (0.0, 0.0),
            zc: None,
            tcp: TcpInfo::default(),
        };
        assert!(s.line(false).contains(" mibps=1.5 "), "{}", s.line(false));
        // A loop too short to time is not a division by zero.
        let instant = SendSummary { secs: 0.0, ..s };
        assert!(
            !instant.line(true).contains("inf"),
            "{}",
            instant.line(true)
        );
    }

    #[test]
    fn cpu_time_only_grows() {
        let (u0, s0) = cpu_secs();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let (u1, s1) = cpu_secs();
        assert!(u1 >= u0 && s1 >= s0 && u1 + s1 > 0.0);
    }
}
