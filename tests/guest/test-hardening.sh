#!/bin/bash
# Guest tests: hardening. Queue restarts under devmem traffic, SO_DEVMEM_DONTNEED
# misuse, processes killed with tokens out, and kernel faults injected (fail-nth)
# into configuring, binding, restarting and resizing queues. Each ends with the
# module unloaded and no devmem buffer left out; the kernel's console is checked
# for splats by vm-run and kmemleak runs after all scripts (run-all.sh).
source /extra/lib.sh
MIB=$((1024 * 1024))
KNOB=/sys/kernel/debug/devmemnic/devmemnic.1/restart_rx_queue

# The devmem queue restarted RESTARTS times (5, 50 in make stress) (debugfs restart_rx_queue: new memory,
# stop, start, old memory freed, as the core does on bind and unbind) while
# ncdevmem-rs receives validated streams into the dma-buf (as many 256 MiB
# streams as the restarts take, each server configuring the NIC itself).
# Queue 8's devmem counter is read after each restart: it must have grown
# since the read after the one before (devmem frames came after it); a
# stream's last restart is followed by the rest of the stream, all of it in
# the dma-buf. Bad knob input gets an error.
devmem_queue_restarts() {
	setup_pair || return 1
	echo 99 >$KNOB 2>/dev/null && { echo "restart of queue 99 accepted"; return 1; }
	echo x8 >$KNOB 2>/dev/null && { echo "restart of queue 'x8' accepted"; return 1; }
	local bytes=$(($(tier 64 256) * MIB)) port=5500 pid cpid last c restarts=0 stalled=0 streams=0 first
	local want
	want=$(tier 5 50)
	while [ $restarts -lt "$want" ] && [ $streams -lt 20 ]; do
		port=$((port + 1))
		streams=$((streams + 1))
		rs_server $port /tmp/qr.out -c 10.9.0.1 -v 7
		pid=$RS_PID
		wait_listen $port || return 1
		ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>&1 &
		cpid=$!
		first=1
		while [ $restarts -lt "$want" ] && kill -0 $cpid 2>/dev/null; do
			echo 8 >$KNOB || { echo "restart $((restarts + 1)) failed"; return 1; }
			restarts=$((restarts + 1))
			sleep 0.3
			c=$(stat_of dmnic1 rx8_devmem_packets peer)
			# (Not after the first restart of a stream: the stream may have
			# started after the last read.)
			[ $first = 1 ] || [ "$c" -gt "$last" ] || ! kill -0 $cpid 2>/dev/null || stalled=$((stalled + 1))
			last=$c
			first=0
		done
		wait $cpid || { echo "stream $streams: client failed"; return 1; }
		wait $pid || { tail -3 /tmp/qr.out.err; return 1; }
		check_rs_summary /tmp/qr.out $bytes >/dev/null || { echo "stream $streams: $(cat /tmp/qr.out)"; return 1; }
	done
	echo "info: $restarts restarts of bound queue 8 during $streams validated $((bytes / MIB)) MiB devmem streams; $stalled without devmem frames before the next"
	[ $restarts = "$want" ] || { echo "only $restarts restarts"; return 1; }
	[ $stalled = 0 ] || { echo "devmem traffic did not resume after $stalled restarts"; return 1; }
	# Unbound now (server gone): a host-memory queue restarts too; a down device refuses.
	echo 8 >$KNOB || return 1
	ip -n peer link set dmnic1 down
	echo 8 >$KNOB 2>/dev/null && { echo "restart of a down device accepted"; return 1; }
	unload_clean
}

# SO_DEVMEM_DONTNEED misuse on a live devmem socket (ncdevmem-rs
# --abuse-tokens: bad lengths, NULL, unknown, out-of-range, duplicate and
# stale tokens, the per-call limit), then the stream goes on, every buffer back.
token_abuse() {
	setup_pair || return 1
	devmem_nic_setup 5402 || return 1
	local bytes=$((16 * MIB)) pid
	rs_server 5402 /tmp/ta.out -c 10.9.0.1 -v 7 --no-config --abuse-tokens
	pid=$RS_PID
	wait_listen 5402 || return 1
	ncdevmem-rs -s 10.9.0.2 -p 5402 -v 7 --bytes $bytes >/dev/null || return 1
	wait $pid || { tail -3 /tmp/ta.out.err; return 1; }
	grep "token abuse" /tmp/ta.out.err | sed 's/^/info: /'
	grep -q "token abuse: 9 checks passed" /tmp/ta.out.err || { echo "checks did not run"; return 1; }
	check_rs_summary /tmp/ta.out $bytes || return 1
	unload_clean
}

