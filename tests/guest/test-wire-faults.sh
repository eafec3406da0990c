#!/bin/bash
# Guest tests: a hostile wire. devmemnic's own wire faults (debugfs
# devmemnic/<parent>/wire_faults/, Documentation/hardening.rst) on what
# dmnic1 receives: seeded and counted, devmem RX coming through loss,
# duplicates, reordering, corruption and delay with every byte validated,
# and delay keeping the order; and netem on the sender's egress, as users
# impair a wire.
source /extra/lib.sh
MIB=$((1024 * 1024))

# Devmem RX of $2 bytes from dmnic0 to ncdevmem-rs on dmnic1 (port $1,
# summary in $3), the server run with the rest of the arguments; every byte
# validated and every token returned. RS_CLIENT_TIMEOUT: seconds the client
# may take; RS_CLIENT_ARGS: more arguments for it.
rs_transfer() { # port bytes out [server args]
	local port="$1" bytes="$2" out="$3" pid
	shift 3
	rs_server "$port" "$out" -c 10.9.0.1 -v 7 "$@"
	pid=$RS_PID
	wait_listen "$port" || return 1
	local limit=()
	[ -n "${RS_CLIENT_TIMEOUT:-}" ] && limit=(timeout "$RS_CLIENT_TIMEOUT")
	# shellcheck disable=SC2086 # (RS_CLIENT_ARGS: words)
	"${limit[@]}" ncdevmem-rs -s 10.9.0.2 -p "$port" -v 7 --bytes "$bytes" ${RS_CLIENT_ARGS:-} >"$out.client" ||
		{ echo "client: exit $? (124: timed out)"; return 1; }
	wait $pid || { tail -3 "$out.err"; return 1; }
	check_rs_summary "$out" "$bytes"
}

# Sends $1 numbered UDP datagrams from here (one socket) to the peer's
# port 5400 and prints, space-separated, the numbers that arrived (the
# receiver listens until a second after the last is sent, however long
# sending takes on a loaded machine). The receiver's buffer is large (the
# caller's rmem_default), so that only the wire loses datagrams (its
# socket's RcvbufErrors must stay 0).
udp_seqs() { # count
	local pid i full0 full
	full0=$(snmp Udp RcvbufErrors peer)
	ip netns exec peer dmn-xfer udp-recv 5400 600 >/tmp/udp.seqs &
	pid=$!
	for ((i = 0; i < 50; i++)); do
		[ -n "$(ip netns exec peer ss -Hunl 'sport = :5400')" ] && break
		sleep 0.1
	done
	exec 5>/dev/udp/10.9.0.2/5400 || return 1
	for ((i = 0; i < $1; i++)); do
		printf '%d\n' $i >&5
	done
	exec 5>&-
	sleep 1
	kill $pid
	wait $pid 2>/dev/null
	full=$(($(snmp Udp RcvbufErrors peer) - full0))
	[ "$full" = 0 ] || { echo "the receiver's socket dropped $full datagrams" >&2; return 1; }
	sort -n /tmp/udp.seqs | tr '\n' ' '
}

# Only the datagrams on dmnic1's wire, on one queue: static neighbours (no
# ARP), no IPv6 on dmnic0 (no neighbour discovery, no MLD), settled.
quiet_wire() {
	local mac0 mac1
	mac0=$(cat /sys/class/net/dmnic0/address)
	mac1=$(ip netns exec peer cat /sys/class/net/dmnic1/address)
	sysctl -qw net.ipv6.conf.dmnic0.disable_ipv6=1 || return 1
	# Every datagram on queue 0, whatever its source port.
	ip netns exec peer ethtool -X dmnic1 equal 1 || return 1
	ip neigh replace 10.9.0.2 lladdr "$mac1" dev dmnic0 nud permanent || return 1
	ip -n peer neigh replace 10.9.0.1 lladdr "$mac0" dev dmnic1 nud permanent || return 1
	sleep 0.5
}

# Off by default, readable back; 30% loss of 300 datagrams is counted frame
# for frame (the NIC's count equals what the receiver missed), a seed
# replays the same losses when the queue starts again (the device cycled),
# and another seed loses others.
seeded_and_counted() {
	local rmem rc
	rmem=$(sysctl -n net.core.rmem_default) || return 1
	sysctl -qw net.core.rmem_default=4194304 || return 1
	seeded_and_counted_run
	rc=$?
	sysctl -qw net.core.rmem_default="$rmem"
	return $rc
}

