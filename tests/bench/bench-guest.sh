#!/bin/bash
# make bench, in the guest: receive cost of devmem TCP and io_uring zcrx
# against copy receive, discard receive and veth, and send cost of devmem TX
# against send and MSG_ZEROCOPY; one line per measurement:
#   BENCH case=C flows=F mtu=M rep=R bytes=B secs=S rx_user=S rx_sys=S
#         tx_user=S tx_sys=S guest_cpu=S
# (rx_*: the receiving processes' CPU seconds during the transfer; tx_*: the
# senders' over their send loops, "-" when a sender does not say; guest_cpu:
# the whole guest's busy seconds, both CPUs). scripts/bench turns them into
# the table. Settings come from /extra/bench.env. With a baseline module
# (/extra/devmemnic-baseline.ko, BENCH_BASELINE) each case runs with it
# ("module=before") and with the installed one ("module=after"), in turn.
source /extra/lib.sh
source /extra/bench.env
MIB=$((1024 * 1024))
PORT=6100
# What upstream's iou-zcrx moves per run: its client sends its 2 MiB pattern
# buffer (SEND_SIZE) once; the validated ncdevmem-rs zcrx cells move the same.
ZCRX_CMP_BYTES=$((2 * MIB))
# The pattern the validating cases check (ncdevmem-rs -v).
VALIDATE=251

# Busy CPU ticks of the whole guest (user nice system irq softirq), USER_HZ.
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
# "user system" ticks a live process has used so far.
proc_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12, $13 }'; }

die() { echo "BENCH-ERROR $*"; exit 1; }

ethp() { ip netns exec peer ethtool "$@"; }

# dmnic1: header split as asked, RSS over queues 0-7, flow i (port PORT+i,
# IPv4 and IPv6) to queue 8+i, no other rule (upstream ncdevmem adds its own
# each run).
devmemnic_setup() { # split
	ethp -G dmnic1 tcp-data-split "$1" || die "tcp-data-split $1"
	ethp -X dmnic1 equal 8 || die "rss"
	local loc
	for loc in $(ethp -n dmnic1 | awk '/^Filter:/ { print $2 }'); do
		ethp -N dmnic1 delete "$loc" || die "delete rule $loc"
	done
	local i
	for i in 0 1 2 3; do
		ethp -N dmnic1 flow-type tcp4 dst-port $((PORT + i)) action $((8 + i)) >/dev/null || die "rule $i"
		ethp -N dmnic1 flow-type tcp6 dst-port $((PORT + i)) action $((8 + i)) >/dev/null || die "rule $i (tcp6)"
	done
}

# The io_uring buffer size of a zcrx case (zcrx-4k-..., zcrx-64k-...).
zcrx_buf() { case "$1" in zcrx-4k-*) echo 4096 ;; zcrx-64k-*) echo 65536 ;; esac; }
# The devmem RX buffer size of a large-buffer case (7.3's rx-page-size).
devmem_buf() { case "$1" in devmem-16k-*) echo 16384 ;; devmem-64k-*) echo 65536 ;; esac; }

# Bytes flow i of case $1 sends in all.
flow_bytes() { # case flows
	case "$1" in
	zcrx-*-upstream | zcrx-*-ncdevmem-rs-v) echo $ZCRX_CMP_BYTES ;;
	*) echo $((BENCH_MIB * MIB / $2)) ;;
	esac
}