# Processes killed (SIGKILL) with tokens out: the socket's buffers and the
# binding go with them; the queue is free again and no buffer stays out.
# Twice: with every token held (none returned yet), and mid-stream.
killed_with_tokens() {
	setup_pair || return 1
	devmem_nic_setup 5403 || return 1
	local round port i
	for round in held streaming; do
		port=$((port ? port + 1 : 5404))
		ip netns exec peer ethtool -N dmnic1 flow-type tcp4 src-ip 10.9.0.1 dst-ip 10.9.0.2 \
			src-port $port dst-port $port queue 8 >/dev/null || return 1
		if [ $round = held ]; then
			rs_server $port /tmp/kt.out -c 10.9.0.1 -v 7 --no-config --hold-tokens-secs 600
		else
			rs_server $port /tmp/kt.out -c 10.9.0.1 -v 7 --no-config
		fi
		wait_listen $port || return 1
		# The binding is freed (its dma-buf detached) once the buffers the
		# process held are back, with nothing else happening on the device.
		kill_server_mid_stream $port "stat_of dmnic1 rx8_devmem_packets peer" 100 10 $round || return 1
		# The binding went with the process: header split can go off again.
		for i in $(seq 1 50); do
			ip netns exec peer ethtool -G dmnic1 tcp-data-split off 2>/dev/null && break
			sleep 0.1
		done
		ip netns exec peer ethtool -g dmnic1 | grep -qi "split:.*off" || { echo "queue still bound after kill"; return 1; }
		ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	done
	unload_clean
}

# Fault injection through fail-nth counts every fault site the task passes
# (slab and page allocations, sleeping ones too); quiet, so an injected
# failure does not print a stack trace.
faults_setup() {
	local d
	for d in /sys/kernel/debug/failslab /sys/kernel/debug/fail_page_alloc; do
		[ -d $d ] || { echo "no $d (CONFIG_FAULT_INJECTION_DEBUG_FS)"; return 1; }
		echo 0 >$d/verbose
		echo 0 >$d/probability
		echo N >$d/ignore-gfp-wait
	done
	echo N >/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem
	echo 0 >/sys/kernel/debug/fail_page_alloc/min-order
}

faults_teardown() {
	local d
	for d in /sys/kernel/debug/failslab /sys/kernel/debug/fail_page_alloc; do
		echo Y >$d/ignore-gfp-wait
	done
}

# Sample points for a fail-nth walk over SITES sites: the first FIRST, then
# SPREAD more spread evenly to the end (each caller sizes both with tier).
walk_points() { # sites spread first
	local n=$1 spread=$2 first=$3 i
	seq 1 $((n < first ? n : first))
	[ "$n" -gt "$first" ] && for i in $(seq 1 "$spread"); do echo $((first + (n - first) * i / spread)); done
}