seeded_and_counted_run() {
	setup_pair || return 1
	[ -d "$FAULTS" ] || { echo "no $FAULTS"; return 1; }
	faults_are_off || { echo "(by default)"; return 1; }
	[ "$(cat "$FAULTS/queues")" = 4294967295 ] || { echo "queues: $(cat "$FAULTS/queues")"; return 1; }
	quiet_wire || return 1
	set_faults seed=5 drop_ppm=300000 || return 1
	[ "$(cat "$FAULTS/drop_ppm")" = 300000 ] || { echo "drop_ppm did not read back"; return 1; }
	local n=300 lost0 a b c got lost
	lost0=$(rx_sum dmnic1 wire_lost peer)
	a=$(udp_seqs $n) || return 1
	got=$(wc -w <<<"$a")
	lost=$(($(rx_sum dmnic1 wire_lost peer) - lost0))
	echo "info: seed 5: $got of $n arrived, the NIC lost $lost"
	[ $((got + lost)) = $n ] || { echo "$got arrived and $lost lost of $n"; return 1; }
	[ "$lost" -gt 60 ] && [ "$lost" -lt 120 ] || { echo "$lost lost at 30%"; return 1; }
	# The queue starts again: the same seed, the same frames lost.
	ip -n peer link set dmnic1 down && ip -n peer link set dmnic1 up || return 1
	sleep 0.5
	b=$(udp_seqs $n) || return 1
	[ "$a" = "$b" ] || { echo "seed 5 lost other frames the second time"; return 1; }
	set_faults seed=6 || return 1
	c=$(udp_seqs $n) || return 1
	[ "$a" != "$c" ] || { echo "seed 6 lost the same frames as seed 5"; return 1; }
	echo "info: seed 5 replayed (the same $got arrived), seed 6 let $(wc -w <<<"$c") others through"
	faults_off || return 1
	got=$(udp_seqs 100 | wc -w)
	[ "$got" = 100 ] || { echo "$got of 100 arrived with the faults off"; return 1; }
	unload_clean || return 1
}

# Devmem RX through every fault at once at moderate rates: 2% loss, 1%
# duplicates, 25% of frames held behind 3 later ones, 0.5% with a byte
# corrupted anywhere in the frame, 1 ms of delay give or take 1 ms (the
# sender's TSO and GSO off, so each wire frame is one segment, as netem
# users run it), set by ncdevmem-rs itself for its run (--wire-faults) and
# put back when it ends. ncdevmem-rs validates every byte in the dma-buf
# and returns every token; TCP's out-of-order queue (also in ncdevmem-rs's
# TCP_INFO report), retransmits and D-SACKs show the paths ran; the sender
# retransmitted at least what the wire lost (but for a few frames without
# data: the handshake's last ACK), and the NIC caught corrupted payload
# before the dma-buf.
rs_all_faults() {
	setup_pair || return 1
	ethtool -K dmnic0 tso off gso off || return 1
	local bytes=$(($(tier 4 256) * MIB)) ofo0 rt0 ds0 bad0 lost dup reord corr delayed ofo rt ds bad
	ofo0=$(tcpext TCPOFOQueue peer)
	ds0=$(tcpext TCPDSACKOldSent peer)
	rt0=$(snmp_tcp RetransSegs)
	bad0=$(rx_sum dmnic1 csum_bad peer)
	rs_transfer 5301 $bytes /tmp/wf.out --wire-faults \
		seed=11,drop_ppm=20000,duplicate_ppm=10000,reorder_ppm=250000,reorder_gap=3,corrupt_ppm=5000,delay_us=1000,jitter_us=1000 ||
		return 1
	grep -q "wire faults on dmnic1: seed=11," /tmp/wf.out.err || { echo "ncdevmem-rs did not say it set the faults"; return 1; }
	faults_are_off || { echo "(ncdevmem-rs did not put the knobs back)"; return 1; }
	lost=$(rx_sum dmnic1 wire_lost peer)
	dup=$(rx_sum dmnic1 wire_duplicated peer)
	reord=$(rx_sum dmnic1 wire_reordered peer)
	corr=$(rx_sum dmnic1 wire_corrupted peer)
	delayed=$(rx_sum dmnic1 wire_delayed peer)
	bad=$(($(rx_sum dmnic1 csum_bad peer) - bad0))
	ofo=$(($(tcpext TCPOFOQueue peer) - ofo0))
	ds=$(($(tcpext TCPDSACKOldSent peer) - ds0))
	rt=$(($(snmp_tcp RetransSegs) - rt0))
	echo "info: wire: $lost lost, $dup duplicated, $reord reordered, $corr corrupted ($bad sums caught bad), $delayed delayed; TCP: $ofo out-of-order, $rt retransmitted, $ds D-SACKs sent"
	[ "$lost" -gt 0 ] && [ "$dup" -gt 0 ] && [ "$reord" -gt 0 ] && [ "$corr" -gt 0 ] ||
		{ echo "a fault never happened"; return 1; }
	# Every frame took the delaying wire: at least the payload's segments.
	[ "$delayed" -gt $((bytes / 1448)) ] || { echo "$delayed frames delayed"; return 1; }
	[ "$ofo" -gt 0 ] || { echo "no out-of-order segment"; return 1; }
	# ncdevmem-rs saw it too, on its socket (TCP_INFO).
	[ "$(summary_field /tmp/wf.out tcp_rcv_ooopack)" -gt 0 ] || { echo "ncdevmem-rs reports no out-of-order packet"; return 1; }
	[ "$ds" -gt 0 ] || { echo "no D-SACK for the duplicates"; return 1; }
	[ "$bad" -gt 0 ] || { echo "no corrupted sum caught"; return 1; }
	[ $((rt + 5)) -ge "$lost" ] || { echo "$rt retransmitted, fewer than the $lost lost"; return 1; }
	unload_clean || return 1
}

