#!/bin/bash
# make bench, in the guest: receive cost of devmem TCP against copy receive,
# discard receive and veth, one line per measurement:
#   BENCH case=C flows=F mtu=M rep=R bytes=B secs=S rx_user=S rx_sys=S guest_cpu=S
# (rx_user, rx_sys: the receiving processes' CPU seconds during the transfer;
# guest_cpu: the whole guest's busy seconds, both CPUs). scripts/bench turns
# them into the table. Settings come from /extra/bench.env.
source /extra/lib.sh
source /extra/bench.env
MIB=$((1024 * 1024))
PORT=6100

# Busy CPU ticks of the whole guest (user nice system irq softirq), USER_HZ.
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
uptime_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
# "user system" ticks a live process has used so far.
proc_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12, $13 }'; }

die() { echo "BENCH-ERROR $*"; exit 1; }

ethp() { ip netns exec peer ethtool "$@"; }

# dmnic1: header split as asked, RSS over queues 0-7, flow i (port PORT+i)
# to queue 8+i, no other rule (upstream ncdevmem adds its own each run).
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
	done
}

# Starts the receiver of flow $2 for case $1 in the peer namespace, under
# `dmn-xfer timed` (its rusage lands in /tmp/bench.time.$2).
start_receiver() { # case flow
	local c="$1" i="$2" port=$((PORT + $2)) cmd
	case "$c" in
	veth | split-off-copy | split-on-copy) cmd=(dmn-xfer sink $port copy) ;;
	split-on-discard) cmd=(dmn-xfer sink $port discard) ;;
	devmem-ncdevmem-rs)
		cmd=(ncdevmem-rs -l -s 10.9.0.2 -p $port -f dmnic1 --no-config -t $((8 + i)) -q 1 -v 0)
		;;
	devmem-upstream)
		# Upstream configures the NIC itself (through ethtool) and, without
		# -v, reads every byte of the payload for non-zero ones to print: the
		# sender sends zeros. Its per-frag log (a line per frag on stderr,
		# tens of MB per GiB) goes to /dev/null.
		cmd=(ncdevmem -l -s 10.9.0.2 -c 10.9.0.1 -p $port -f dmnic1 -t 8 -q 1)
		DM0=$(stat_of dmnic1 rx8_devmem_packets peer)
		;;
	esac
	local err=/tmp/bench.err.$i
	[ "$c" = devmem-upstream ] && err=/dev/null
	rm -f /tmp/bench.time.$i
	ip netns exec peer dmn-xfer timed /tmp/bench.time.$i "${cmd[@]}" >/tmp/bench.out.$i 2>$err &
	RECV_PIDS+=($!)
}

