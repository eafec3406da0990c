#!/bin/bash
# Guest tests: io_uring zero-copy receive (zcrx) on devmemnic (7.2): upstream's
# iou-zcrx (tools/testing/selftests/drivers/net/hw, unmodified) registers an
# io_uring area as the memory provider of one dmnic1 RX queue, and payload
# lands in it by the queue's DMA (header split), headers in host memory.
source /extra/lib.sh
# (Each test needs what tests.manifest says of the kernel; run_test skips
# it, with the reason, on a kernel without.)

# As upstream's iou-zcrx.py single(): header split on, hds-thresh 0, 64 RX
# ring entries, RSS over the queues below the last, an ntuple rule steering
# the test port (tcp6) to the last queue. Prints that queue's index.
zcrx_setup() { # port
	local port="$1" target
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on rx 64 || return 1
	ip netns exec peer dmn-xfer hds-thresh dmnic1 0 >/dev/null || return 1
	ip netns exec peer ethtool -K dmnic1 ntuple on || return 1
	target=$(($(ip netns exec peer ethtool -l dmnic1 | awk '/^Combined:/ { n = $2 } END { print n }') - 1))
	ip netns exec peer ethtool -X dmnic1 equal $target || return 1
	ip netns exec peer ethtool -N dmnic1 flow-type tcp6 dst-port "$port" action $target >/dev/null || return 1
	echo $target
}

# Upstream iou-zcrx, server on dmnic1's last queue in namespace "peer",
# client from dmnic0 (over IPv6, as upstream): the server checks every byte
# of the client's 2 MiB against its pattern and fails after 5 s without the
# end of stream. Payload must have landed in the io_uring area: the queue
# counts frames whose payload went to its memory provider.
upstream_iou_zcrx() { # port server-args client-args
	local port="$1" sargs="$2" cargs="$3" q spid dm0 dm hds
	setup_pair || return 1
	q=$(zcrx_setup "$port") || return 1
	# Large chunks (-x): the area is 2 MB huge pages (upstream sets 64 aside).
	if [[ " $sargs " == *" -x "* ]]; then
		reserve_huge_pages 64 16 || return 1
	fi
	dm0=$(stat_of dmnic1 "rx${q}_devmem_packets" peer)
	# shellcheck disable=SC2086
	ip netns exec peer iou-zcrx -6 -s -p "$port" -i dmnic1 -q "$q" $sargs >/tmp/zc.srv 2>&1 &
	spid=$!
	wait_listen "$port" || { cat /tmp/zc.srv; return 1; }
	# shellcheck disable=SC2086
	iou-zcrx -6 -c -h fd00::2 -p "$port" $cargs >/tmp/zc.cli 2>&1 || { echo "client: $(cat /tmp/zc.cli)"; return 1; }
	# (Exit 42 is upstream's skip: here everything it needs is there.)
	wait $spid || { echo "server exited $?: $(cat /tmp/zc.srv)"; return 1; }
	dm=$(($(stat_of dmnic1 "rx${q}_devmem_packets" peer) - dm0))
	hds=$(stat_of dmnic1 "rx${q}_hds_packets" peer)
	echo "info: iou-zcrx server ($sargs) validated the client's stream ($cargs): queue $q took $dm frames' payload into the io_uring area ($hds split)"
	[ "$dm" -gt 0 ] || { echo "no payload went into the io_uring area"; return 1; }
	# The server's exit unregistered the area: the queue is back on host memory.
	ip netns exec peer ethtool -S dmnic1 >/dev/null
	unload_clean || return 1
}