# Waits until something listens on $1 in peer or process $2 has exited.
listen_or_exit() { # port pid
	local i
	for ((i = 0; i < 600; i++)); do
		listening "$1" peer && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# A kernel fault injected at each sampled point of ncdevmem-rs's setup
# (header split on: every queue rebuilt; RSS; ntuple rule; bind-rx: dma-buf
# attach and map, queue restarts), then of bind-rx alone (--fail-from bind):
# the server either fails with an error and the NIC is exactly as before, or
# it serves a validated stream. Bind-rx's first site (its netlink request)
# must fail it. Afterwards a normal run works and no buffer stays out.
fail_nth_setup() {
	setup_pair || return 1
	faults_setup || return 1
	ip netns exec peer ethtool -G dmnic1 tcp-data-split off || return 1
	local before port=5420 phase sites n failed=0 served=0 bad=0 summary=""
	before=$(nic_snapshot)
	for phase in setup bind; do
		# How many fault sites the phase passes: armed far away, never reached.
		setup_fault_run 100000000 || return 1
		sites=$(sed -n 's/.*not reached (\([0-9]*\) fault sites passed).*/\1/p' /tmp/fn.out.err)
		[ -n "$sites" ] && [ "$sites" -gt 0 ] || { echo "$phase: no fault site count: $(cat /tmp/fn.out.err)"; return 1; }
		# Where setup fails lies mostly in bind-rx (its first sites
		# surely), which the second walk reaches whatever setup's count.
		for n in $(case $phase in
			setup) walk_points "$sites" "$(tier 2 30)" "$(tier 2 20)" ;;
			bind) walk_points "$sites" "$(tier 2 20)" "$(tier 1 10)" ;;
			esac); do
			setup_fault_run "$n" || break
		done
		summary="$summary $phase: $sites sites, $failed failed cleanly, $served served anyway;"
		[ $bad = 0 ] || break
		[ $phase = setup ] && failed=0 served=0
	done
	faults_teardown
	echo "info:$summary $bad wrong"
	[ $bad = 0 ] || return 1
	[ $failed -gt 0 ] || { echo "no injected fault made bind-rx fail"; return 1; }
	# And afterwards: a normal run.
	port=$((port + 1))
	rs_server $port /tmp/fn.out -c 10.9.0.1 -v 7
	local pid=$RS_PID
	wait_listen $port || return 1
	ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $((16 * MIB)) >/dev/null || return 1
	wait $pid || return 1
	check_rs_summary /tmp/fn.out $((16 * MIB)) || return 1
	unload_clean
}

# One server run of fail_nth_setup with fail-nth N from $phase, counted in
# its failed, served and bad; an N far away only counts the sites (it must
# serve). Non-zero when the NIC was not restored.
setup_fault_run() { # n
	local n=$1 pid
	port=$((port + 1))
	rs_server $port /tmp/fn.out -c 10.9.0.1 -v 7 --size $((4 * MIB)) --fail-nth "$n" --fail-from $phase
	pid=$RS_PID
	if listen_or_exit $port $pid; then
		if ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $MIB >/dev/null 2>&1 &&
			wait $pid && check_rs_summary /tmp/fn.out $MIB >/dev/null; then
			[ "$n" = 100000000 ] || served=$((served + 1))
		else
			echo "fail-nth $n ($phase): serving failed: $(tail -2 /tmp/fn.out.err)"
			bad=$((bad + 1))
			kill $pid 2>/dev/null
			wait $pid
		fi
	else
		wait $pid && { echo "fail-nth $n ($phase): server exited 0 without serving"; bad=$((bad + 1)); }
		grep -q "fail-nth $n: injected" /tmp/fn.out.err ||
			{ echo "fail-nth $n ($phase): failed without an injected fault: $(tail -2 /tmp/fn.out.err)"; bad=$((bad + 1)); }
		failed=$((failed + 1))
	fi
	[ "$(nic_snapshot)" = "$before" ] || {
		echo "fail-nth $n ($phase): NIC not restored: $(tail -2 /tmp/fn.out.err)"
		nic_diff "$before"
		bad=$((bad + 1))
		return 1
	}
}

# A fault at each site of a queue restart (the debugfs write, from this shell:
# fail-nth is per task and a fork would reset it), while a validated flow runs
# through the queue: each restart succeeds or fails with the queue still
# working; the flow's data stays valid.
fail_nth_restart() {
	setup_pair || return 1
	faults_setup || return 1
	ip netns exec peer ethtool -X dmnic1 equal 1 || return 1
	bg_flow_start 5430 5
	local n ok=0 failed=0 sites
	sites=$(tier 20 60)
	for n in $(seq 1 "$sites"); do
		# Both writes are builtins of this shell: no fork between arming and the restart.
		echo "$n" >/proc/self/fail-nth
		if echo 0 >$KNOB 2>/dev/null; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
		echo 0 >/proc/self/fail-nth
	done
	faults_teardown
	echo "info: $sites restarts with a fault at site 1..$sites: $ok succeeded, $failed failed"
	bg_flow_stop_check 5430 || return 1
	[ $failed -gt 0 ] || { echo "no restart failed"; return 1; }
	[ $ok -gt 0 ] || { echo "no restart got past its fault sites"; return 1; }
	unload_clean
}