# Starts the receiver of flow $2 for case $1 in the peer namespace, under
# `dmn-xfer timed` (its rusage lands in /tmp/bench.time.$2).
start_receiver() { # case flow
	local c="$1" i="$2" port=$((PORT + $2)) cmd q=$((8 + $2))
	case "$c" in
	veth | split-off-copy | split-on-copy) cmd=(dmn-xfer sink $port copy) ;;
	split-on-discard | tx-*) cmd=(dmn-xfer sink $port discard) ;;
	devmem-ncdevmem-rs)
		cmd=(ncdevmem-rs -l -s 10.9.0.2 -p $port -f dmnic1 --no-config -t $q -q 1 -v 0)
		;;
	devmem-16k-ncdevmem-rs | devmem-64k-ncdevmem-rs)
		cmd=(ncdevmem-rs -l -s 10.9.0.2 -p $port -f dmnic1 --no-config -t $q -q 1 -v 0 -b "$(devmem_buf "$c")")
		;;
	devmem-upstream)
		# Upstream configures the NIC itself (through ethtool) and, without
		# -v, reads every byte of the payload for non-zero ones to print: the
		# sender sends zeros. Its per-frag log (a line per frag on stderr,
		# tens of MB per GiB) goes to /dev/null.
		cmd=(ncdevmem -l -s 10.9.0.2 -c 10.9.0.1 -p $port -f dmnic1 -t 8 -q 1)
		;;
	zcrx-*-ncdevmem-rs | zcrx-*-ncdevmem-rs-v)
		local v=0
		[[ $c == *-v ]] && v=$VALIDATE
		cmd=(ncdevmem-rs -l -s 10.9.0.2 -p $port -f dmnic1 --no-config -t $q -q 1
			--provider dma-heap --zcrx --rx-buf-len "$(zcrx_buf "$c")" -v $v)
		;;
	zcrx-*-upstream)
		# Upstream's server checks each byte against its pattern; -x N asks
		# for N-page buffers (in an area of 2 MB huge pages).
		local x=()
		[ "$(zcrx_buf "$c")" != 4096 ] && x=(-x $(($(zcrx_buf "$c") / 4096)))
		cmd=(iou-zcrx -s -p $port -i dmnic1 -q $q "${x[@]}")
		;;
	*) die "unknown case $c" ;;
	esac
	DM0[i]=$(stat_of dmnic1 "rx${q}_devmem_packets" peer)
	local err=/tmp/bench.err.$i
	[ "$c" = devmem-upstream ] && err=/dev/null
	rm -f /tmp/bench.time.$i
	ip netns exec peer dmn-xfer timed /tmp/bench.time.$i "${cmd[@]}" >/tmp/bench.out.$i 2>$err &
	RECV_PIDS+=($!)
}

# Starts the sender of flow $2 for case $1, $3 bytes to address $4.
start_sender() { # case flow bytes addr
	local c="$1" i="$2" bytes="$3" addr="$4" port=$((PORT + $2)) cmd
	case "$c" in
	zcrx-*-upstream) cmd=(iou-zcrx -c -h fd00::2 -p $port -z "$bytes") ;;
	zcrx-*-ncdevmem-rs-v) cmd=(ncdevmem-rs -s "$addr" -p $port -v $VALIDATE --bytes "$bytes") ;;
	# Devmem TX from a 16 MiB dma-buf bound to dmnic0 (setup and the
	# buffer's fill are outside the sender's timed loop).
	tx-devmem) cmd=(ncdevmem-rs -s "$addr" -p $port -f dmnic0 --size $((16 * MIB)) --bytes "$bytes") ;;
	tx-zerocopy) cmd=(ncdevmem-rs -s "$addr" -p $port --zerocopy --bytes "$bytes") ;;
	*) cmd=(ncdevmem-rs -s "$addr" -p $port --bytes "$bytes") ;;
	esac
	# A profiled run samples both CPUs for exactly as long as the sender runs.
	[ -n "${PROFILE_TO:-}" ] && cmd=(perf record -a -e cpu-clock -F 1999 -o "$PROFILE_TO" -- "${cmd[@]}")
	"${cmd[@]}" >/tmp/bench.send.$i 2>&1 &
	SEND_PIDS+=($!)
}

# Field NAME=value of a tool's summary line in FILE (empty if absent).
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1" | tail -1; }

# Checks flow i's receiver took the whole stream as the case asks; sets GOT
# to the bytes it took.
received() { # case flow bytes
	local c="$1" i="$2" bytes="$3" q=$((8 + $2)) got
	case "$c" in
	devmem-upstream | zcrx-*-upstream)
		# Upstream's tools print no total: their exit status (checked by
		# the caller; iou-zcrx validated every byte) and the sender finishing
		# say the stream arrived; the queue's counter says its payload went to
		# the memory provider.
		[ "$(stat_of dmnic1 "rx${q}_devmem_packets" peer)" -gt "${DM0[i]}" ] ||
			die "$c: no payload into the memory provider of queue $q"
		got=$bytes
		;;
	devmem-ncdevmem-rs | devmem-*k-ncdevmem-rs | zcrx-*)
		got=$(field /tmp/bench.out.$i bytes)
		local f
		f=$(field /tmp/bench.out.$i frags)
		FRAGS=$((FRAGS + ${f:-0}))
		[ "$(field /tmp/bench.out.$i validation_errors)" = 0 ] || die "$c: validation errors: $(cat /tmp/bench.out.$i)"
		[ "$(stat_of dmnic1 "rx${q}_devmem_packets" peer)" -gt "${DM0[i]}" ] ||
			die "$c: no payload into the memory provider of queue $q"
		;;
	*) got=$(field /tmp/bench.out.$i bytes) ;;
	esac
	[ "$got" = "$bytes" ] || die "$c flow $i: received ${got:-nothing} of $bytes bytes"
	GOT=$got
}