# A zcrx receiver killed (SIGKILL) in mid-stream, with buffers out to
# userspace: its queue goes back to host memory, a plain flow through the same
# queue works afterwards, and the module unloads with no page pool waiting.
zcrx_receiver_killed() {
	local port=5520 q spid cpid b0 n
	setup_pair || return 1
	q=$(zcrx_setup "$port") || return 1
	ip netns exec peer iou-zcrx -6 -s -p "$port" -i dmnic1 -q "$q" >/tmp/zk.srv 2>&1 &
	spid=$!
	wait_listen "$port" || return 1
	# (Counted before the clients start: a stream can end before a
	# stat_of, each an exec under TCG, returns.)
	b0=$(stat_of dmnic1 "rx${q}_devmem_packets" peer)
	# Many clients' worth: the client sends 2 MiB, the server waits 5 s.
	(while :; do iou-zcrx -6 -c -h fd00::2 -p "$port" -l 12840 || break; done) >/dev/null 2>&1 &
	cpid=$!
	for n in $(seq 1 100); do
		[ "$(stat_of dmnic1 "rx${q}_devmem_packets" peer)" -gt "$b0" ] && break
		sleep 0.05
	done
	kill -9 $spid
	wait $spid 2>/dev/null
	kill $cpid 2>/dev/null
	wait $cpid 2>/dev/null
	n=$(($(stat_of dmnic1 "rx${q}_devmem_packets" peer) - b0))
	echo "info: receiver killed after $n frames into the io_uring area"
	[ "$n" -gt 0 ] || { echo "nothing reached the io_uring area before the kill"; return 1; }
	# The same port (steered to the same queue) carries a validated flow now,
	# into host memory.
	local p0 d0
	p0=$(stat_of dmnic1 "rx${q}_packets" peer)
	d0=$(stat_of dmnic1 "rx${q}_devmem_packets" peer)
	ip netns exec peer dmn-xfer recv "$port" $((4 * 1024 * 1024)) 7 >/tmp/zk.recv 2>&1 &
	local rpid=$!
	wait_listen "$port" || return 1
	dmn-xfer send fd00::2 "$port" $((4 * 1024 * 1024)) 7 >/dev/null 2>&1 || { echo "plain send failed"; return 1; }
	wait $rpid || { cat /tmp/zk.recv; return 1; }
	grep -q " errors=0$" /tmp/zk.recv || { cat /tmp/zk.recv; return 1; }
	echo "info: then through queue $q into host memory: $(cat /tmp/zk.recv)"
	[ "$(stat_of dmnic1 "rx${q}_packets" peer)" -gt $((p0 + 100)) ] || { echo "the flow did not use queue $q"; return 1; }
	[ "$(stat_of dmnic1 "rx${q}_devmem_packets" peer)" = "$d0" ] || { echo "queue $q still had a memory provider"; return 1; }
	unload_clean || return 1
}