# Channel counts, header split and the RSS table of dmnic1.
queue_state() {
	ip netns exec peer ethtool -l dmnic1 | tail -5
	ip netns exec peer ethtool -g dmnic1 | grep -i split
	ip netns exec peer ethtool -x dmnic1 | grep "^ *[0-9]*:"
}

# A kernel fault at sampled sites of two ethtool requests on dmnic1 (dmn-xfer
# fault: fail-nth in the requesting task): combined channels 8 -> 16 (queue sysfs
# objects, 8 queues' page pools, the RSS spread) and header split off (every
# queue's memory rebuilt), while a validated flow runs. Each request either
# succeeds or fails with channels, split and RSS table exactly as before; the
# flow stays valid.
fail_nth_ethtool() {
	setup_pair || return 1
	faults_setup || return 1
	ip netns exec peer ethtool -L dmnic1 combined 8 || return 1
	bg_flow_start 5440 6
	local op undo n out rc before sites ok=0 failed=0 bad=0 acks_lost=0 summary=""
	for op in "combined 16" "split off"; do
		case $op in
		combined*) undo="ethtool -L dmnic1 combined 8" ;;
		split*) undo="ethtool -G dmnic1 tcp-data-split on" ;;
		esac
		out=$(ip netns exec peer dmn-xfer fault 100000000 dmnic1 $op) || { echo "$op: $out"; return 1; }
		sites=$(echo "$out" | sed -n 's/.* passed=\([0-9]*\)$/\1/p')
		[ -n "$sites" ] && [ "$sites" -gt 0 ] || { echo "$op: no site count: $out"; return 1; }
		ip netns exec peer $undo || return 1
		# Every sampled request starts from this state (successes are undone).
		before=$(queue_state)
		for n in $(walk_points "$sites" "$(tier 2 30)" "$(tier 2 20)"); do
			out=$(ip netns exec peer dmn-xfer fault "$n" dmnic1 $op)
			rc=$?
			case $rc in
			0)
				ok=$((ok + 1))
				ip netns exec peer $undo || { echo "$op: undo failed after fault $n"; bad=$((bad + 1)); }
				;;
			1)
				failed=$((failed + 1))
				echo "$out" | grep -q "injected=yes" || { echo "$op: failed without a fault: $out"; bad=$((bad + 1)); }
				[ "$(queue_state)" = "$before" ] && continue
				# ENOBUFS: the request was done but netlink could not
				# allocate its answer; the change stands.
				if echo "$out" | grep -q "os_error_105"; then
					acks_lost=$((acks_lost + 1))
					ip netns exec peer $undo || { echo "$op: undo failed after fault $n"; bad=$((bad + 1)); }
					continue
				fi
				echo "$op: fault $n: state changed by a failed request: $out"
				echo "$before" >/tmp/fe.before
				queue_state | diff /tmp/fe.before - | head
				bad=$((bad + 1))
				;;
			*) echo "$op: $out"; bad=$((bad + 1)) ;;
			esac
		done
		summary="$summary $op: $sites sites;"
	done
	faults_teardown
	echo "info:$summary sampled requests: $ok succeeded, $failed failed ($acks_lost of them done but their netlink answer lost), $bad wrong"
	bg_flow_stop_check 5440 || return 1
	[ $bad = 0 ] || return 1
	[ $failed -gt 0 ] || { echo "no request failed"; return 1; }
	unload_clean
}

# Two validated flows to dmnic1 in peer, started in the background: a copy
# flow (dmn-xfer, RSS queues) on PORT+1 and a devmem flow (ncdevmem-rs bound
# to queue 8) on PORT; logs in /tmp/NAME.*. flows_check waits for both.
flows_start() { # name port copy_bytes devmem_bytes seed
	FLOWS_NAME=$1 FLOWS_COPY=$3 FLOWS_DEVMEM=$4
	rs_server "$2" "/tmp/$1.dm" -c 10.9.0.1 -v 7 -q 1
	FLOWS_DPID=$RS_PID
	wait_listen "$2" || return 1
	ip netns exec peer dmn-xfer recv $(($2 + 1)) "$3" "$5" >"/tmp/$1.recv" 2>&1 &
	FLOWS_RPID=$!
	wait_listen $(($2 + 1)) || return 1
	dmn-xfer send 10.9.0.2 $(($2 + 1)) "$3" "$5" >"/tmp/$1.send" 2>&1 &
	FLOWS_SPID=$!
	ncdevmem-rs -s 10.9.0.2 -p "$2" -v 7 --bytes "$4" >"/tmp/$1.client" 2>&1 &
	FLOWS_CPID=$!
}