# Sum of summary field NAME over the senders of flows 0..FLOWS-1, 3
# decimals ("-" if a sender did not print it).
senders_sum() { # name flows
	local i v
	for ((i = 0; i < $2; i++)); do
		v=$(field /tmp/bench.send.$i "$1")
		echo "${v:--}"
	done | awk '$1 == "-" { bad = 1 } { t += $1 } END { if (bad) print "-"; else printf "%.3f\n", t }'
}

# One measurement: receivers up, then FLOWS senders; for receive cases, time
# and receiver CPU from the first byte sent to the last receiver's exit; for
# send cases (tx-*), the senders' own time and CPU over their send loops
# (bind, dma-buf fill and connect left out).
measure() { # case flows mtu rep
	local c="$1" flows="$2" mtu="$3" rep="$4" addr=10.9.0.2 i
	[ "$c" = veth ] && addr=10.8.0.2
	local per
	per=$(flow_bytes "$c" "$flows")
	RECV_PIDS=() SEND_PIDS=() DM0=()
	for i in $(seq 0 $((flows - 1))); do
		start_receiver "$c" "$i"
		wait_listen $((PORT + i)) || { tail -5 /tmp/bench.err.$i; die "$c: receiver $i did not listen"; }
	done
	local pids=() user0=0 sys0=0 t0 c0 p
	for i in $(seq 0 $((flows - 1))); do
		pids+=($(sed -n 's/^pid=//p' /tmp/bench.time.$i))
	done
	for i in "${pids[@]}"; do
		p=$(proc_ticks "$i")
		user0=$((user0 + ${p% *}))
		sys0=$((sys0 + ${p#* }))
	done
	c0=$(cpu_ticks)
	t0=$EPOCHREALTIME
	for i in $(seq 0 $((flows - 1))); do
		start_sender "$c" "$i" "$per" "$addr"
	done
	local ok=1
	for i in "${SEND_PIDS[@]}"; do wait "$i" || ok=0; done
	for i in "${RECV_PIDS[@]}"; do wait "$i" || ok=0; done
	local t1=$EPOCHREALTIME c1
	c1=$(cpu_ticks)
	[ $ok = 1 ] || { tail -3 /tmp/bench.err.* /tmp/bench.send.*; die "$c flows=$flows mtu=$mtu: a sender or receiver failed"; }
	local rx_user=0 rx_sys=0 got=0 secs
	FRAGS=0
	for i in $(seq 0 $((flows - 1))); do
		rx_user=$(awk -v a="$rx_user" '/^cpu_user=/ { split($1, u, "="); print a + u[2] }' /tmp/bench.time.$i)
		rx_sys=$(awk -v a="$rx_sys" '/^cpu_user=/ { split($2, s, "="); print a + s[2] }' /tmp/bench.time.$i)
		received "$c" "$i" "$per"
		got=$((got + GOT))
	done
	# The receivers' CPU before the first byte (dma-buf setup, binding) is
	# not receive cost: take it off.
	rx_user=$(awk -v a="$rx_user" -v b="$user0" 'BEGIN { printf "%.3f", a - b / 100 }')
	rx_sys=$(awk -v a="$rx_sys" -v b="$sys0" 'BEGIN { printf "%.3f", a - b / 100 }')
	local tx_user tx_sys
	tx_user=$(senders_sum cpu_user "$flows")
	tx_sys=$(senders_sum cpu_sys "$flows")
	case "$c" in
	tx-*)
		secs=$(for i in $(seq 0 $((flows - 1))); do field /tmp/bench.send.$i secs; done |
			awk '$1 > m { m = $1 } END { printf "%.4f", m }')
		if [ "$c" = tx-devmem ]; then
			for i in $(seq 0 $((flows - 1))); do
				[ "$(field /tmp/bench.send.$i copied)" = 0 ] || die "$c: sends copied: $(cat /tmp/bench.send.$i)"
			done
		fi
		;;
	*) secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') ;;
	esac
	echo "BENCH case=$c flows=$flows mtu=$mtu rep=$rep${MODULE:+ module=$MODULE} bytes=$got secs=$secs rx_user=$rx_user rx_sys=$rx_sys" \
		"tx_user=$tx_user tx_sys=$tx_sys guest_cpu=$(awk -v a=$c0 -v b=$c1 'BEGIN { printf "%.2f", (b - a) / 100 }')" \
		"frags=$FRAGS"
}

# Cases that run with one flow only: upstream ncdevmem's built-in checks
# toggle header split, which another instance's binding refuses; upstream
# iou-zcrx and its validated comparison are single-connection tests.
one_flow_only() { [[ $1 == devmem-upstream || $1 == zcrx-*-upstream || $1 == zcrx-*-ncdevmem-rs-v ]]; }

set_mtu() {
	local dev
	for dev in dmnic0 vb0; do ip link set $dev mtu "$1"; done
	for dev in dmnic1 vb1; do ip netns exec peer ip link set $dev mtu "$1"; done
}

# The pair, from the installed module ("after") or the baseline ("before").
# Threaded NAPI on both devmemnic sides: a queue's poll (the NIC's receive
# DMA, GRO, the stack's receive path) runs in its own kthread, as a NIC's
# interrupt work runs on the CPU its IRQ is bound to, not in the softirq of
# the task whose transmit scheduled it. The sender's CPU time is then its own
# sending, and the two vCPUs can work at once. (veth has no NAPI without
# XDP: its frames go through the per-CPU backlog in the sender's softirq.)
use_module() { # after|before
	[ "${MODULE:-}" = "$1" ] && return 0
	if [ -n "${MODULE:-}" ]; then
		ip netns del peer && rmmod devmemnic || die "unloading the $MODULE module"
	fi
	local ko=
	[ "$1" = before ] && ko=/extra/devmemnic-baseline.ko
	DMN_KO=$ko setup_pair || die "devmemnic pair ($1)"
	# (veth's far end lives in the namespace too.)
	setup_veth vb0 vb1 || die "veth"
	if [ "${BENCH_THREADED:-1}" = 1 ]; then
		echo 1 >/sys/class/net/dmnic0/threaded || die "threaded NAPI on dmnic0"
		ip netns exec peer sh -c 'echo 1 >/sys/class/net/dmnic1/threaded' || die "threaded NAPI on dmnic1"
	fi
	set_mtu "$CUR_MTU"
	MODULE=$1
}
MODULES=after
[ -f /extra/devmemnic-baseline.ko ] && MODULES="before after"
CUR_MTU=1500
use_module after
[ "$MODULES" = after ] && MODULE=
# Upstream iou-zcrx's large buffers come from 2 MB huge pages (16 per server).
[[ " $BENCH_CASES " == *" zcrx-64k-upstream "* ]] && echo 64 >/proc/sys/vm/nr_hugepages
# ncdevmem-rs -b puts its dma-buf (64 MB a flow) on them too.
[[ " $BENCH_CASES " == *" devmem-"[16][64]"k-ncdevmem-rs "* ]] && echo 160 >/proc/sys/vm/nr_hugepages
echo "BENCH-INFO $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB," \
	"$BENCH_MIB MiB per measurement, $BENCH_REPS runs each"

for mtu in $BENCH_MTUS; do
	CUR_MTU=$mtu
	set_mtu "$mtu"
	for flows in $BENCH_FLOWS; do
		for c in $BENCH_CASES; do
			one_flow_only "$c" && [ "$flows" != 1 ] && continue
			for m in $MODULES; do
				[ "$MODULES" != after ] && use_module "$m"
				case "$c" in
				split-off-copy) devmemnic_setup off ;;
				*) devmemnic_setup on ;;
				esac
				for rep in $(seq 1 "$BENCH_REPS"); do
					measure "$c" "$flows" "$mtu" "$rep"
				done
			done
		done
	done