# The wire's delay: 20 ms give or take 5 ms on what dmnic1 receives; every
# ping's round trip takes at least 15 ms (it crosses that wire once), and
# each request was delayed. Delay and jitter alone keep the frames in the
# order sent: devmem RX (ncdevmem-rs setting them) queues nothing out of
# order. A knob ncdevmem-rs does not know fails the run before it sets any.
delay_keeps_order() {
	setup_pair || return 1
	ethtool -K dmnic0 tso off gso off || return 1
	local d0 d rtt ofo0 ofo rc
	set_faults seed=3 delay_us=20000 jitter_us=5000 || return 1
	d0=$(rx_sum dmnic1 wire_delayed peer)
	# (iputils: "rtt min/avg/max/mdev = a/b/c/d ms"; busybox: "round-trip
	# min/avg/max = a/b/c ms".)
	rtt=$(ping -c 20 -i 0.05 -q 10.9.0.2 | sed -n 's|.*min/avg/max[^=]*= \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\).*|\1 \2 \3|p')
	d=$(($(rx_sum dmnic1 wire_delayed peer) - d0))
	echo "info: 20 pings through 20 +- 5 ms: rtt min/avg/max $rtt ms, $d frames delayed"
	[ -n "$rtt" ] || { echo "no ping came back"; return 1; }
	awk -v m="${rtt%% *}" 'BEGIN { exit !(m >= 15) }' || { echo "a round trip of ${rtt%% *} ms through a 15 ms wire"; return 1; }
	[ "$d" -ge 20 ] || { echo "$d frames delayed, fewer than the 20 requests"; return 1; }
	faults_off || return 1
	ofo0=$(tcpext TCPOFOQueue peer)
	rs_transfer 5303 $((2 * MIB)) /tmp/wd.out --wire-faults seed=4,delay_us=2000,jitter_us=1500 || return 1
	ofo=$(($(tcpext TCPOFOQueue peer) - ofo0))
	[ "$ofo" = 0 ] || { echo "$ofo segments out of order through delay and jitter alone"; return 1; }
	faults_are_off || { echo "(ncdevmem-rs did not put the knobs back)"; return 1; }
	ip netns exec peer sh -c 'mount -t debugfs none /sys/kernel/debug && exec ncdevmem-rs -l -s 10.9.0.2 -p 5304 -f dmnic1 --wire-faults drop_ppm=1,dorp_ppm=5' \
		>/tmp/wd.bad 2>&1
	rc=$?
	[ "$rc" = 1 ] && grep -q 'no wire-fault knob "dorp_ppm"; .* has: .*drop_ppm' /tmp/wd.bad ||
		{ echo "a bad knob: exit $rc, $(cat /tmp/wd.bad)"; return 1; }
	faults_are_off || { echo "(after the bad knob)"; return 1; }
	unload_clean || return 1
}