# Whether both senders still run.
flows_running() {
	kill -0 $FLOWS_SPID 2>/dev/null && kill -0 $FLOWS_CPID 2>/dev/null
}

# Waits for the flows of flows_start: all bytes, valid, every token back.
flows_check() {
	local f=/tmp/$FLOWS_NAME
	wait $FLOWS_SPID || { echo "copy sender: $(cat $f.send)"; return 1; }
	wait $FLOWS_RPID || { echo "copy receiver: $(cat $f.recv)"; return 1; }
	echo "info: copy flow: $(cat $f.recv)"
	grep -q "bytes=$FLOWS_COPY .*errors=0$" $f.recv || { echo "copy flow corrupted"; return 1; }
	wait $FLOWS_CPID || { echo "devmem client: $(tail -n 3 $f.client)"; return 1; }
	wait $FLOWS_DPID || { echo "devmem server: $(tail -n 3 $f.dm.err)"; return 1; }
	check_rs_summary $f.dm $FLOWS_DEVMEM
}

# Allocations failing in dmnic1's receive path, under traffic: NAPI runs
# threaded, its threads are marked make-it-fail, and fault injection (task
# filter on) fails RF_PERCENT (default 10) percent of the slab and page
# allocations they make, at random, for 20 s (make check: until one reached
# the driver's receive path). Random, not every Nth: a receive thread's
# allocations repeat in a fixed pattern, and every 20th kept missing the
# driver's on 7.2 (74 failures in 6 s, all in TCP's own). fail-nth cannot reach there (it is
# per task, and NAPI polls in softirq otherwise). What can fail: page-pool
# refills, skb heads, and the TCP receive work done in the same thread. A
# copy flow (RSS queues, until stopped) and a devmem flow (queue 8) run
# through it; both arrive valid, every token comes back, nothing leaks.
# (Faults are kept off the receiving processes: 6.12's tcp_xa_pool_refill()
# allocates with GFP_KERNEL under xa_lock_bh(), so a failed GFP_NOWAIT
# xarray node allocation in recvmsg makes it sleep with BHs off, a
# "sleeping function called from invalid context" report from the kernel's
# own TCP code, whatever the driver.)
atomic_alloc_faults() {
	setup_pair || return 1
	faults_setup || return 1
	local d t pct=${RF_PERCENT:-10} lost0 lost1 left injected=0 threads=""
	ip netns exec peer sh -c 'echo 1 >/sys/class/net/dmnic1/threaded' || { echo "threaded NAPI refused"; return 1; }
	for t in /proc/[0-9]*; do
		case "$(cat $t/comm 2>/dev/null)" in napi/dmnic1-*) threads="$threads ${t#/proc/}" ;; esac
	done
	[ -n "$threads" ] || { echo "no NAPI thread for dmnic1"; return 1; }
	lost0=$(($(rx_sum dmnic1 alloc_fail peer) + $(rx_sum dmnic1 drops peer)))
	# The devmem flow (queue 8) has a size; the copy flow (RSS queues) runs
	# until stopped, so that traffic lasts until a failure reached dmnic1
	# however fast the machine.
	rs_server 5650 /tmp/af.dm -c 10.9.0.1 -v 7 -q 1
	local dpid=$RS_PID cpid bytes=$(($(tier 32 512) * MIB))
	wait_listen 5650 || return 1
	ncdevmem-rs -s 10.9.0.2 -p 5650 -v 7 --bytes $bytes >/tmp/af.client 2>&1 &
	cpid=$!
	bg_flow_start 5651 9
	for t in $threads; do echo 1 >/proc/$t/make-it-fail; done
	for d in failslab fail_page_alloc; do
		d=/sys/kernel/debug/$d
		echo Y >$d/task-filter
		echo 1000000 >$d/times
		echo 1 >$d/interval
		echo "$pct" >$d/probability
	done
	# At least 3 s (20 s in make stress) and until a failure has reached
	# dmnic1's receive path (most land in TCP's own allocations; which ones
	# fail depends on timing), at most 60 s, and only while the copy flow
	# runs (the window must be under traffic).
	local start now window
	window=$(tier 3 20)
	start=$(date +%s)
	now=$start
	while kill -0 $BG_SEND 2>/dev/null && [ $((now - start)) -lt 60 ]; do
		[ $((now - start)) -ge "$window" ] &&
			[ $(($(rx_sum dmnic1 alloc_fail peer) + $(rx_sum dmnic1 drops peer))) -gt "$lost0" ] && break
		sleep 0.2
		now=$(date +%s)
	done
	for d in failslab fail_page_alloc; do
		d=/sys/kernel/debug/$d
		echo 0 >$d/probability
		echo 1 >$d/interval
		left=$(cat $d/times)
		injected=$((injected + 1000000 - left))
		echo 1 >$d/times
		echo N >$d/task-filter
	done
	for t in $threads; do echo 0 >/proc/$t/make-it-fail; done
	faults_teardown
	lost1=$(($(rx_sum dmnic1 alloc_fail peer) + $(rx_sum dmnic1 drops peer)))
	echo "info: $((now - start)) s of $pct% of allocations failing in dmnic1's NAPI threads ($(echo $threads | wc -w)): $injected failed; dmnic1 could not take $((lost1 - lost0)) frames (alloc_fail $(rx_sum dmnic1 alloc_fail peer), drops $(rx_sum dmnic1 drops peer))"
	bg_flow_stop_check 5651 || return 1
	wait $cpid || { echo "devmem client: $(tail -n 3 /tmp/af.client)"; return 1; }
	wait $dpid || { echo "devmem server: $(tail -n 3 /tmp/af.dm.err)"; return 1; }
	check_rs_summary /tmp/af.dm $bytes || return 1
	[ $injected -gt 0 ] || { echo "no allocation failed"; return 1; }
	[ $lost1 -gt $lost0 ] || { echo "no failure reached dmnic1's receive path"; return 1; }
	unload_clean
}

