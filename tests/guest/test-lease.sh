#!/bin/bash
# Guest tests: netkit queue leasing (7.2). A devmemnic RX queue leased into a
# netkit device in a container namespace serves devmem RX, zcrx and devmem TX
# there, as upstream's nk_devmem.py runs them (the tools with -n: the host
# configures the NIC, the container only binds its leased queue).
#
#   namespace remote        init (the host)                      namespace cont
#   dmnic0 10.9.0.1 ---- dmnic1 10.9.0.2   nkh 10.10.0.1 ---- nkc 10.10.0.2
#                        (queue 15 leased into nkc; the host routes between)
source /extra/lib.sh
# (Each test needs what tests.manifest says of the kernel; run_test skips
# it, with the reason, on a kernel without.)

LEASE_Q=15

# Builds the picture above, header split on dmnic1, RSS over queues 0..14;
# prints the leased queue's id on nkc.
lease_setup() {
	ip link del nkh 2>/dev/null
	modprobe devmemnic || return 1
	mkdir -p /run/netns
	ip netns add remote || return 1
	ip netns add cont || return 1
	ip link set dmnic0 netns remote || return 1
	ip -n remote addr add 10.9.0.1/24 dev dmnic0
	ip -n remote link set dmnic0 up
	ip -n remote link set lo up
	ip -n remote route add 10.10.0.0/24 via 10.9.0.2 || return 1
	ip addr add 10.9.0.2/24 dev dmnic1
	ip link set dmnic1 up
	dmn-xfer netkit-add nkh nkc 4 || return 1
	ip link set nkc netns cont || return 1
	ip addr add 10.10.0.1/24 dev nkh
	ip link set nkh up
	ip -n cont addr add 10.10.0.2/24 dev nkc
	ip -n cont link set nkc up
	ip -n cont link set lo up
	ip -n cont route add default via 10.10.0.1 || return 1
	echo 1 >/proc/sys/net/ipv4/ip_forward
	# The id the container's namespace knows the host's by (moving nkc there
	# gave it one; upstream's env sets 0 where none exists yet).
	local nsid
	ip netns attach init 1 || return 1
	nsid=$(ip netns exec cont ip netns list-id | awk '/name: init/ { print $2 }')
	if [ -z "$nsid" ]; then
		ip netns exec cont ip netns set init 0 || return 1
		nsid=0
	fi
	ethtool -G dmnic1 tcp-data-split on || return 1
	ethtool -K dmnic1 ntuple on || return 1
	ethtool -X dmnic1 equal $LEASE_Q || return 1
	ip netns exec cont dmn-xfer queue-lease nkc "$(cat /sys/class/net/dmnic1/ifindex)" $LEASE_Q "$nsid"
}

# Steers TCP port $1 (to the container) to the leased queue.
lease_steer() { ethtool -N dmnic1 flow-type tcp4 dst-port "$1" action $LEASE_Q >/dev/null; }

# Frames whose payload went to the leased queue's memory provider.
leased_devmem() { stat_of dmnic1 "rx${LEASE_Q}_devmem_packets"; }

# Upstream ncdevmem (unmodified, -n) in the container binds a dma-buf to its
# leased queue; 16 MiB (64 in make stress) of the -v 7 pattern from the remote host arrive
# through dmnic1's queue 15 into it, validated.
lease_upstream_rx() {
	local port=5600 q bytes=$(($(tier 16 64) * 1024 * 1024)) spid dm0 total
	q=$(lease_setup) || { echo "$q"; return 1; }
	lease_steer $port || return 1
	dm0=$(leased_devmem)
	ip netns exec cont ncdevmem -l -f nkc -s 10.10.0.2 -p $port -t "$q" -q 1 -n -v 7 \
		>/tmp/lu.out 2>/tmp/lu.err &
	spid=$!
	wait_listen $port cont || { tail -5 /tmp/lu.err; return 1; }
	ip netns exec remote ncdevmem-rs -s 10.10.0.2 -p $port -v 7 --bytes $bytes >/dev/null || return 1
	wait $spid || { echo "upstream ncdevmem failed:"; grep -v '^received\|^recvmsg\|^total' /tmp/lu.err | tail -5; return 1; }
	grep -q "Failed validation" /tmp/lu.err && { echo "validation failed"; return 1; }
	total=$(sed -n 's/^total_received=\([0-9]*\)$/\1/p' /tmp/lu.err | tail -1)
	echo "info: upstream ncdevmem in the container (nkc queue $q, leased from dmnic1 queue $LEASE_Q): total_received=$total, $(grep -c '^received frag' /tmp/lu.err) frags, $(($(leased_devmem) - dm0)) frames into its dma-buf"
	[ "$total" = $bytes ] || { echo "total_received=$total, want $bytes"; return 1; }
	[ "$(($(leased_devmem) - dm0))" -gt 0 ] || { echo "no payload went to the dma-buf"; return 1; }
	unload_clean || return 1
}

