#!/bin/bash
# Guest tests: device memory TCP on devmemnic (queue management, devmem page
# pools, bind-rx, cmsgs and token return), with upstream ncdevmem unmodified
# and ncdevmem-rs.
source /extra/lib.sh
MIB=$((1024 * 1024))

# Upstream ncdevmem served BYTES: it exited 0, validated every byte and counted
# them all (each frag's token it returns itself).
upstream_server_ok() { # pid stderr-file bytes
	local total
	wait "$1" || { echo "upstream ncdevmem failed:"; grep -v '^received\|^recvmsg\|^total' "$2" | tail -5; return 1; }
	grep -q "Failed validation" "$2" && { echo "validation failed"; return 1; }
	total=$(sed -n 's/^total_received=\([0-9]*\)$/\1/p' "$2" | tail -1)
	echo "info: upstream ncdevmem total_received=$total, $(grep -c '^received frag' "$2") frags, each token returned"
	[ "$total" = "$3" ] || { echo "total_received=$total, want $3"; return 1; }
}

upstream_ncdevmem() {
	setup_pair || return 1
	local bytes=$(($(tier 32 1024) * MIB)) hds0 dm0 q
	hds0=$(rx_sum dmnic1 hds_packets peer)
	dm0=$(rx_sum dmnic1 devmem_packets peer)
	# Upstream configures the NIC itself (through ethtool). 6.12's runs its
	# built-in checks before serving (empty queue list, header split off,
	# deactivating a bound queue) and binds queues 8..15 by default; 7.2's
	# binds the last queue (it says which).
	ip netns exec peer ncdevmem -s 10.9.0.2 -c 10.9.0.1 -l -p 5201 -v 7 -f dmnic1 \
		>/tmp/up.out 2>/tmp/up.err &
	local spid=$!
	wait_listen 5201 || { cat /tmp/up.err | tail; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p 5201 -v 7 --bytes $bytes >/tmp/up.client || return 1
	echo "info: $(cat /tmp/up.client)"
	upstream_server_ok $spid /tmp/up.err $bytes || return 1
	q=$(sed -n 's/^using queues \([0-9]*\)\.\..*/\1/p' /tmp/up.err)
	q=${q:-8}
	local dm hds dmq
	dm=$(($(rx_sum dmnic1 devmem_packets peer) - dm0))
	hds=$(($(rx_sum dmnic1 hds_packets peer) - hds0))
	dmq=$(stat_of dmnic1 "rx${q}_devmem_packets" peer)
	echo "info: $hds header-split frames, $dm into the dma-buf, $dmq of them on queue $q"
	[ "$dm" -gt 0 ] && [ "$dm" = "$hds" ] || { echo "payload did not go to the dma-buf"; return 1; }
	[ "$dmq" = "$dm" ] || { echo "devmem frames on other queues than $q"; return 1; }
}

# Receive coalescing on (as bnxt runs devmem), the sender's TSO off, so frames
# arrive MSS-sized and the device merges them into the dma-buf; every byte
# validated, every token returned. The server is upstream's ncdevmem, except
# in 6.12's make check: 6.12's (the ncdevmem without TX mode) runs its
# built-in checks first, five binds of a 64 MB dma-buf that cost the 6.12
# core about 90 s under TCG (measured: 20 s for a bind that fails on its
# empty queue list, before the driver is asked), which
# devmem/upstream-ncdevmem already spends; there ncdevmem-rs serves, and make
# stress keeps upstream's. The strict model packs payload back to back, a
# segment continuing its aggregate's last frag in the same 4 KiB net_iov
# extending it: about one frag (and token) per buffer, not one per segment
# (724 a MiB at MSS 1448).
ncdevmem_gro() {
	setup_pair || return 1
	ethtool -K dmnic0 tso off || return 1
	ip netns exec peer ethtool -K dmnic1 rx-gro-hw on || return 1
	local bytes=$(($(tier 16 256) * MIB)) gp0 gp server=upstream err=/tmp/upg.err ext0 ext frags
	has_feature devmem-tx || [ "$DMN_TIER" = stress ] || { server=ncdevmem-rs err=/tmp/upg.out.err; }
	gp0=$(rx_sum dmnic1 gro_packets peer) ext0=$(rx_sum dmnic1 frags_extended peer)
	if [ $server = upstream ]; then
		ip netns exec peer ncdevmem -s 10.9.0.2 -c 10.9.0.1 -l -p 5211 -v 7 -f dmnic1 \
			>/tmp/upg.out 2>$err &
		RS_PID=$!
	else
		rs_server 5211 /tmp/upg.out -c 10.9.0.1 -v 7
	fi
	local spid=$RS_PID
	wait_listen 5211 || { tail $err; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p 5211 -v 7 --bytes $bytes >/tmp/upg.client || return 1
	if [ $server = upstream ]; then
		upstream_server_ok $spid $err $bytes || return 1
		frags=$(grep -c '^received frag' $err)
	else
		wait $spid || { tail -3 $err; return 1; }
		check_rs_summary /tmp/upg.out $bytes || return 1
		frags=$(summary_field /tmp/upg.out frags)
	fi
	gp=$(($(rx_sum dmnic1 gro_packets peer) - gp0)) ext=$(($(rx_sum dmnic1 frags_extended peer) - ext0))
	echo "info: $gp coalesced packets, $ext segments extended a frag, $((frags * MIB / bytes)) frags a MiB"
	[ "$gp" -gt 10 ] || { echo "too few coalesced packets"; return 1; }
	[ "$ext" -gt 0 ] && [ $((frags * MIB / bytes)) -le 400 ] || { echo "payload not packed"; return 1; }
}

# The server configures the NIC itself (header split off beforehand, no rule),
# receives 32 MiB (make stress: 128 MiB) into a dma-buf from PROVIDER, and
# restores the NIC.
rs_provider() { # provider
	setup_pair || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split off || return 1
	local bytes=$(($(tier 32 128) * MIB)) pid before
	before=$(nic_snapshot)
	rs_server 5202 /tmp/rs.out -c 10.9.0.1 -v 7 --provider "$1"
	pid=$RS_PID
	wait_listen 5202 || return 1
	ip netns exec peer ethtool -n dmnic1 | grep -q "Dest port: 5202" || { echo "no steering rule while serving"; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p 5202 -v 7 --bytes $bytes >/tmp/rs.client || return 1
	wait $pid || { cat /tmp/rs.out.err | tail -3; return 1; }
	check_rs_summary /tmp/rs.out $bytes || return 1
	[ "$(nic_snapshot)" = "$before" ] || { echo "NIC not restored:"; nic_diff "$before"; return 1; }
	echo "info: header split, channels, RSS table and ntuple rules restored"
}

# A sender that writes its own checksums (dmnic0's TX checksum offload off,
# as a frame forwarded from another NIC or a raw socket's arrives): the
# receiving device verifies each segment's sum before its payload goes to
# the dma-buf (the stack cannot check a sum over device memory), so 16 MiB
# arrive validated in the dma-buf and no sum is counted bad.
rs_sender_checksums() {
	setup_pair || return 1
	ethtool -K dmnic0 tx off >/dev/null || return 1
	local bytes=$((16 * MIB)) pid
	rs_server 5203 /tmp/rc.out -c 10.9.0.1 -v 7
	pid=$RS_PID
	wait_listen 5203 || return 1
	ncdevmem-rs -s 10.9.0.2 -p 5203 -v 7 --bytes $bytes >/tmp/rc.client || return 1
	wait $pid || { tail -3 /tmp/rc.out.err; return 1; }
	check_rs_summary /tmp/rc.out $bytes || return 1
	[ "$(rx_sum dmnic1 csum_bad peer)" = 0 ] || { echo "sums counted bad: $(rx_sum dmnic1 csum_bad peer)"; return 1; }
	[ "$(rx_sum dmnic1 drops peer)" = 0 ] || { echo "frames dropped: $(rx_sum dmnic1 drops peer)"; return 1; }
}

# The same over IPv6 (flow-type tcp6 rule), 32 MiB.
rs_ipv6() {
	setup_pair || return 1
	local bytes=$((32 * MIB)) pid
	ip netns exec peer ncdevmem-rs -l -s fd00::2 -c fd00::1 -p 5206 -f dmnic1 -v 7 >/tmp/r6.out 2>/tmp/r6.out.err &
	pid=$!
	wait_listen 5206 || return 1
	ip netns exec peer ethtool -n dmnic1 | grep -q "TCP over IPv6" || { echo "no tcp6 rule"; return 1; }
	ncdevmem-rs -s fd00::2 -p 5206 -v 7 --bytes $bytes >/dev/null || return 1
	wait $pid || { tail -3 /tmp/r6.out.err; return 1; }
	check_rs_summary /tmp/r6.out $bytes
}

# A plain TCP sender (dmn-xfer, ephemeral source port, its own byte pattern):
# without -c the rule matches the destination only; no validation (-v 0).
rs_plain_sender() {
	setup_pair || return 1
	local bytes=$((32 * MIB)) pid
	rs_server 5207 /tmp/ps.out -v 0
	pid=$RS_PID
	wait_listen 5207 || return 1
	dmn-xfer send 10.9.0.2 5207 $bytes 9 >/dev/null || return 1
	wait $pid || { tail -3 /tmp/ps.out.err; return 1; }
	check_rs_summary /tmp/ps.out $bytes
}

# ncdevmem-rs --selftest: upstream's built-in checks and its own, each a line.
rs_selftest() {
	setup_pair || return 1
	local before out ok
	before=$(nic_snapshot)
	# (Its dma-buf at rs_server's size: the checks bind it again and again,
	# and at 64 MB this test took 98 s on 6.12 under TCG, 25 s on 7.2.)
	out=$(ip netns exec peer ncdevmem-rs --selftest -f dmnic1 --size "$(tier $((16 * MIB)) 65536000)" 2>&1) ||
		{ echo "$out" | grep -v "^ok"; return 1; }
	ok=$(echo "$out" | grep -c "^ok ")
	echo "info: $ok checks passed"
	echo "$out" | grep -q "^not ok" && { echo "$out" | grep "^not ok"; return 1; }
	[ "$ok" -ge 13 ] || { echo "only $ok checks ran"; return 1; }
	[ "$(nic_snapshot)" = "$before" ] || { echo "NIC not restored after the selftest"; return 1; }
}

# Ctrl-C (SIGINT) while waiting for a client: the binding goes, the NIC is
# restored, the exit status says interrupted.
rs_sigint_restores() {
	setup_pair || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split off || return 1
	local before pid rc
	before=$(nic_snapshot)
	rs_server 5208 /tmp/si.out -c 10.9.0.1
	pid=$RS_PID
	wait_listen 5208 || return 1
	ip netns exec peer ethtool -g dmnic1 | grep -qi "split:.*on" || { echo "header split not on while serving"; return 1; }
	kill -INT $pid
	wait $pid
	rc=$?
	[ "$rc" = 130 ] || { echo "exit status $rc after SIGINT, want 130"; tail -3 /tmp/si.out.err; return 1; }
	[ "$(nic_snapshot)" = "$before" ] || { echo "NIC not restored after SIGINT:"; nic_diff "$before"; return 1; }
	# The binding went with the process: header split can be turned off again.
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split off || { echo "queues still bound"; return 1; }
}

# While a binding exists: no header split off, no rmmod, no shrinking past it.
bound_queue_guards() {
	setup_pair || return 1
	devmem_nic_setup 5203 || return 1
	local pid out
	rs_server 5203 /tmp/g.out -c 10.9.0.1 -v 7 --no-config
	pid=$RS_PID
	wait_listen 5203 || return 1
	out=$(ip netns exec peer ethtool -G dmnic1 tcp-data-split off 2>&1) && { echo "split off while bound"; return 1; }
	# (6.12: devmemnic's reason; 7.2's core refuses first, with its own.)
	echo "$out" | grep -qE "needs TCP data split|tcp-data-split while device has memory provider" ||
		{ echo "no reason given: $out"; return 1; }
	rmmod devmemnic 2>/dev/null && { echo "rmmod while bound succeeded"; return 1; }
	ip netns exec peer ethtool -L dmnic1 combined 8 2>/dev/null && { echo "bound queues deactivated"; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p 5203 -v 7 --bytes $((8 * MIB)) >/dev/null || return 1
	wait $pid || return 1
	check_rs_summary /tmp/g.out $((8 * MIB)) || return 1
	# Binding gone (socket closed): queue 8 is back on host memory.
	local dm0 hds0
	dm0=$(stat_of dmnic1 rx8_devmem_packets peer)
	hds0=$(stat_of dmnic1 rx8_hds_packets peer)
	ip netns exec peer ethtool -N dmnic1 flow-type tcp4 dst-port 5213 queue 8 >/dev/null || return 1
	xfer_check 10.9.0.2 5213 $((8 * MIB)) >/dev/null || return 1
	[ "$(stat_of dmnic1 rx8_devmem_packets peer)" = "$dm0" ] || { echo "devmem after unbind"; return 1; }
	[ "$(stat_of dmnic1 rx8_hds_packets peer)" -gt "$hds0" ] || { echo "queue 8 did not receive"; return 1; }
	rmmod devmemnic || { echo "rmmod after unbind failed"; return 1; }
}

# A small dma-buf (4 MB for 16 MiB) and tokens withheld until no data has come
# for 3 s (so however slow the link, it runs dry): the queue runs dry (counted
# buffer allocation failures, TCP retransmits), then recovers, every byte valid.
token_exhaustion() {
	setup_pair || return 1
	devmem_nic_setup 5204 || return 1
	local bytes=$((${TE_MIB:-16} * MIB)) pid af0 retr0
	with_wire_faults || return 1
	af0=$(stat_of dmnic1 rx8_alloc_fail peer)
	retr0=$(awk '/^Tcp:/ && ++n == 2 { print $13 }' /proc/net/snmp)
	rs_server 5204 /tmp/x.out -c 10.9.0.1 -v 7 --no-config --size $((${TE_DMABUF_MIB:-4} * MIB)) --hold-tokens-secs 3
	pid=$RS_PID
	wait_listen 5204 || return 1
	ncdevmem-rs -s 10.9.0.2 -p 5204 -v 7 --bytes $bytes >/dev/null || return 1
	wait $pid || { tail -3 /tmp/x.out.err; return 1; }
	check_rs_summary /tmp/x.out $bytes || return 1
	local af retr
	af=$(($(stat_of dmnic1 rx8_alloc_fail peer) - af0))
	retr=$(($(awk '/^Tcp:/ && ++n == 2 { print $13 }' /proc/net/snmp) - retr0))
	echo "info: while tokens were held: $af frames found no dma-buf buffer, $retr TCP retransmits"
	[ "$af" -gt 0 ] || { echo "the dma-buf never ran out"; return 1; }
	[ "$retr" -gt 0 ] || { echo "no retransmits"; return 1; }
	wire_faults_report || return 1
}

# With WIRE_FAULTS (set_faults words) set: the sender's TSO and GSO off (a
# wire frame a segment) and dmnic1's wire faults on, counters noted for
# wire_faults_report. Without: nothing.
with_wire_faults() {
	[ -n "${WIRE_FAULTS:-}" ] || return 0
	ethtool -K dmnic0 tso off gso off || return 1
	WF_LOST=$(rx_sum dmnic1 wire_lost peer) WF_CORR=$(rx_sum dmnic1 wire_corrupted peer)
	WF_OFO=$(tcpext TCPOFOQueue peer)
	# shellcheck disable=SC2086 # (words)
	set_faults $WIRE_FAULTS
}

# Turns the faults with_wire_faults set off and says what they did: frames
# were lost and corrupted, and TCP queued out of order.
wire_faults_report() {
	[ -n "${WIRE_FAULTS:-}" ] || return 0
	faults_off || return 1
	local lost corr ofo
	lost=$(($(rx_sum dmnic1 wire_lost peer) - WF_LOST))
	corr=$(($(rx_sum dmnic1 wire_corrupted peer) - WF_CORR))
	ofo=$(($(tcpext TCPOFOQueue peer) - WF_OFO))
	echo "info: wire faults ($WIRE_FAULTS): $lost frames lost, $corr corrupted; $ofo segments out of order"
	[ "$lost" -gt 0 ] && [ "$corr" -gt 0 ] && [ "$ofo" -gt 0 ] || { echo "the faults did not happen"; return 1; }
}

# A dma-buf (1 MiB) far smaller than the receive window and a reader that
# holds every token until no data came for 3 s, through every fault at once
# at moderate rates: the dma-buf runs out (alloc_fail counted), TCP
# retransmits into it once tokens are back, and 4 MiB arrive validated.
token_exhaustion_faults() {
	TE_MIB=4 TE_DMABUF_MIB=1 WIRE_FAULTS="seed=52 ${MODERATE_FAULTS//,/ }" token_exhaustion
}

# Bind, transfer, unbind, again and again, while a validated flow runs on the
# RSS queues 0-7. Each cycle's server configures the NIC (its own rule, for
# its own port: a client reusing the last cycle's 4-tuple would find it in
# TIME_WAIT) and restores it when it exits. CYCLES in the guest environment
# overrides the count.
bind_unbind_loop() {
	setup_pair || return 1
	with_wire_faults || return 1
	ip netns exec peer ethtool -X dmnic1 equal 8 || return 1
	ip netns exec peer dmn-xfer recv 5299 $((1 << 40)) 8 >/tmp/bg.recv 2>&1 &
	local bg=$!
	wait_listen 5299 || return 1
	dmn-xfer send 10.9.0.2 5299 $((1 << 40)) 8 >/dev/null 2>&1 &
	local bgs=$!
	local i port pid fails=0 cycles=${CYCLES:-$(tier 4 200)} bytes=$((1 * MIB))
	for i in $(seq 1 "$cycles"); do
		port=$((5310 + i))
		rs_server $port /tmp/l.out -c 10.9.0.1 -v 7 --size $((4 * MIB))
		pid=$RS_PID
		if ! wait_listen $port; then
			fails=$((fails + 1))
			kill $pid
			wait $pid
			continue
		fi
		if ! ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>&1; then
			echo "cycle $i: client failed"
			fails=$((fails + 1))
			kill $pid
		fi
		wait $pid || { echo "cycle $i: server failed: $(tail -1 /tmp/l.out.err)"; fails=$((fails + 1)); }
		check_rs_summary /tmp/l.out $bytes >/dev/null || { echo "cycle $i: bad summary"; fails=$((fails + 1)); }
	done
	# The background flow ends with its sender: the receiver must have seen
	# data, all of it valid.
	kill $bgs
	wait $bgs
	wait $bg
	echo "info: $cycles bind/transfer/unbind cycles under traffic, $fails failures; background flow: $(cat /tmp/bg.recv)"
	[ "$fails" = 0 ] || return 1
	grep -q " errors=0$" /tmp/bg.recv || { echo "background flow corrupted"; return 1; }
	[ "$(sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' /tmp/bg.recv)" -gt $((${BG_MIB_MIN:-8} * MIB)) ] || { echo "background flow stalled"; return 1; }
	ip netns exec peer ethtool -n dmnic1 | grep -q "Total 0 rules" || { echo "rules left behind"; return 1; }
	wire_faults_report || return 1
	unload_clean || return 1
	echo "info: after rmmod: no devmem buffer outstanding"
}

# The same loop through every fault at once at moderate rates on what
# dmnic1 receives, the cycles' devmem flows and the background flow alike:
# 3 cycles (100 in make stress), each validated.
bind_unbind_loop_faults() {
	CYCLES=${CYCLES:-$(tier 3 100)} BG_MIB_MIN=1 WIRE_FAULTS="seed=51 ${MODERATE_FAULTS//,/ }" bind_unbind_loop
}

# Upstream 7.2's HDS sweep (devmem.py check_rx_hds), ncdevmem unmodified:
# for each payload size from 1 to 8192 bytes, a fresh ncdevmem -L (fail on
# any payload outside the dma-buf) receives one write of that size; every
# size must be split, even a 1-byte payload (hds-thresh 0). Each size binds
# upstream's 64 MB dma-buf anew (about 12 s under TCG): make check sweeps 3
# of upstream's 12 sizes (the smallest, a page, the largest), make stress
# all 12.
upstream_hds_sweep() {
	setup_pair || return 1
	local size port=5230 pid n=0 below0
	below0=$(rx_sum dmnic1 below_hds_thresh peer)
	for size in $(tier "1 4096 8192" "1 8 16 32 64 128 256 512 1024 2048 4096 8192"); do
		port=$((port + 1))
		ip netns exec peer ncdevmem -l -f dmnic1 -s 10.9.0.2 -p $port -L >/tmp/hds.$size 2>&1 &
		pid=$!
		wait_listen $port || return 1
		dmn-xfer send 10.9.0.2 $port $size 3 >/dev/null || { echo "size $size: send failed"; return 1; }
		wait $pid || { echo "size $size: ncdevmem failed: $(grep -v '^received\|^recvmsg' /tmp/hds.$size | tail -3)"; return 1; }
		n=$((n + 1))
	done
	echo "info: $n payload sizes from 1 to 8192 bytes received into the dma-buf, no linear payload"
	[ "$(rx_sum dmnic1 below_hds_thresh peer)" = "$below0" ] || { echo "frames were left whole"; return 1; }
}

# Linux 7.3's large devmem RX buffers: bind-rx's rx-page-size (what
# devmem.py check_rx_large_niov asks for, 16 KiB), the dma-buf on 2 MiB huge
# pages as upstream's -b makes it. Frames arrive as the sender's TSO made them
# (the pair carries them whole), so with buffers of 16 KiB a frag can exceed a
# page; it never exceeds a buffer.
HUGE_PAGES_FOR_DEVMEM=40

# Upstream's 7.3 ncdevmem unmodified, -b 16384: every byte validated, the
# payload in the dma-buf, frags larger than a page and none larger than 16 KiB.
upstream_ncdevmem_large_buffers() {
	setup_pair || return 1
	reserve_huge_pages $HUGE_PAGES_FOR_DEVMEM || return 1
	local bytes=$(($(tier 16 128) * MIB)) dm0 dm largest
	dm0=$(rx_sum dmnic1 devmem_packets peer)
	ip netns exec peer ncdevmem -s 10.9.0.2 -c 10.9.0.1 -l -p 5250 -v 7 -f dmnic1 -b 16384 \
		>/tmp/ul.out 2>/tmp/ul.err &
	local spid=$!
	wait_listen 5250 || { tail -5 /tmp/ul.err; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p 5250 -v 7 --bytes $bytes >/tmp/ul.client || return 1
	upstream_server_ok $spid /tmp/ul.err $bytes || return 1
	dm=$(($(rx_sum dmnic1 devmem_packets peer) - dm0))
	largest=$(sed -n 's/^received frag.* frag_size=\([0-9]*\),.*/\1/p' /tmp/ul.err | sort -n | tail -1)
	echo "info: $dm frames into the dma-buf, largest frag $largest bytes"
	[ "$dm" -gt 0 ] || { echo "payload did not go to the dma-buf"; return 1; }
	[ "${largest:-0}" -gt 4096 ] && [ "$largest" -le 16384 ] || { echo "largest frag ${largest:-none}: not 16 KiB buffers"; return 1; }
	release_huge_pages
}

# ncdevmem-rs -b 16384 (its own summary: validated, every token returned).
rs_large_buffers() {
	setup_pair || return 1
	reserve_huge_pages $HUGE_PAGES_FOR_DEVMEM || return 1
	local bytes=$(($(tier 32 128) * MIB)) largest
	rs_server 5251 /tmp/rl.out -c 10.9.0.1 -v 7 -b 16384
	wait_listen 5251 || { tail -3 /tmp/rl.out.err; return 1; }
	grep -q "(16384-byte buffers)" /tmp/rl.out.err || { echo "not bound with 16 KiB buffers: $(cat /tmp/rl.out.err)"; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p 5251 -v 7 --bytes $bytes >/tmp/rl.client || return 1
	wait $RS_PID || { tail -3 /tmp/rl.out.err; return 1; }
	check_rs_summary /tmp/rl.out $bytes || return 1
	largest=$(summary_field /tmp/rl.out largest_frag)
	[ "$largest" -gt 4096 ] && [ "$largest" -le 16384 ] || { echo "largest frag $largest: not 16 KiB buffers"; return 1; }
	release_huge_pages
}

# Buffer sizes bind-rx must refuse, each with its reason, the NIC restored
# after each and nothing left bound: not a power of two (the core's check),
# below a page (the attribute's policy), above what a queue takes (64 KiB:
# the driver's ndo_validate_qcfg).
rx_page_size_refused() {
	setup_pair || return 1
	reserve_huge_pages $HUGE_PAGES_FOR_DEVMEM || return 1
	local size want before
	before=$(nic_snapshot)
	for size in 12288 2048 131072; do
		case $size in
		12288) want="rx-page-size must be a power of 2" ;;
		2048) want="integer out of range" ;;
		131072) want="RX buffer size not supported by this queue" ;;
		esac
		if ip netns exec peer ncdevmem-rs -l -s 10.9.0.2 -p 5252 -f dmnic1 -b $size --size $((4 * MIB)) \
			>/tmp/rr.out 2>/tmp/rr.err; then
			echo "-b $size was accepted"
			return 1
		fi
		grep -q "with $size-byte buffers failed: .*$want" /tmp/rr.err || { echo "-b $size: $(tail -2 /tmp/rr.err)"; return 1; }
		echo "info: -b $size: $(grep -o 'failed: .*' /tmp/rr.err)"
		[ "$(nic_snapshot)" = "$before" ] || { echo "NIC not restored after -b $size:"; nic_diff "$before"; return 1; }
	done
	release_huge_pages
	unload_clean || return 1
}

run_test devmem/upstream-ncdevmem upstream_ncdevmem
run_test devmem/upstream-ncdevmem-16k-buffers upstream_ncdevmem_large_buffers
run_test devmem/ncdevmem-rs-16k-buffers rs_large_buffers
run_test devmem/rx-page-size-refused rx_page_size_refused
run_test devmem/upstream-hds-sweep upstream_hds_sweep
run_test devmem/ncdevmem-gro-hw ncdevmem_gro
run_test devmem/ncdevmem-rs-udmabuf rs_provider udmabuf
run_test devmem/ncdevmem-rs-dma-heap rs_provider dma-heap
run_test devmem/ncdevmem-rs-ipv6 rs_ipv6
run_test devmem/sender-checksums-in-software rs_sender_checksums
run_test devmem/ncdevmem-rs-plain-sender rs_plain_sender
run_test devmem/ncdevmem-rs-selftest rs_selftest
run_test devmem/ncdevmem-rs-sigint-restores rs_sigint_restores
run_test devmem/bound-queue-guards bound_queue_guards
run_test devmem/token-exhaustion-recovers token_exhaustion
run_test devmem/token-exhaustion-under-faults token_exhaustion_faults
run_test devmem/bind-unbind-loop-under-traffic bind_unbind_loop
run_test devmem/bind-unbind-loop-under-faults bind_unbind_loop_faults
exit $GUEST_FAILED
