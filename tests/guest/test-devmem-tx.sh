#!/bin/bash
# Guest tests: devmem TX on devmemnic (kernels with bind-tx): a dma-buf bound
# to dmnic0 for sending, frames whose payload devmemnic reads by bus address
# into the peer's receive path (host memory or the peer's own dma-buf).
source /extra/lib.sh
# (Each test needs what tests.manifest says of the kernel; run_test skips
# it, with the reason, on a kernel without.)

# Upstream ncdevmem (unmodified) sends two lines from a dma-buf to a plain
# listener, as upstream's devmem.py check_tx (and with -z CHUNK,
# check_tx_chunks): what arrives must be exactly the lines, and dmnic0 must
# have sent frames from device memory.
upstream_tx_to_listener() { # [chunk]
	setup_pair || return 1
	local port=$((5400 + ${1:-0})) dm0 dm got
	dm0=$(tx_sum dmnic0 devmem_packets)
	# (busybox nc prints what it receives and exits when the sender closes.)
	ip netns exec peer nc -l -p $port </dev/null >/tmp/tx.got 2>/tmp/tx.nc &
	local lpid=$!
	wait_listen $port || return 1
	printf 'hello\nworld\n' | ncdevmem -f dmnic0 -s 10.9.0.2 -p $port ${1:+-z $1} >/tmp/tx.out 2>&1 ||
		{ tail -5 /tmp/tx.out; kill $lpid; return 1; }
	wait $lpid
	got=$(cat /tmp/tx.got)
	dm=$(($(tx_sum dmnic0 devmem_packets) - dm0))
	echo "info: listener got $(wc -c </tmp/tx.got) bytes; $dm frames sent from device memory; $(grep -c sendmsg_ret /tmp/tx.out) sendmsg calls, each completed"
	[ "$got" = "$(printf 'hello\nworld')" ] || { echo "listener got '$got'"; return 1; }
	[ "$dm" -ge 2 ] || { echo "no frame was sent from device memory"; return 1; }
	grep -q "tx ok" /tmp/tx.out || { echo "ncdevmem did not report tx ok"; return 1; }
}

# Upstream ncdevmem sends lines of the -v 7 pattern from a dma-buf to an
# ncdevmem-rs devmem receiver on dmnic1: dma-buf to dma-buf, header split on
# the way, every byte validated and every token returned.
upstream_tx_to_devmem_rx() {
	setup_pair || return 1
	local port=5410 lines=200 bytes pid dm0 dm
	bytes=$((lines * 7))
	dm0=$(tx_sum dmnic0 devmem_packets)
	rs_server $port /tmp/t2.out -c 10.9.0.1 -v 7
	pid=$RS_PID
	wait_listen $port || return 1
	yes "$(printf '\001\002\003\004\005\006')" | head -n $lines |
		ncdevmem -f dmnic0 -s 10.9.0.2 -c 10.9.0.1 -p $port >/tmp/t2.tx 2>&1 ||
		{ tail -5 /tmp/t2.tx; return 1; }
	wait $pid || { tail -3 /tmp/t2.out.err; return 1; }
	check_rs_summary /tmp/t2.out $bytes || return 1
	dm=$(($(tx_sum dmnic0 devmem_packets) - dm0))
	echo "info: $lines lines sent from device memory in $dm frames"
	[ "$dm" -ge "$lines" ] || { echo "only $dm frames from device memory, want $lines"; return 1; }
}

# The dma-buf ncdevmem-rs sends from (its pattern cycles through it).
TX_DMABUF=$((4 * 1024 * 1024))

# The sender's summary: BYTES sent, every zerocopy send completed, none copied.
check_tx_summary() { # file bytes
	local f="$1" bytes="$2"
	echo "info: $(cat "$f")"
	[ "$(summary_field "$f" bytes)" = "$bytes" ] || { echo "sent $(summary_field "$f" bytes), want $bytes"; return 1; }
	[ "$(summary_field "$f" sends)" -gt 0 ] || { echo "no sends"; return 1; }
	[ "$(summary_field "$f" completions)" = "$(summary_field "$f" sends)" ] || { echo "not every send completed"; return 1; }
	[ "$(summary_field "$f" copied)" = 0 ] || { echo "sends were copied"; return 1; }
}