# ncdevmem-rs in the container: devmem RX (udmabuf, every token back), then
# zcrx into a dma-heap area with 16 KiB buffers, both through the leased queue.
lease_rs_rx() { # devmem|zcrx
	local port=5610 q bytes=$(($(tier 16 64) * 1024 * 1024)) spid dm0 args=()
	q=$(lease_setup) || { echo "$q"; return 1; }
	[ "$1" = zcrx ] && { port=5611; args=(--zcrx --rx-buf-len 16384 --provider dma-heap); }
	lease_steer $port || return 1
	dm0=$(leased_devmem)
	ip netns exec cont ncdevmem-rs -l -n -f nkc -s 10.10.0.2 -p $port -t "$q" -q 1 -v 7 \
		--size $((32 * 1024 * 1024)) "${args[@]}" >/tmp/lr.out 2>/tmp/lr.err &
	spid=$!
	wait_listen $port cont || { tail -5 /tmp/lr.err; return 1; }
	ip netns exec remote ncdevmem-rs -s 10.10.0.2 -p $port -v 7 --bytes $bytes >/dev/null || return 1
	wait $spid || { tail -5 /tmp/lr.err; return 1; }
	echo "info: $1 in the container: $(cat /tmp/lr.out); $(($(leased_devmem) - dm0)) frames into the provider on dmnic1 queue $LEASE_Q"
	[ "$(summary_field /tmp/lr.out bytes)" = $bytes ] || return 1
	[ "$(summary_field /tmp/lr.out validation_errors)" = 0 ] || return 1
	if [ "$1" = devmem ]; then
		[ "$(summary_field /tmp/lr.out tokens_returned)" = "$(summary_field /tmp/lr.out frags)" ] || return 1
		[ "$(summary_field /tmp/lr.out linear_bytes)" = 0 ] || { echo "payload outside the dma-buf"; return 1; }
	fi
	[ "$(($(leased_devmem) - dm0))" -gt 0 ] || { echo "no payload went to the provider"; return 1; }
	unload_clean || return 1
}