# ncdevmem-rs receives with zcrx into a dma-heap dma-buf (an area of
# physically contiguous chunks, as large buffers need) with RX buffers of
# $1 bytes (7.2's QCFG_RX_PAGE_SIZE): 16 MiB of the -v 7 pattern, validated
# in the dma-buf; completions never exceed a buffer, and with buffers larger
# than a page some do exceed a page (the payload pool's buffers really are
# that large).
rs_zcrx() { # rx-buf-len
	local len="$1" port=$((5530 + $1 / 4096)) bytes=$((16 * 1024 * 1024)) spid largest
	setup_pair || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	ip netns exec peer ncdevmem-rs -l --zcrx --rx-buf-len "$len" -s 10.9.0.2 -c 10.9.0.1 -p $port \
		-f dmnic1 -t 15 -q 1 -v 7 --provider dma-heap --size $((32 * 1024 * 1024)) >/tmp/rz.out 2>/tmp/rz.err &
	spid=$!
	wait_listen $port || { cat /tmp/rz.err; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/rz.cli || { cat /tmp/rz.cli; return 1; }
	wait $spid || { tail -3 /tmp/rz.err; return 1; }
	echo "info: $(cat /tmp/rz.out)"
	[ "$(summary_field /tmp/rz.out bytes)" = $bytes ] || { echo "received $(summary_field /tmp/rz.out bytes) bytes"; return 1; }
	[ "$(summary_field /tmp/rz.out validation_errors)" = 0 ] || return 1
	[ "$(summary_field /tmp/rz.out rx_buf_len)" = "$len" ] || { echo "queue ran with other buffers"; return 1; }
	largest=$(summary_field /tmp/rz.out largest_chunk)
	[ "$largest" -le "$len" ] || { echo "a $largest-byte chunk in $len-byte buffers"; return 1; }
	if [ "$len" -gt 4096 ]; then
		[ "$largest" -gt 4096 ] || { echo "no chunk larger than a page in $len-byte buffers"; return 1; }
	fi
	[ "$(stat_of dmnic1 rx15_devmem_packets peer)" -gt 0 ] || { echo "nothing went into the area"; return 1; }
	# Steered to the zcrx queue and split: nothing copied, no event.
	[ "$(summary_field /tmp/rz.out copy_fallback_bytes)" = 0 ] || { echo "payload was copied"; return 1; }
	[ "$(summary_field /tmp/rz.out copy_events)" = 0 ] || return 1
	unload_clean || return 1
}

# Steers port $1 to queue 3 by hand (ncdevmem-rs -n binds zcrx to queue 15
# and leaves the NIC alone): split on, RSS over queues 0..14.
steer_to_queue_3() { # port
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	ip netns exec peer ethtool -K dmnic1 ntuple on || return 1
	ip netns exec peer ethtool -X dmnic1 equal 15 || return 1
	ip netns exec peer ethtool -N dmnic1 flow-type tcp4 dst-port "$1" action 3 >/dev/null
}

# 7.2's copy fallback, seen by the application: ncdevmem-rs binds zcrx with
# a host-memory area (as upstream's iou-zcrx) to queue 15, but the flow is
# steered to queue 3, so its payload arrives split into host pages and
# io_uring copies every byte into the area. All 4 MiB arrive validated; the
# kernel's counters (struct zcrx_stats) say every chunk and byte was a
# copy; the COPY event fired (re-armed each time); the bound queue received
# nothing. The counters count copies out of an skb's fragments only: a
# segment small enough to arrive whole in the skb's linear part (queue 3's
# rx3_linear) is copied from there uncounted (io_zcrx_recv_skb), so the
# uncounted bytes and chunks must come from such frames (seen once on
# stock 7.2: a 55-byte chunk of 1064).
rs_zcrx_copy_fallback() {
	local port=5560 bytes=$((4 * 1024 * 1024)) p0 q3 l0 lin copied uncounted
	setup_pair || return 1
	steer_to_queue_3 $port || return 1
	p0=$(stat_of dmnic1 rx3_packets peer)
	l0=$(stat_of dmnic1 rx3_linear peer)
	ip netns exec peer ncdevmem-rs -l --zcrx --zcrx-host-memory -n -s 10.9.0.2 -c 10.9.0.1 -p $port \
		-f dmnic1 -t 15 -q 1 -v 7 --size $((8 * 1024 * 1024)) >/tmp/zf.out 2>/tmp/zf.err &
	local spid=$!
	wait_listen $port || { cat /tmp/zf.err; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/zf.cli || { cat /tmp/zf.cli; wait $spid; tail -3 /tmp/zf.err; return 1; }
	wait $spid || { tail -3 /tmp/zf.err; return 1; }
	echo "info: $(cat /tmp/zf.out)"
	[ "$(summary_field /tmp/zf.out bytes)" = $bytes ] || return 1
	[ "$(summary_field /tmp/zf.out validation_errors)" = 0 ] || return 1
	lin=$(($(stat_of dmnic1 rx3_linear peer) - l0))
	copied=$(summary_field /tmp/zf.out copy_fallback_bytes)
	uncounted=$(($(summary_field /tmp/zf.out chunks) - $(summary_field /tmp/zf.out copy_fallback_chunks)))
	echo "info: $lin frames arrived linear on queue 3; $((bytes - copied)) bytes in $uncounted chunks copied uncounted"
	# (A linear frame's payload fits a page: at most two area chunks.)
	[ "$copied" -le $bytes ] && [ $((bytes - copied)) -le $((lin * 4096)) ] ||
		{ echo "not every byte counted as copied"; return 1; }
	[ "$uncounted" -ge 0 ] && [ "$uncounted" -le $((lin * 2)) ] || { echo "not every chunk counted as copied"; return 1; }
	[ "$(summary_field /tmp/zf.out copy_events)" -ge 1 ] || { echo "no COPY event"; return 1; }
	grep -q "copy fallback" /tmp/zf.err || { cat /tmp/zf.err; return 1; }
	q3=$(($(stat_of dmnic1 rx3_packets peer) - p0))
	[ "$q3" -gt 100 ] || { echo "queue 3 took $q3 frames"; return 1; }
	[ "$(stat_of dmnic1 rx15_devmem_packets peer)" = 0 ] || { echo "the bound queue took frames"; return 1; }
	unload_clean || return 1
}

# The same mis-steered flow into a dma-buf area: the kernel cannot copy
# into a dma-buf (io_alloc_fallback_niov), so the receive fails with ENOMEM
# and ncdevmem-rs says why; the queue's provider goes with the process and
# the module unloads.
rs_zcrx_copy_into_dmabuf_refused() {
	local port=5562
	setup_pair || return 1
	steer_to_queue_3 $port || return 1
	ip netns exec peer ncdevmem-rs -l --zcrx -n -s 10.9.0.2 -c 10.9.0.1 -p $port \
		-f dmnic1 -t 15 -q 1 -v 7 --size $((8 * 1024 * 1024)) >/tmp/zd.out 2>/tmp/zd.err &
	local spid=$!
	wait_listen $port || { cat /tmp/zd.err; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $((1024 * 1024)) >/dev/null 2>&1
	if wait $spid; then
		echo "the receiver succeeded: $(cat /tmp/zd.out)"
		return 1
	fi
	grep -q "recv_zc: Cannot allocate memory.*a dma-buf area cannot take the kernel's copy" /tmp/zd.err || { cat /tmp/zd.err; return 1; }
	echo "info: $(grep recv_zc /tmp/zd.err)"
	unload_clean || return 1
}

# 7.2's allocation-failure event: a 64 KiB area (16 buffers) behind a queue
# that receives 8 MiB, whose receiver keeps every chunk until the queue runs
# out (ncdevmem-rs --hold-until-alloc-fail): the queue drops frames at the
# NIC (counted, rx15_alloc_fail), the kernel posts ALLOC_FAIL, ncdevmem-rs
# gives the held chunks back, flushes the refill queue and re-arms, and
# TCP's retransmissions carry every byte through, validated.
# The receiver's socket memory is capped (tcp_rmem 32 KiB in its namespace:
# about 7 buffers of 4 KiB and their headers) so that TCP's out-of-order
# queue cannot take every buffer: with the default (autotuned to 731 KiB)
# the segments after a dropped one filled all 16 buffers there, none was
# left for the missing one's retransmissions, and the stream stalled for
# good (seen as rmem 66 KiB with an empty receive queue, 145 out-of-order
# segments, the pool's 16 buffers in flight, the sender at backoff 8; on
# stock 7.2 and 7.3, at the 252nd and 276th commits). A NIC with so small
# an area stalls the same way: the cap is the receiver's part of the fix,
# on hardware too. Past it TCP prunes its out-of-order queue, which gives
# buffers back. Without the hold, the area ran out in 4 of 6 runs only.
rs_zcrx_area_exhausted() {
	local port=5565 bytes=$((8 * 1024 * 1024)) a0 drops
	setup_pair || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	ip netns exec peer sh -c 'echo "4096 32768 32768" >/proc/sys/net/ipv4/tcp_rmem' || return 1
	a0=$(stat_of dmnic1 rx15_alloc_fail peer)
	ip netns exec peer ncdevmem-rs -l --zcrx --hold-until-alloc-fail -s 10.9.0.2 -c 10.9.0.1 -p $port \
		-f dmnic1 -t 15 -q 1 -v 7 --size 65536 >/tmp/ze.out 2>/tmp/ze.err &
	local spid=$!
	wait_listen $port || { cat /tmp/ze.err; return 1; }
	# Bounded: a stall fails this test in minutes instead of holding the
	# guest until its timeout, and says where the area's buffers were while
	# both ends still hold them.
	ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/ze.cli &
	local cpid=$! waited=0
	while kill -0 $cpid 2>/dev/null && [ $waited -lt 300 ]; do
		sleep 1
		waited=$((waited + 1))
	done
	if kill -0 $cpid 2>/dev/null; then
		echo "the sender did not finish within 300 s (rx15_alloc_fail +$(($(stat_of dmnic1 rx15_alloc_fail peer) - a0))); the receiver: $(tail -2 /tmp/ze.err)"
		zcrx_stall_report $spid
		kill $cpid $spid 2>/dev/null
		wait $cpid $spid 2>/dev/null
		return 1
	fi
	wait $cpid || { cat /tmp/ze.cli; return 1; }
	wait $spid || { tail -3 /tmp/ze.err; return 1; }
	drops=$(($(stat_of dmnic1 rx15_alloc_fail peer) - a0))
	echo "info: $(cat /tmp/ze.out); rx15_alloc_fail +$drops"
	[ "$(summary_field /tmp/ze.out bytes)" = $bytes ] || return 1
	[ "$(summary_field /tmp/ze.out validation_errors)" = 0 ] || return 1
	[ "$(summary_field /tmp/ze.out alloc_fail_events)" -ge 1 ] || { echo "no ALLOC_FAIL event"; return 1; }
	[ "$(summary_field /tmp/ze.out refill_flushes)" = "$(summary_field /tmp/ze.out alloc_fail_events)" ] || return 1
	[ "$drops" -gt 0 ] || { echo "the queue never ran out"; return 1; }
	grep -q "giving back [0-9]* held chunks at the queue's first allocation failure" /tmp/ze.err ||
		{ tail -3 /tmp/ze.err; return 1; }
	unload_clean || return 1
}

# Where a stalled zcrx stream's buffers are: the sockets (queues, the
# receiver's out-of-order segments, the sender's retransmissions:
# socket_report), the queue's counters, each page pool's in-flight buffers
# and what the receiver waits in.
zcrx_stall_report() { # receiver-pid
	socket_report
	echo "rx15: $(ip netns exec peer ethtool -S dmnic1 | grep -E '^ *rx15_' | xargs)"
	echo "page pools: $(ip netns exec peer ncdevmem-rs --page-pools | xargs)"
	echo "receiver waits in: $(cat /proc/$1/wchan 2>/dev/null); $(tr '\n' ' ' </proc/$1/stack 2>/dev/null)"
}

# Linux 7.3's ZCRX_CTRL_ADD_AREA: ncdevmem-rs registers one dma-buf as the
# queue's area and adds three more (--zcrx-areas 4, 1 MiB each: 256 buffers).
# The receiver holds its first 600 chunks (at least 300 buffers, a buffer
# being split over two chunks at most), more than the first area has, so
# the page pool must take from a later one: returning every chunk at once
# let the first area serve the whole stream (seen on stock 7.3). 16 MiB
# validated in the area each chunk names; chunks came from at least two
# areas, each refilled into its own.
rs_zcrx_areas() {
	local port=5545 bytes=$((16 * 1024 * 1024)) areas used
	setup_pair || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on rx 512 || return 1
	ip netns exec peer ncdevmem-rs -l --zcrx --zcrx-areas 4 --hold-chunks 600 -s 10.9.0.2 -c 10.9.0.1 -p $port \
		-f dmnic1 -t 15 -q 1 -v 7 --size $((4 * 1024 * 1024)) >/tmp/za.out 2>/tmp/za.err &
	local spid=$!
	wait_listen $port || { cat /tmp/za.err; return 1; }
	grep -q "^io_uring zcrx: 4 dma-buf area(s) of 1048576 bytes" /tmp/za.err || { cat /tmp/za.err; return 1; }
	ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/za.cli || { cat /tmp/za.cli; return 1; }
	wait $spid || { tail -3 /tmp/za.err; return 1; }
	echo "info: $(cat /tmp/za.out)"
	[ "$(summary_field /tmp/za.out bytes)" = $bytes ] || { echo "received $(summary_field /tmp/za.out bytes) bytes"; return 1; }
	[ "$(summary_field /tmp/za.out validation_errors)" = 0 ] || return 1
	areas=$(sed -n 's/.* area_chunks=\([0-9,]*\) .*/\1/p' /tmp/za.out)
	used=$(tr ',' '\n' <<<"$areas" | grep -cv '^0$')
	[ "$used" -ge 2 ] || { echo "chunks per area $areas: the added areas took nothing"; return 1; }
	[ "$(stat_of dmnic1 rx15_devmem_packets peer)" -gt 0 ] || { echo "nothing went into the areas"; return 1; }
	unload_clean || return 1
}

# An area asking for 128 KiB buffers (more than a queue takes) is refused at
# registration with a clear error; the NIC is restored and the module
# unloads (no provider was left on the queue).
rs_zcrx_oversized() {
	setup_pair || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	if ip netns exec peer ncdevmem-rs -l --zcrx --rx-buf-len 131072 -s 10.9.0.2 -p 5540 -f dmnic1 \
		-t 15 -q 1 --provider dma-heap --size $((8 * 1024 * 1024)) >/tmp/ro.out 2>/tmp/ro.err; then
		echo "128 KiB buffers were accepted"
		return 1
	fi
	grep -q "io_uring zcrx registration: " /tmp/ro.err || { cat /tmp/ro.err; return 1; }
	echo "info: $(grep 'registration' /tmp/ro.err)"
	[ "$(ip netns exec peer ethtool -n dmnic1 | grep -c '^Filter:')" = 0 ] || { echo "a rule was left"; return 1; }
	unload_clean || return 1
}

# Rings resized under zcrx traffic: while ncdevmem-rs receives 32 MiB (96
# MiB in make stress) into a dma-heap area with 64 KiB buffers, dmnic1's RX
# ring and dmnic0's TX ring change size every 0.3 s and shrinking dmnic1 below
# the bound queue is tried while it is bound (and must be refused). Every
# byte arrives valid.
rs_zcrx_resizes() {
	local port=5550 bytes=$(($(tier 32 96) * 1024 * 1024)) spid rpid refused=0 i
	setup_pair || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	ip netns exec peer ncdevmem-rs -l --zcrx --rx-buf-len 65536 -s 10.9.0.2 -c 10.9.0.1 -p $port \
		-f dmnic1 -t 15 -q 1 -v 7 --provider dma-heap --size $((32 * 1024 * 1024)) >/tmp/zr.out 2>/tmp/zr.err &
	spid=$!
	wait_listen $port || { cat /tmp/zr.err; return 1; }
	(
		while :; do
			ip netns exec peer ethtool -G dmnic1 rx 64; ethtool -G dmnic0 tx 64; sleep 0.3
			ip netns exec peer ethtool -G dmnic1 rx 1024; ethtool -G dmnic0 tx 1024; sleep 0.3
		done
	) >/dev/null 2>&1 &
	rpid=$!
	# (Before the stream: the receiver unbinds as soon as it ends.)
	for i in 1 2 3; do
		ip netns exec peer ethtool -L dmnic1 combined 8 2>/dev/null || refused=$((refused + 1))
	done
	ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/zr.cli || { kill $rpid; cat /tmp/zr.cli; return 1; }
	kill $rpid
	wait $rpid 2>/dev/null
	wait $spid || { tail -3 /tmp/zr.err; return 1; }
	echo "info: $(cat /tmp/zr.out); shrinking below the bound queue refused $refused of 3 times"
	[ "$(summary_field /tmp/zr.out bytes)" = $bytes ] || return 1
	[ "$(summary_field /tmp/zr.out validation_errors)" = 0 ] || return 1
	[ "$refused" = 3 ] || { echo "channels shrank below a bound queue"; return 1; }
	unload_clean || return 1
}

run_test zcrx/upstream-iou-zcrx upstream_iou_zcrx 5500 "" "-l 12840"
run_test zcrx/upstream-iou-zcrx-oneshot upstream_iou_zcrx 5501 "-o 4" "-l 4096 -z 16384"
run_test zcrx/upstream-iou-zcrx-large-chunks upstream_iou_zcrx 5502 "-x 2" "-l 12840"
run_test zcrx/ncdevmem-rs-4k-buffers rs_zcrx 4096
run_test zcrx/ncdevmem-rs-64k-buffers rs_zcrx 65536
run_test zcrx/ncdevmem-rs-4-areas rs_zcrx_areas
run_test zcrx/copy-fallback-counted rs_zcrx_copy_fallback
run_test zcrx/copy-into-dmabuf-refused rs_zcrx_copy_into_dmabuf_refused
run_test zcrx/area-exhausted-alloc-fail-event rs_zcrx_area_exhausted
run_test zcrx/oversized-buffers-refused rs_zcrx_oversized
run_test zcrx/rings-resized-under-traffic rs_zcrx_resizes
run_test zcrx/receiver-killed-with-buffers-out zcrx_receiver_killed
exit $GUEST_FAILED