# The sender's egress impaired with netem, as users do on real hosts (the
# self-built kernels have sch_netem; segmentation off, so netem acts on wire
# frames): 2% loss, 1% duplicates, 25% of frames sent at once and the rest
# 1 ms late (reordering). Devmem RX (ncdevmem-rs) validates every byte and
# returns every token; the receiver queued out of order and the sender
# retransmitted.
netem_sender() {
	setup_pair || return 1
	ethtool -K dmnic0 tso off gso off || return 1
	tc qdisc add dev dmnic0 root netem limit 10000 delay 1ms reorder 25% 50% loss 2% duplicate 1% ||
		{ echo "netem refused"; return 1; }
	local bytes=$(($(tier 4 256) * MIB)) ofo0 rt0 ofo rt
	ofo0=$(tcpext TCPOFOQueue peer)
	rt0=$(snmp_tcp RetransSegs)
	rs_transfer 5302 $bytes /tmp/wn.out || return 1
	ofo=$(($(tcpext TCPOFOQueue peer) - ofo0))
	rt=$(($(snmp_tcp RetransSegs) - rt0))
	echo "info: netem: $(tc -s qdisc show dev dmnic0 | grep -o 'Sent [0-9]* bytes [0-9]* pkt (dropped [0-9]*')); TCP: $ofo out-of-order, $rt retransmitted"
	[ "$ofo" -gt 0 ] || { echo "no out-of-order segment"; return 1; }
	[ "$rt" -gt 0 ] || { echo "nothing retransmitted"; return 1; }
	tc qdisc del dev dmnic0 root || return 1
	unload_clean || return 1
}

# Heavy loss: 30% of the frames dmnic1 receives lost. Devmem RX of 256 KiB
# still completes, every byte validated (TCP recovers; a hang would trip the
# client's timeout, exit 124, a failure). Then a receiver killed (SIGKILL)
# with every token held while the wire loses and reorders and the sender
# retransmits into it: the binding goes once its buffers are back, and the
# module unloads clean.
heavy_loss_and_killed() {
	setup_pair || return 1
	ethtool -K dmnic0 tso off gso off || return 1
	local lost0 lost rt0 rt
	lost0=$(rx_sum dmnic1 wire_lost peer)
	rt0=$(snmp_tcp RetransSegs)
	RS_CLIENT_TIMEOUT=300 rs_transfer 5305 $((256 * 1024)) /tmp/wh.out --wire-faults seed=21,drop_ppm=300000 ||
		return 1
	lost=$(($(rx_sum dmnic1 wire_lost peer) - lost0))
	rt=$(($(snmp_tcp RetransSegs) - rt0))
	echo "info: 30% loss: $lost frames lost, $rt retransmitted, $(summary_field /tmp/wh.out tcp_total_retrans) retransmits in the receiver's TCP_INFO"
	[ "$lost" -gt 40 ] || { echo "only $lost frames lost at 30%"; return 1; }
	[ $((rt + 5)) -ge "$lost" ] || { echo "$rt retransmitted, fewer than the $lost lost"; return 1; }
	faults_are_off || return 1
	# The kill: the knobs set here, since a killed ncdevmem-rs puts nothing back.
	set_faults seed=22 drop_ppm=50000 reorder_ppm=250000 || return 1
	rs_server 5306 /tmp/wk.out -c 10.9.0.1 -v 7 --hold-tokens-secs 600
	wait_listen 5306 || return 1
	kill_server_mid_stream 5306 "rx_sum dmnic1 devmem_packets peer" 150 20 || return 1
	echo "info: $(($(rx_sum dmnic1 wire_lost peer) - lost0)) frames lost on the wire by then"
	faults_off || return 1
	unload_clean || return 1
}

# A frame under Ethernet's 60-byte minimum arrives padded with zeros, as the
# sending NIC pads it, and the receiving NIC places the padding with the
# payload. Small devmem segments (2-byte writes with TCP_NODELAY; TCP
# timestamps off, so a segment of up to 5 bytes makes a frame under 60)
# put their padding into the dma-buf, and the stack trims it there
# (pskb_trim_rcsum() on an unreadable frag): every byte validated, every
# token returned, the padded frames split into device memory, no checksum
# error; under strict and, where it binds devmem (7.x), mlx5 (short frames
# verified, never CHECKSUM_COMPLETE, whose sum would not cover the padding).
padded_small_segments() {
	setup_pair || return 1
	local ts rc=0
	ts=$(sysctl -n net.ipv4.tcp_timestamps) || return 1
	sysctl -qw net.ipv4.tcp_timestamps=0 || return 1
	padded_small_segments_run || rc=1
	sysctl -qw net.ipv4.tcp_timestamps="$ts"
	return $rc
}