# Channel counts (both ends), MTU (both ends, never below the flows' MSS), the
# RSS table and link down/up of dmnic1, round after round, while a copy flow
# (RSS queues) and a devmem flow (ncdevmem-rs bound to queue 8 only) of 512 MiB
# each run: both stay valid, every token comes back.
churn_under_traffic() {
	setup_pair || return 1
	local rounds=0
	flows_start ch 5601 $(($(tier 16 512) * MIB)) $(($(tier 16 512) * MIB)) 4 || return 1
	while kill -0 $FLOWS_SPID 2>/dev/null || kill -0 $FLOWS_CPID 2>/dev/null; do
		rounds=$((rounds + 1))
		ip netns exec peer ethtool -L dmnic1 combined 10 || { echo "round $rounds: channels"; return 1; }
		ethtool -L dmnic0 combined 10 || return 1
		ip link set dmnic0 mtu 9000 || return 1
		ip -n peer link set dmnic1 mtu 9000 || return 1
		ip netns exec peer ethtool -X dmnic1 equal 4 || return 1
		ip -n peer link set dmnic1 down || return 1
		sleep 0.2
		ip -n peer link set dmnic1 up || return 1
		sleep 1
		ip netns exec peer ethtool -L dmnic1 combined 16 || return 1
		ethtool -L dmnic0 combined 16 || return 1
		ip link set dmnic0 mtu 1500 || return 1
		ip -n peer link set dmnic1 mtu 1500 || return 1
		ip netns exec peer ethtool -X dmnic1 equal 8 || return 1
		sleep 1
	done
	echo "info: $rounds churn rounds (channels 16/10, MTU 1500/9000, RSS 8/4, link down/up) under traffic"
	flows_check || return 1
	[ $rounds -ge "$(tier 1 3)" ] || { echo "only $rounds rounds"; return 1; }
	unload_clean
}