done
# BENCH_PROFILE="case ...": one more single-flow run of each (of
# BENCH_PROFILE_MIB: under TCG the guest samples at its tick rate), its sender
# under perf (cpu-clock samples of both CPUs while it runs: the transfer;
# kernel and module symbols from kallsyms, the module's Rust names
# demangled), printed as PROFILE lines: each function's share of all
# samples, idle included, highest first, and PROFILE-SAMPLES with the count.
if [ -n "${BENCH_PROFILE:-}" ]; then
	set_mtu "${BENCH_MTUS%% *}"
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	echo 0 >/proc/sys/kernel/kptr_restrict
	for c in $BENCH_PROFILE; do
		case "$c" in
		split-off-copy) devmemnic_setup off ;;
		*) devmemnic_setup on ;;
		esac
		BENCH_MIB=$BENCH_PROFILE_MIB PROFILE_TO=/tmp/perf.data measure "$c" 1 "${BENCH_MTUS%% *}" profile
		grep -q "Captured and wrote" /tmp/bench.send.0 || { cat /tmp/bench.send.0; die "perf record failed"; }
		echo "PROFILE-SAMPLES case=$c $(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' /tmp/bench.send.0)"
		perf report -i /tmp/perf.data --stdio --no-children --sort dso,sym --percent-limit 0.2 2>/tmp/perf.log |
			dmn-xfer demangle |
			sed -n 's/^ *\([0-9.]*\)%  *\([^ ]*\)  *\[[kH.]\] \(.*\)$/PROFILE case='"$c"' pct=\1 dso=\2 fn=\3/p' | head -60
	done
fi
echo "BENCH-DONE"