padded_small_segments_run() {
	local bytes=$(tier 2000 40000) p port=5330 pad0 err0 pad err ps=strict
	# (mlx5 binds devmem from 6.16 on, the kernels with devmem TX.)
	has_feature devmem-tx && ps="strict mlx5"
	for p in $ps; do
		use_personality $p || return 1
		devmem_admin $p || return 1
		pad0=$(rx_sum dmnic1 padded peer)
		err0=$(snmp_tcp InCsumErrors peer)
		port=$((port + 1))
		RS_CLIENT_ARGS="--write-size 2" RS_CLIENT_TIMEOUT=300 rs_transfer $port "$bytes" /tmp/pad.out || return 1
		pad=$(($(rx_sum dmnic1 padded peer) - pad0))
		err=$(($(snmp_tcp InCsumErrors peer) - err0))
		echo "info: $p: $bytes bytes in 2-byte writes: $pad frames padded, $(summary_field /tmp/pad.out frags) frags in the dma-buf, $err checksum errors"
		# Each write leaves alone (the client waits until it went out).
		[ "$pad" -ge $((bytes / 2)) ] || { echo "$p: only $pad frames padded"; return 1; }
		# Every payload byte in the dma-buf, none in host memory.
		[ "$(summary_field /tmp/pad.out dmabuf_bytes)" = "$bytes" ] &&
			[ "$(summary_field /tmp/pad.out linear_bytes)" = 0 ] || { echo "$p: payload outside the dma-buf"; return 1; }
		[ "$err" = 0 ] || { echo "$p: TCP found $err bad checksums"; return 1; }
	done
	unload_clean || return 1
}

# The mlx5 personality reports CHECKSUM_COMPLETE, as mlx5e_handle_csum()
# does: a frame over 64 bytes that reaches the stack alone carries the sum
# of its bytes from the IP header on, and the stack judges it. In host
# memory (split off, so rx-gro-hw off: every frame alone), 2 MiB with TSO
# off and 2% of the frames corrupted past their headers: the NIC calls no
# sum bad (rxN_csum_bad unchanged), the stack finds exactly the corrupted
# frames (TcpInCsumErrors grows by rxN_wire_corrupted) and every other sum
# holds (those the device derived for segments whose sender left it the
# checksum), and the bytes arrive intact. Then, where mlx5 binds devmem
# (7.x), devmem RX under it (its split needs rx-gro-hw): 2 MiB validated,
# no checksum error, and frames
# reached the stack with CHECKSUM_COMPLETE (more reported than aggregates,
# each aggregate's first frame counted as built, as mlx5 counts it).
mlx5_checksum_complete() {
	setup_pair || return 1
	quiet_wire || return 1
	ethtool -K dmnic0 tso off gso off || return 1
	use_personality mlx5 || return 1
	local bytes=$(($(tier 2 32) * MIB)) cc0 bad0 err0 corr0 agg0 cc bad err corr agg
	cc0=$(rx_sum dmnic1 csum_complete peer)
	bad0=$(rx_sum dmnic1 csum_bad peer)
	err0=$(snmp_tcp InCsumErrors peer)
	corr0=$(rx_sum dmnic1 wire_corrupted peer)
	set_faults seed=5 corrupt_from=80 corrupt_to=1500 corrupt_ppm=20000 || return 1
	xfer_check 10.9.0.2 5340 $bytes || { faults_off; return 1; }
	faults_off || return 1
	cc=$(($(rx_sum dmnic1 csum_complete peer) - cc0))
	bad=$(($(rx_sum dmnic1 csum_bad peer) - bad0))
	err=$(($(snmp_tcp InCsumErrors peer) - err0))
	corr=$(($(rx_sum dmnic1 wire_corrupted peer) - corr0))
	echo "info: host memory: $cc frames reported CHECKSUM_COMPLETE, $corr corrupted on the wire, $err bad sums found by TCP, $bad by the NIC"
	[ "$corr" -gt 0 ] || { echo "nothing was corrupted"; return 1; }
	[ "$err" = "$corr" ] || { echo "TCP found $err bad sums; the wire corrupted $corr frames"; return 1; }
	[ "$bad" = 0 ] || { echo "the NIC judged $bad sums itself"; return 1; }
	[ "$cc" -ge $((bytes / 1448)) ] || { echo "only $cc frames reported CHECKSUM_COMPLETE"; return 1; }
	# (mlx5 binds devmem from 6.16 on, the kernels with devmem TX.)
	has_feature devmem-tx || { unload_clean; return; }
	devmem_admin mlx5 || return 1
	cc0=$(rx_sum dmnic1 csum_complete peer)
	agg0=$(rx_sum dmnic1 gro_packets peer)
	err0=$(snmp_tcp InCsumErrors peer)
	rs_transfer 5341 $((2 * MIB)) /tmp/cc.out || return 1
	cc=$(($(rx_sum dmnic1 csum_complete peer) - cc0))
	agg=$(($(rx_sum dmnic1 gro_packets peer) - agg0))
	err=$(($(snmp_tcp InCsumErrors peer) - err0))
	echo "info: devmem: $cc frames reported CHECKSUM_COMPLETE, $agg aggregates, $err bad sums found by TCP"
	[ "$err" = 0 ] || { echo "TCP found $err bad sums"; return 1; }
	[ "$cc" -gt "$agg" ] || { echo "no frame reached the stack with CHECKSUM_COMPLETE"; return 1; }
	unload_clean || return 1
}