# ncdevmem-rs devmem RX in the container through every fault at once at
# moderate rates on what dmnic1 receives (set from the host: the container
# sees only netkit), the remote sender's TSO and GSO off: every byte
# validated and every token returned, every fault happened, the container's
# TCP queued out of order, the remote host retransmitted what was lost.
lease_rs_rx_faults() {
	local port=5612 q bytes=$(($(tier 2 64) * 1024 * 1024)) spid rc=0 f k v0 v
	q=$(lease_setup) || { echo "$q"; return 1; }
	lease_steer $port || return 1
	ip netns exec remote ethtool -K dmnic0 tso off gso off || return 1
	declare -A before
	for k in wire_lost wire_duplicated wire_reordered wire_corrupted; do
		before[$k]=$(rx_sum dmnic1 $k)
	done
	before[ofo]=$(tcpext TCPOFOQueue cont)
	before[rt]=$(snmp_tcp RetransSegs remote)
	# shellcheck disable=SC2086 # (words)
	set_faults seed=41 ${MODERATE_FAULTS//,/ } || return 1
	ip netns exec cont ncdevmem-rs -l -n -f nkc -s 10.10.0.2 -p $port -t "$q" -q 1 -v 7 \
		--size $((32 * 1024 * 1024)) >/tmp/lf.out 2>/tmp/lf.err &
	spid=$!
	if wait_listen $port cont; then
		ip netns exec remote ncdevmem-rs -s 10.10.0.2 -p $port -v 7 --bytes $bytes >/dev/null || rc=1
		wait $spid || { tail -5 /tmp/lf.err; rc=1; }
	else
		tail -5 /tmp/lf.err
		rc=1
	fi
	faults_off || return 1
	[ $rc = 0 ] || return 1
	check_rs_summary /tmp/lf.out $bytes || return 1
	f=""
	for k in wire_lost wire_duplicated wire_reordered wire_corrupted; do
		v=$(($(rx_sum dmnic1 $k) - before[$k]))
		f="$f $v ${k#wire_},"
		[ "$v" -gt 0 ] || { echo "no frame $k"; return 1; }
	done
	v0=$(($(tcpext TCPOFOQueue cont) - before[ofo]))
	v=$(($(snmp_tcp RetransSegs remote) - before[rt]))
	echo "info: through the leased queue: wire:$f TCP: $v0 out-of-order in the container, $v retransmitted"
	[ "$v0" -gt 0 ] || { echo "no out-of-order segment"; return 1; }
	[ $((v + 5)) -ge $(($(rx_sum dmnic1 wire_lost) - before[wire_lost])) ] || { echo "fewer retransmitted than lost"; return 1; }
	unload_clean || return 1
}

# Devmem TX from the container: ncdevmem-rs binds its dma-buf for TX on nkc
# (the kernel binds it to the leased queue's device, dmnic1) and sends 8 MiB
# of the -v 7 pattern to a listener on the remote host (md5 checked); dmnic1
# sent them from device memory.
lease_tx() {
	local port=5620 q bytes=$((8 * 1024 * 1024)) lpid tx0 want
	q=$(lease_setup) || { echo "$q"; return 1; }
	want=$(yes "$(printf '\001\002\003\004\005\006')" | head -c $bytes | md5sum | cut -d' ' -f1)
	tx0=$(tx_sum dmnic1 devmem_packets)
	ip netns exec remote nc -l -p $port </dev/null >/tmp/lt.got 2>/dev/null &
	lpid=$!
	wait_listen $port remote || return 1
	ip netns exec cont ncdevmem-rs -f nkc -s 10.9.0.1 -p $port -v 7 --bytes $bytes \
		--size $((4 * 1024 * 1024)) >/tmp/lt.out 2>/tmp/lt.err || { tail -3 /tmp/lt.err; kill $lpid; return 1; }
	wait $lpid
	echo "info: devmem TX from the container: $(cat /tmp/lt.out); dmnic1 sent $(($(tx_sum dmnic1 devmem_packets) - tx0)) frames from device memory"
	[ "$(md5sum </tmp/lt.got | cut -d' ' -f1)" = "$want" ] || { echo "listener got $(wc -c </tmp/lt.got) bytes, not the pattern"; return 1; }
	[ "$(summary_field /tmp/lt.out copied)" = 0 ] || return 1
	[ "$(($(tx_sum dmnic1 devmem_packets) - tx0))" -gt 0 ] || { echo "nothing sent from device memory"; return 1; }
	# (7.2's TX bindings do not hold their device: wait until it is gone.)
	wait_dmabufs_detached 10 || return 1
	unload_clean || return 1
}

# The netkit pair deleted while a devmem receiver in the container takes a
# stream through the leased queue: the core ends the lease and closes the
# provider, dmnic1's queue 15 is back on host memory (a plain flow through it
# afterwards is valid), the stalled receiver is stopped, and the module
# unloads clean.
lease_netkit_deleted() {
	local port=5630 q spid cpid n p0 d0
	q=$(lease_setup) || { echo "$q"; return 1; }
	lease_steer $port || return 1
	ip netns exec cont ncdevmem-rs -l -n -f nkc -s 10.10.0.2 -p $port -t "$q" -q 1 -v 7 \
		--size $((16 * 1024 * 1024)) >/tmp/ld.out 2>/tmp/ld.err &
	spid=$!
	wait_listen $port cont || { tail -5 /tmp/ld.err; return 1; }
	ip netns exec remote ncdevmem-rs -s 10.10.0.2 -p $port -v 7 --bytes $((1 << 40)) >/dev/null 2>&1 &
	cpid=$!
	n=$(leased_devmem)
	for p0 in $(seq 1 100); do
		[ "$(leased_devmem)" -gt $((n + 50)) ] && break
		sleep 0.1
	done
	ip link del nkh || { echo "netkit delete failed"; return 1; }
	echo "info: netkit deleted after $(($(leased_devmem) - n)) frames into the container's dma-buf"
	# The core closed the provider with the lease: the connection lost its
	# path and stalls; the receiver (still holding its binding's socket and
	# tokens) is stopped as a user would.
	kill $cpid 2>/dev/null
	wait $cpid 2>/dev/null
	kill $spid 2>/dev/null
	wait $spid
	echo "info: the container's receiver stopped (exit $?) after $(summary_field /tmp/ld.out bytes) valid bytes"
	[ "$(summary_field /tmp/ld.out validation_errors)" = 0 ] || { echo "the container received corrupt data"; return 1; }
	# The queue serves host memory again: a validated flow to the host itself.
	p0=$(stat_of dmnic1 "rx${LEASE_Q}_packets")
	d0=$(leased_devmem)
	dmn-xfer recv $port $((4 * 1024 * 1024)) 9 >/tmp/ld.recv 2>&1 &
	local rpid=$!
	wait_listen $port "" || return 1
	ip netns exec remote dmn-xfer send 10.9.0.2 $port $((4 * 1024 * 1024)) 9 >/dev/null || return 1
	wait $rpid || { cat /tmp/ld.recv; return 1; }
	echo "info: then queue $LEASE_Q into host memory: $(cat /tmp/ld.recv)"
	grep -q " errors=0$" /tmp/ld.recv || return 1
	[ "$(stat_of dmnic1 "rx${LEASE_Q}_packets")" -gt $((p0 + 100)) ] || { echo "the flow did not use queue $LEASE_Q"; return 1; }
	[ "$(leased_devmem)" = "$d0" ] || { echo "queue $LEASE_Q still had a provider"; return 1; }
	unload_clean || return 1
}

# devmemnic unloaded while its queue is leased (no binding) and traffic flows
# to the container: the kernel unregisters the netkit pair with it, the
# module goes, and a load afterwards starts clean.
lease_unload_while_leased() {
	local port=5640 q rpid spid
	q=$(lease_setup) || { echo "$q"; return 1; }
	lease_steer $port || return 1
	ip netns exec cont dmn-xfer recv $port $((1 << 40)) 5 >/dev/null 2>&1 &
	rpid=$!
	wait_listen $port cont || return 1
	ip netns exec remote dmn-xfer send 10.10.0.2 $port $((1 << 40)) 5 >/dev/null 2>&1 &
	spid=$!
	sleep 2
	[ "$(stat_of dmnic1 "rx${LEASE_Q}_packets")" -gt 0 ] || { echo "no traffic on the leased queue"; return 1; }
	unload_clean || return 1
	ip link show nkh >/dev/null 2>&1 && { echo "nkh outlived the device whose queue it leased"; return 1; }
	ip -n cont link show nkc >/dev/null 2>&1 && { echo "nkc outlived the device whose queue it leased"; return 1; }
	kill $spid $rpid 2>/dev/null
	wait $spid $rpid 2>/dev/null
	modprobe devmemnic || return 1
	rmmod devmemnic || return 1
	echo "info: devmemnic unloaded with queue $LEASE_Q leased under traffic: netkit pair gone with it, reload clean"
}

run_test lease/upstream-ncdevmem-rx-in-container lease_upstream_rx
run_test lease/ncdevmem-rs-rx-in-container lease_rs_rx devmem
run_test lease/zcrx-in-container lease_rs_rx zcrx
run_test lease/ncdevmem-rs-rx-through-all-faults lease_rs_rx_faults
run_test lease/devmem-tx-from-container lease_tx
run_test lease/netkit-deleted-under-traffic lease_netkit_deleted
run_test lease/unload-while-leased lease_unload_while_leased
exit $GUEST_FAILED