# dmnic3 (second pair) moved between namespaces 5 times while a flow to it
# runs (the flow breaks: its addresses go with each move); afterwards the
# device works: a validated transfer over it. Then rmmod with it in a namespace.
netns_moves_under_traffic() {
	setup_pair pairs=2 || return 1
	ip netns add far || return 1
	ip link set dmnic3 netns far || return 1
	ip addr add 10.7.0.1/24 dev dmnic2
	ip link set dmnic2 up
	local i rpid spid
	ip -n far link set lo up
	ip -n far addr add 10.7.0.2/24 dev dmnic3
	ip -n far link set dmnic3 up
	ip netns exec far dmn-xfer recv 5620 $((1 << 40)) 2 >/dev/null 2>&1 &
	rpid=$!
	wait_listen 5620 far || return 1
	dmn-xfer send 10.7.0.2 5620 $((1 << 40)) 2 >/dev/null 2>&1 &
	spid=$!
	sleep 1
	for i in 1 2 3 4 5; do
		ip -n far link set dmnic3 netns peer || { echo "move $i out failed"; return 1; }
		ip -n peer link set dmnic3 up
		sleep 0.3
		ip -n peer link set dmnic3 netns far || { echo "move $i back failed"; return 1; }
		ip -n far addr add 10.7.0.2/24 dev dmnic3
		ip -n far link set dmnic3 up
		sleep 0.5
	done
	kill $spid $rpid 2>/dev/null
	wait $spid $rpid 2>/dev/null
	# The killed flow's sockets hold none of the pairs' receive buffers.
	wait_port_rx_free "" 5620 5 || return 1
	wait_port_rx_free far 5620 5 || return 1
	ip netns exec far dmn-xfer recv 5621 $((32 * MIB)) 3 >/tmp/nm.recv 2>&1 &
	rpid=$!
	wait_listen 5621 far || return 1
	dmn-xfer send 10.7.0.2 5621 $((32 * MIB)) 3 >/dev/null || { echo "transfer after the moves failed"; return 1; }
	wait $rpid || { echo "receiver after the moves: $(cat /tmp/nm.recv)"; return 1; }
	echo "info: after 5 moves under traffic: $(cat /tmp/nm.recv)"
	grep -q " errors=0$" /tmp/nm.recv || return 1
	unload_clean || return 1
	ip netns del far
}

# dmnic1 moved to another namespace while ncdevmem-rs (in peer) has a dma-buf
# bound to its queue 8 and a devmem stream runs. The move succeeds and the
# queue stays bound (header split cannot go off in the new namespace); the
# stream stalls (its addresses stayed behind). The server, stopped, unbinds
# the queue wherever the device now is (split can go off there) and reports
# that it could not restore a NIC that left its namespace. Moved back, the
# device serves a validated devmem stream again; rmmod is clean.
netns_move_bound_device() {
	setup_pair || return 1
	ip netns add far || return 1
	local pid cpid dm0 i
	rs_server 5640 /tmp/nb.out -c 10.9.0.1 -v 7
	pid=$RS_PID
	wait_listen 5640 || return 1
	dm0=$(stat_of dmnic1 rx8_devmem_packets peer)
	ncdevmem-rs -s 10.9.0.2 -p 5640 -v 7 --bytes $((1024 * MIB)) >/dev/null 2>&1 &
	cpid=$!
	for i in $(seq 1 300); do
		[ "$(stat_of dmnic1 rx8_devmem_packets peer)" -gt $((dm0 + 200)) ] && break
		sleep 0.1
	done
	[ "$(stat_of dmnic1 rx8_devmem_packets peer)" -gt $((dm0 + 200)) ] || { echo "no devmem stream before the move"; return 1; }
	ip -n peer link set dmnic1 netns far || { echo "moving the bound device failed"; return 1; }
	ip -n far link set dmnic1 up || return 1
	ip netns exec far ethtool -G dmnic1 tcp-data-split off 2>/dev/null &&
		{ echo "header split went off with queue 8 bound"; return 1; }
	kill -TERM $pid $cpid
	for i in $(seq 1 100); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $pid 2>/dev/null && { echo "server still running 10 s after SIGTERM"; return 1; }
	wait $pid $cpid 2>/dev/null
	echo "info: server after the move: $(tail -n 3 /tmp/nb.out.err | tr '\n' ' ')"
	grep -qiE "no such (device|interface)" /tmp/nb.out.err || { echo "server did not report the device gone"; return 1; }
	for i in $(seq 1 50); do
		ip netns exec far ethtool -G dmnic1 tcp-data-split off 2>/dev/null && break
		sleep 0.1
	done
	ip netns exec far ethtool -g dmnic1 | grep -qi "split:.*off" || { echo "queue 8 still bound after the server exited"; return 1; }
	ip -n far link set dmnic1 netns peer || return 1
	ip -n peer addr add 10.9.0.2/24 dev dmnic1
	ip -n peer link set dmnic1 up
	rs_server 5641 /tmp/nb2.out -c 10.9.0.1 -v 7
	pid=$RS_PID
	wait_listen 5641 || return 1
	ncdevmem-rs -s 10.9.0.2 -p 5641 -v 7 --bytes $((16 * MIB)) >/dev/null || { echo "client after the move back failed"; return 1; }
	wait $pid || { echo "server after the move back: $(tail -n 3 /tmp/nb2.out.err)"; return 1; }
	check_rs_summary /tmp/nb2.out $((16 * MIB)) || return 1
	unload_clean || return 1
	ip netns del far
}