# rx-checksumming off: the device's receive engine checks and reports no
# sum. In host memory (2 MiB, TSO off, 2% of the frames corrupted past their
# headers) the stack sums every frame: it finds exactly the corrupted ones
# (TcpInCsumErrors grows by rxN_wire_corrupted), the NIC calls no sum bad
# and reports none complete, and the bytes arrive intact. Into device
# memory the stack could not sum the payload (it would warn and drop it):
# the device drops those frames before the dma-buf, counted
# (rxN_csum_unverified), and none reaches it; with the engine back on the
# same receiver gets every byte.
rx_csum_off() {
	setup_pair || return 1
	# (Only TCP on the wire: a corrupted MLD report is no TCP error.)
	quiet_wire || return 1
	ethtool -K dmnic0 tso off gso off || return 1
	ip netns exec peer ethtool -K dmnic1 rx off || return 1
	ip netns exec peer ethtool -k dmnic1 | grep -q "^rx-checksumming: off" || { echo "rx-checksumming still on"; return 1; }
	local bytes=$(($(tier 2 32) * MIB)) cc0 bad0 err0 corr0 un0 dm0 cc bad err corr un dm pid cpid
	cc0=$(rx_sum dmnic1 csum_complete peer)
	bad0=$(rx_sum dmnic1 csum_bad peer)
	err0=$(snmp_tcp InCsumErrors peer)
	corr0=$(rx_sum dmnic1 wire_corrupted peer)
	set_faults seed=7 corrupt_from=80 corrupt_to=1500 corrupt_ppm=20000 || return 1
	xfer_check 10.9.0.2 5350 $bytes || { faults_off; return 1; }
	faults_off || return 1
	cc=$(($(rx_sum dmnic1 csum_complete peer) - cc0))
	bad=$(($(rx_sum dmnic1 csum_bad peer) - bad0))
	err=$(($(snmp_tcp InCsumErrors peer) - err0))
	corr=$(($(rx_sum dmnic1 wire_corrupted peer) - corr0))
	echo "info: host memory: $corr frames corrupted on the wire, $err bad sums found by TCP, $bad by the NIC, $cc reported complete"
	[ "$corr" -gt 0 ] || { echo "nothing was corrupted"; return 1; }
	[ "$err" = "$corr" ] || { echo "TCP found $err bad sums; the wire corrupted $corr frames"; return 1; }
	[ "$bad" = 0 ] && [ "$cc" = 0 ] || { echo "the NIC judged sums with its engine off"; return 1; }
	# Devmem: the receiver binds and listens; the client's data never lands.
	un0=$(rx_sum dmnic1 csum_unverified peer)
	dm0=$(rx_sum dmnic1 devmem_packets peer)
	rs_server 5351 /tmp/rco.out -c 10.9.0.1 -v 7
	pid=$RS_PID
	wait_listen 5351 || return 1
	ncdevmem-rs -s 10.9.0.2 -p 5351 -v 7 --bytes $((256 * 1024)) >/dev/null 2>&1 &
	cpid=$!
	local i
	for ((i = 0; i < 300; i++)); do
		[ $(($(rx_sum dmnic1 csum_unverified peer) - un0)) -ge 10 ] && break
		sleep 0.1
	done
	un=$(($(rx_sum dmnic1 csum_unverified peer) - un0))
	dm=$(($(rx_sum dmnic1 devmem_packets peer) - dm0))
	kill $cpid $pid 2>/dev/null
	wait $cpid $pid 2>/dev/null
	echo "info: device memory: $un frames dropped unverified, $dm into the dma-buf"
	[ "$un" -ge 10 ] || { echo "only $un frames dropped unverified"; return 1; }
	[ "$dm" = 0 ] || { echo "$dm frames went into device memory unverified"; return 1; }
	ip netns exec peer ethtool -K dmnic1 rx on || return 1
	rs_transfer 5352 $((256 * 1024)) /tmp/rcn.out || return 1
	unload_clean || return 1
}