# ncdevmem-rs sends the -v 7 pattern from its dma-buf to an ncdevmem-rs
# devmem receiver: dma-buf to dma-buf, every byte validated on arrival.
rs_tx_to_devmem_rx() {
	setup_pair || return 1
	local port=5420 bytes=$(($(tier 32 256) * 1024 * 1024)) pid dm0 dm drop0
	dm0=$(tx_sum dmnic0 devmem_packets)
	drop0=$(tx_sum dmnic0 dropped)
	rs_server $port /tmp/t3.out -c 10.9.0.1 -v 7
	pid=$RS_PID
	wait_listen $port || return 1
	ncdevmem-rs -f dmnic0 -s 10.9.0.2 -c 10.9.0.1 -p $port -v 7 --bytes $bytes --size $TX_DMABUF \
		>/tmp/t3.tx 2>/tmp/t3.tx.err || { tail -3 /tmp/t3.tx.err; return 1; }
	wait $pid || { tail -3 /tmp/t3.out.err; return 1; }
	check_tx_summary /tmp/t3.tx $bytes || return 1
	check_rs_summary /tmp/t3.out $bytes || return 1
	dm=$(($(tx_sum dmnic0 devmem_packets) - dm0))
	echo "info: $dm frames sent from device memory"
	[ "$dm" -gt 0 ] || { echo "no frame sent from device memory"; return 1; }
	[ "$(tx_sum dmnic0 dropped)" = "$drop0" ] || { echo "dmnic0 dropped frames"; return 1; }
}

# The same pattern from device memory into host memory (header split off on
# the receiver: the linear path), in 1000-byte iovecs (-z): a plain
# listener's bytes must equal the pattern.
rs_tx_chunks_to_host() {
	setup_pair || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split off || return 1
	local port=5421 bytes=$((8 * 1024 * 1024)) lpid want got
	ip netns exec peer nc -l -p $port </dev/null >/tmp/t4.got 2>/tmp/t4.nc &
	lpid=$!
	wait_listen $port || return 1
	ncdevmem-rs -f dmnic0 -s 10.9.0.2 -p $port -v 7 --bytes $bytes -z 1000 --size $TX_DMABUF \
		>/tmp/t4.tx 2>/tmp/t4.tx.err || { tail -3 /tmp/t4.tx.err; kill $lpid; return 1; }
	wait $lpid
	check_tx_summary /tmp/t4.tx $bytes || return 1
	want=$(yes "$(printf '\001\002\003\004\005\006')" | head -c $bytes | md5sum | cut -d' ' -f1)
	got=$(md5sum </tmp/t4.got | cut -d' ' -f1)
	echo "info: listener got $(wc -c </tmp/t4.got) bytes into host memory, md5 $got"
	[ "$got" = "$want" ] || { echo "listener's bytes differ from the pattern (md5 $want)"; return 1; }
	[ "$(summary_field /tmp/t4.tx sends)" -gt $((bytes / (1024 * 1024))) ] || { echo "sends not cut"; return 1; }
}

# A devmem sender killed (SIGKILL) in mid-stream, with sends outstanding
# (zerocopy completions pending, its dma-buf frags queued in TCP): the binding
# is unbound with the process; the orphaned socket still delivers what it
# had queued, valid, and the binding is freed (its dma-buf detached from
# devmemnic's parent) when the last frag goes; then the module unloads with
# nothing left (no page pool waiting, no splat). (7.2's TX bindings do not
# hold their device: unloading any driver while one is alive leaves it
# pointing at a freed device, hence the wait before rmmod.)
tx_killed_with_buffers_out() {
	setup_pair || return 1
	local port=5430 pid tpid i sent=0 t0
	rs_server $port /tmp/t5.out -c 10.9.0.1 -v 7
	pid=$RS_PID
	wait_listen $port || return 1
	ncdevmem-rs -f dmnic0 -s 10.9.0.2 -c 10.9.0.1 -p $port -v 7 --bytes $((1024 * 1024 * 1024)) \
		--size $TX_DMABUF >/tmp/t5.tx 2>/tmp/t5.tx.err &
	tpid=$!
	for i in $(seq 1 600); do
		sent=$(tx_sum dmnic0 devmem_packets)
		[ "$sent" -ge 300 ] && break
		sleep 0.1
	done
	[ "$sent" -ge 300 ] || { echo "only $sent frames sent from device memory"; tail -3 /tmp/t5.tx.err; return 1; }
	grep -q "^ncdevmem-rs devmem-tx" /tmp/t5.tx && { echo "the sender finished: nothing outstanding"; return 1; }
	kill -9 $tpid
	wait $tpid
	echo "info: sender killed after $sent frames from device memory"
	# The receiver gets the rest of what was queued, then the end of stream.
	wait $pid || { tail -3 /tmp/t5.out.err; return 1; }
	echo "info: $(cat /tmp/t5.out)"
	[ "$(summary_field /tmp/t5.out validation_errors)" = 0 ] || { echo "validation errors"; return 1; }
	t0=$(uptime_now)
	wait_dmabufs_detached 60 || return 1
	echo "info: the killed sender's binding was freed $(secs_since "$t0") s after the stream ended"
	unload_clean || return 1
}