# rmmod while flows run in both directions (the module has no binding, so it
# may go), one receiver stopped with a full socket: it unloads, the devices go,
# and the flows' processes, killed after, leave nothing behind (kmemleak, page
# pools; the console stays clean: no use of the freed device by a pool).
rmmod_under_traffic() {
	setup_pair || return 1
	ip netns exec peer dmn-xfer recv 5630 $((1 << 40)) 2 >/dev/null 2>&1 &
	local r1=$!
	dmn-xfer recv 5631 $((1 << 40)) 2 >/dev/null 2>&1 &
	local r2=$!
	wait_listen 5630 || return 1
	wait_listen 5631 "" || return 1
	dmn-xfer send 10.9.0.2 5630 $((1 << 40)) 2 >/dev/null 2>&1 &
	local s1=$!
	ip netns exec peer dmn-xfer send 10.9.0.1 5631 $((1 << 40)) 2 >/dev/null 2>&1 &
	local s2=$!
	sleep 2
	# One receiver stops reading: its socket keeps a full receive queue of
	# skbs on dmnic1's pool pages through the unload; they come back when it
	# is killed, after the module is gone.
	kill -STOP $r1
	sleep 1
	local b
	b=$(rx_sum dmnic1 bytes peer)
	[ "$b" -gt 0 ] || { echo "no traffic before rmmod"; return 1; }
	rmmod devmemnic || { echo "rmmod failed"; return 1; }
	echo "info: unloaded after $b bytes received on dmnic1, flows still running, one receiver stopped"
	grep -q '^devmemnic ' /proc/modules && { echo "still loaded"; return 1; }
	ip -n peer link show dmnic1 2>/dev/null && { echo "dmnic1 survived"; return 1; }
	# The stopped receiver's socket still holds pool pages: their pools are
	# destroyed and wait for them (the case this scenario is here for).
	local held
	held=$(pool_totals | tr '\n' ' ')
	echo "info: after rmmod: $held"
	[[ $held =~ detached=[1-9][0-9]*\ detached_inflight=[1-9] ]] ||
		{ echo "no destroyed page pool waited for the stopped socket's pages through rmmod: $held"; return 1; }
	kill -KILL $s1 $s2 $r1 $r2 2>/dev/null
	wait $s1 $s2 $r1 $r2 2>/dev/null
	pools_drained || return 1
	echo "info: after the kill: $(pool_totals | tr '\n' ' ')"
}

run_test hardening/devmem-queue-restarts devmem_queue_restarts
run_test hardening/token-abuse token_abuse
run_test hardening/killed-with-tokens-out killed_with_tokens
run_test hardening/fail-nth-setup-and-bind fail_nth_setup
run_test hardening/fail-nth-queue-restart fail_nth_restart
run_test hardening/fail-nth-ethtool fail_nth_ethtool
run_test hardening/atomic-alloc-faults-under-traffic atomic_alloc_faults
run_test hardening/churn-under-traffic churn_under_traffic
run_test hardening/netns-moves-under-traffic netns_moves_under_traffic
run_test hardening/netns-move-bound-device netns_move_bound_device
run_test hardening/rmmod-under-traffic rmmod_under_traffic
exit $GUEST_FAILED