# The mlx5 personality delivers a corrupted frame into device memory as
# mlx5 does: CHECKSUM_COMPLETE, the verdict the stack's. The stack cannot
# sum payload there: __skb_checksum() warns (WARN_ON_ONCE, re-armed for the
# test and expected on the console) and TCP drops the frame, and the sender
# sends it again. Devmem RX of 2 MiB with 1% of the frames corrupted past
# their headers: every byte validated, TCP found exactly the corrupted
# frames bad (TcpInCsumErrors), the NIC judged none (rxN_csum_bad), and the
# kernel warned.
mlx5_corrupted_into_device_memory() {
	setup_pair || return 1
	quiet_wire || return 1
	ethtool -K dmnic0 tso off gso off || return 1
	use_personality mlx5 || return 1
	devmem_admin mlx5 || return 1
	local bytes=$(($(tier 2 32) * MIB)) bad0 err0 corr0 dm0 bad err corr dm rc=0
	bad0=$(rx_sum dmnic1 csum_bad peer)
	err0=$(snmp_tcp InCsumErrors peer)
	corr0=$(rx_sum dmnic1 wire_corrupted peer)
	dm0=$(rx_sum dmnic1 devmem_packets peer)
	# (Stock kernels inline it into skb_checksum().)
	expect_warning "__skb_checksum|skb_checksum" || return 1
	rs_transfer 5353 $bytes /tmp/mcd.out --wire-faults seed=9,corrupt_from=80,corrupt_to=1500,corrupt_ppm=10000 || rc=1
	expect_warning_end
	[ $rc = 0 ] || return 1
	bad=$(($(rx_sum dmnic1 csum_bad peer) - bad0))
	err=$(($(snmp_tcp InCsumErrors peer) - err0))
	corr=$(($(rx_sum dmnic1 wire_corrupted peer) - corr0))
	dm=$(($(rx_sum dmnic1 devmem_packets peer) - dm0))
	echo "info: $corr frames corrupted on the wire, $dm into device memory, $err bad sums found by TCP, $bad by the NIC"
	[ "$corr" -gt 0 ] || { echo "nothing was corrupted"; return 1; }
	[ "$err" = "$corr" ] || { echo "TCP found $err bad sums; the wire corrupted $corr frames"; return 1; }
	[ "$bad" = 0 ] || { echo "the NIC judged $bad sums itself"; return 1; }
	warned "__skb_checksum|skb_checksum" || { echo "the kernel did not warn in __skb_checksum"; return 1; }
	unload_clean || return 1
}

# What the wire and TCP did since the last call (to fault_counts_then):
# prints them, and fails unless every fault happened, TCP queued out of
# order, and the sender retransmitted at least what the wire lost (but for
# a few frames without data: the handshake's last ACK, a FIN).
fault_counts_then() {
	F_LOST=$(rx_sum dmnic1 wire_lost peer) F_DUP=$(rx_sum dmnic1 wire_duplicated peer)
	F_REORD=$(rx_sum dmnic1 wire_reordered peer) F_CORR=$(rx_sum dmnic1 wire_corrupted peer)
	F_OFO=$(tcpext TCPOFOQueue peer) F_RT=$(snmp_tcp RetransSegs)
}
fault_counts_since() { # label
	local lost dup reord corr ofo rt
	lost=$(($(rx_sum dmnic1 wire_lost peer) - F_LOST))
	dup=$(($(rx_sum dmnic1 wire_duplicated peer) - F_DUP))
	reord=$(($(rx_sum dmnic1 wire_reordered peer) - F_REORD))
	corr=$(($(rx_sum dmnic1 wire_corrupted peer) - F_CORR))
	ofo=$(($(tcpext TCPOFOQueue peer) - F_OFO))
	rt=$(($(snmp_tcp RetransSegs) - F_RT))
	echo "info: $1: wire: $lost lost, $dup duplicated, $reord reordered, $corr corrupted; TCP: $ofo out-of-order, $rt retransmitted"
	[ "$lost" -gt 0 ] && [ "$dup" -gt 0 ] && [ "$reord" -gt 0 ] && [ "$corr" -gt 0 ] ||
		{ echo "$1: a fault never happened"; return 1; }
	[ "$ofo" -gt 0 ] || { echo "$1: no out-of-order segment"; return 1; }
	[ $((rt + 5)) -ge "$lost" ] || { echo "$1: $rt retransmitted, fewer than the $lost lost"; return 1; }
}