# One measurement: receivers up, then FLOWS senders of TOTAL/FLOWS bytes
# each; time and CPU from the first byte sent to the last receiver's exit.
measure() { # case flows mtu rep
	local c="$1" flows="$2" mtu="$3" rep="$4" addr=10.9.0.2 i
	[ "$c" = veth ] && addr=10.8.0.2
	local per=$((BENCH_MIB * MIB / flows))
	RECV_PIDS=()
	for i in $(seq 0 $((flows - 1))); do
		start_receiver "$c" "$i"
		wait_listen $((PORT + i)) || { cat /tmp/bench.err.$i | tail -5; die "$c: receiver $i did not listen"; }
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
	t0=$(uptime_cs)
	local spids=()
	for i in $(seq 0 $((flows - 1))); do
		ncdevmem-rs -s "$addr" -p $((PORT + i)) --bytes $per >/tmp/bench.send.$i 2>&1 &
		spids+=($!)
	done
	local ok=1
	for i in "${spids[@]}"; do wait "$i" || ok=0; done
	for i in "${RECV_PIDS[@]}"; do wait "$i" || ok=0; done
	local t1 c1
	t1=$(uptime_cs)
	c1=$(cpu_ticks)
	[ $ok = 1 ] || { tail -3 /tmp/bench.err.* /tmp/bench.send.*; die "$c flows=$flows mtu=$mtu: a sender or receiver failed"; }
	local rx_user=0 rx_sys=0 got=0
	for i in $(seq 0 $((flows - 1))); do
		rx_user=$(awk -v a="$rx_user" '/^cpu_user=/ { split($1, u, "="); print a + u[2] }' /tmp/bench.time.$i)
		rx_sys=$(awk -v a="$rx_sys" '/^cpu_user=/ { split($2, s, "="); print a + s[2] }' /tmp/bench.time.$i)
		case "$c" in
		devmem-ncdevmem-rs) got=$((got + $(sed -n 's/.* bytes=\([0-9]*\).*/\1/p' /tmp/bench.out.$i))) ;;
		devmem-upstream)
			# Its per-frag log went to /dev/null: the sender finishing (the
			# server read to EOF and closed) and upstream's exit status say
			# the stream arrived; the queue's counters say it was devmem.
			[ "$(stat_of dmnic1 rx8_devmem_packets peer)" -gt "$DM0" ] || die "$c: no devmem frames on queue 8"
			got=$((got + per))
			;;
		*) got=$((got + $(sed -n 's/.* bytes=\([0-9]*\).*/\1/p' /tmp/bench.out.$i))) ;;
		esac
	done
	[ "$got" = $((per * flows)) ] || die "$c flows=$flows mtu=$mtu: received $got of $((per * flows)) bytes"
	# The receivers' CPU before the first byte (dma-buf setup, binding) is
	# not receive cost: take it off.
	rx_user=$(awk -v a="$rx_user" -v b="$user0" 'BEGIN { printf "%.3f", a - b / 100 }')
	rx_sys=$(awk -v a="$rx_sys" -v b="$sys0" 'BEGIN { printf "%.3f", a - b / 100 }')
	echo "BENCH case=$c flows=$flows mtu=$mtu rep=$rep bytes=$got secs=$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f", (b - a) / 100 }')" \
		"rx_user=$rx_user rx_sys=$rx_sys guest_cpu=$(awk -v a=$c0 -v b=$c1 'BEGIN { printf "%.2f", (b - a) / 100 }')"
}

setup_pair || die "devmemnic pair"
setup_veth vb0 vb1 || die "veth"
echo "BENCH-INFO $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB," \
	"$BENCH_MIB MiB per measurement, $BENCH_REPS runs each"

for mtu in $BENCH_MTUS; do
	for dev in dmnic0 vb0; do ip link set $dev mtu "$mtu"; done
	for dev in dmnic1 vb1; do ip netns exec peer ip link set $dev mtu "$mtu"; done
	for flows in $BENCH_FLOWS; do
		for c in $BENCH_CASES; do
			# Upstream's built-in checks toggle header split, which another
			# instance's binding refuses: one flow only.
			[ "$c" = devmem-upstream ] && [ "$flows" != 1 ] && continue
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
# BENCH_PROFILE="case ...": one more single-flow run of each, under the
# ftrace function profiler; the kernel functions that took the most time
# (both CPUs, their own time: callees and sleep excluded) are printed as
# PROFILE lines.
if [ -n "${BENCH_PROFILE:-}" ]; then
	T=/sys/kernel/tracing
	mount -t tracefs tracefs $T 2>/dev/null
	echo 0 >$T/options/graph-time
	echo 0 >$T/options/sleep-time
	mtu=${BENCH_MTUS%% *}
	for dev in dmnic0 vb0; do ip link set $dev mtu "$mtu"; done
	for dev in dmnic1 vb1; do ip netns exec peer ip link set $dev mtu "$mtu"; done
	for c in $BENCH_PROFILE; do
		case "$c" in
		split-off-copy) devmemnic_setup off ;;
		*) devmemnic_setup on ;;
		esac
		echo 0 >$T/function_profile_enabled
		echo 1 >$T/function_profile_enabled
		measure "$c" 1 "$mtu" profile
		echo 0 >$T/function_profile_enabled
		cat $T/trace_stat/function* | awk -v c="$c" '$1 != "Function" && $1 !~ /^-/ && NF >= 4 {
			hits[$1] += $2; t[$1] += $3 } END { for (f in t) printf "PROFILE case=%s fn=%s hits=%d us=%.0f\n", c, f, hits[f], t[f] }' |
			sort -t= -k5 -n -r | head -40
	done
fi
echo "BENCH-DONE"