# Bind-tx, send, unbind, again and again (5 cycles; 100 in make stress),
# each a fresh ncdevmem-rs sending 2 MiB of the -v 7 pattern from its dma-buf
# to a plain listener (md5 checked), while a validated copy flow runs and
# dmnic0's TX ring and channels and dmnic1's RX ring keep changing. Then
# every binding is gone and the module unloads clean.
bind_tx_churn() {
	setup_pair || return 1
	local cycles=$(tier 3 100) bytes=$((2 * 1024 * 1024)) i port want fails=0 rpid
	want=$(yes "$(printf '\001\002\003\004\005\006')" | head -c $bytes | md5sum | cut -d' ' -f1)
	bg_flow_start 5450 5
	(
		while :; do
			ethtool -G dmnic0 tx 64; ip netns exec peer ethtool -G dmnic1 rx 128
			ethtool -L dmnic0 combined 8; sleep 0.5
			ethtool -G dmnic0 tx 1024; ip netns exec peer ethtool -G dmnic1 rx 1024
			ethtool -L dmnic0 combined 16; sleep 0.5
		done
	) >/dev/null 2>&1 &
	rpid=$!
	for i in $(seq 1 "$cycles"); do
		port=$((5460 + i))
		ip netns exec peer nc -l -p $port </dev/null >/tmp/tc.got 2>/dev/null &
		local lpid=$!
		wait_listen $port || { fails=$((fails + 1)); kill $lpid; continue; }
		if ! ncdevmem-rs -f dmnic0 -s 10.9.0.2 -p $port -v 7 --bytes $bytes --size $TX_DMABUF \
			>/tmp/tc.tx 2>/tmp/tc.tx.err; then
			echo "cycle $i: sender failed: $(tail -1 /tmp/tc.tx.err)"
			fails=$((fails + 1))
			kill $lpid
		fi
		wait $lpid
		[ "$(md5sum </tmp/tc.got | cut -d' ' -f1)" = "$want" ] ||
			{ echo "cycle $i: listener got $(wc -c </tmp/tc.got) bytes, not the pattern"; fails=$((fails + 1)); }
	done
	kill $rpid
	wait $rpid
	ethtool -G dmnic0 tx 1024; ip netns exec peer ethtool -G dmnic1 rx 1024; ethtool -L dmnic0 combined 16
	bg_flow_stop_check 5450 || return 1
	echo "info: $cycles bind-tx/send/unbind cycles of $bytes bytes under traffic and ring/channel changes, $fails failures"
	[ "$fails" = 0 ] || return 1
	wait_dmabufs_detached 10 || return 1
	unload_clean || return 1
}

run_test devmem-tx/upstream-ncdevmem-to-listener upstream_tx_to_listener
run_test devmem-tx/upstream-ncdevmem-chunks-to-listener upstream_tx_to_listener 3
run_test devmem-tx/upstream-ncdevmem-to-devmem-rx upstream_tx_to_devmem_rx
run_test devmem-tx/ncdevmem-rs-to-devmem-rx rs_tx_to_devmem_rx
run_test devmem-tx/ncdevmem-rs-chunks-to-host rs_tx_chunks_to_host
run_test devmem-tx/sender-killed-with-sends-outstanding tx_killed_with_buffers_out
run_test devmem-tx/bind-tx-churn-under-traffic bind_tx_churn
exit $GUEST_FAILED