# Devmem TX into devmem RX, then zcrx into a dma-buf area, each through
# every fault at once at moderate rates on what dmnic1 receives (the
# sender's TSO and GSO off: each wire frame one segment): ncdevmem-rs sends
# the -v 7 pattern from its dma-buf (every zerocopy send completed, frames
# sent from device memory) to an ncdevmem-rs devmem receiver that validates
# every byte and returns every token; then an ncdevmem-rs zcrx receiver
# (queue 15, a dma-heap area) validates every byte of a plain sender's
# stream. Each: every fault happened, TCP queued out of order and
# retransmitted what was lost, and the knobs are back to 0 after.
devmem_tx_and_zcrx_faults() {
	setup_pair || return 1
	ethtool -K dmnic0 tso off gso off || return 1
	local bytes=$(($(tier 2 256) * MIB)) port=5360 pid dm0 dm
	dm0=$(tx_sum dmnic0 devmem_packets)
	fault_counts_then
	rs_server $port /tmp/wtx.out -c 10.9.0.1 -v 7 --wire-faults seed=31,$MODERATE_FAULTS
	pid=$RS_PID
	wait_listen $port || return 1
	ncdevmem-rs -f dmnic0 -s 10.9.0.2 -c 10.9.0.1 -p $port -v 7 --bytes $bytes --size $((4 * MIB)) \
		>/tmp/wtx.tx 2>/tmp/wtx.tx.err || { tail -3 /tmp/wtx.tx.err; return 1; }
	wait $pid || { tail -3 /tmp/wtx.out.err; return 1; }
	check_rs_summary /tmp/wtx.out $bytes || return 1
	echo "info: sender: $(cat /tmp/wtx.tx)"
	[ "$(summary_field /tmp/wtx.tx completions)" = "$(summary_field /tmp/wtx.tx sends)" ] ||
		{ echo "not every devmem TX send completed"; return 1; }
	dm=$(($(tx_sum dmnic0 devmem_packets) - dm0))
	[ "$dm" -gt $((bytes / 1448)) ] || { echo "only $dm frames sent from device memory"; return 1; }
	fault_counts_since "devmem TX to devmem RX" || return 1
	faults_are_off || { echo "(after devmem TX)"; return 1; }
	port=5361
	dm0=$(stat_of dmnic1 rx15_devmem_packets peer)
	fault_counts_then
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	ip netns exec peer sh -c 'mount -t debugfs none /sys/kernel/debug && exec "$@"' sh \
		ncdevmem-rs -l --zcrx -s 10.9.0.2 -c 10.9.0.1 -p $port -f dmnic1 -t 15 -q 1 -v 7 \
		--provider dma-heap --size $((32 * MIB)) --wire-faults seed=32,$MODERATE_FAULTS \
		>/tmp/wz.out 2>/tmp/wz.err &
	pid=$!
	wait_listen $port || { cat /tmp/wz.err; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/wz.cli || { cat /tmp/wz.cli; return 1; }
	wait $pid || { tail -3 /tmp/wz.err; return 1; }
	echo "info: zcrx: $(cat /tmp/wz.out)"
	[ "$(summary_field /tmp/wz.out bytes)" = $bytes ] || { echo "zcrx received $(summary_field /tmp/wz.out bytes) bytes"; return 1; }
	[ "$(summary_field /tmp/wz.out validation_errors)" = 0 ] || { echo "zcrx validation errors"; return 1; }
	[ "$(stat_of dmnic1 rx15_devmem_packets peer)" -gt "$dm0" ] || { echo "nothing went into the area"; return 1; }
	fault_counts_since zcrx || return 1
	faults_are_off || { echo "(after zcrx)"; return 1; }
	unload_clean || return 1
}

run_test wire/seeded-and-counted seeded_and_counted
run_test wire/ncdevmem-rs-all-faults rs_all_faults
run_test wire/netem-sender-egress netem_sender
run_test wire/delay-keeps-order delay_keeps_order
run_test wire/heavy-loss-and-killed-with-tokens-out heavy_loss_and_killed
run_test wire/padded-small-segments-into-device-memory padded_small_segments
run_test wire/mlx5-checksum-complete mlx5_checksum_complete
run_test wire/rx-checksumming-off rx_csum_off
run_test wire/mlx5-corrupted-into-device-memory mlx5_corrupted_into_device_memory
run_test wire/devmem-tx-and-zcrx-through-all-faults devmem_tx_and_zcrx_faults
exit $GUEST_FAILED
