#!/bin/bash
# make bench TOPOLOGY=two-vm, in each guest of scripts/vm-pair: A sends, B
# receives, case after case, over the virtio-net wire: plain TCP between the
# wire NICs (the baseline), and through devmemnic devices stacked on them
# (dmn0, as tests/wire/devmem.sh sets up): plain TCP into a copying reader,
# devmem RX, devmem TX into devmem RX, zcrx. Each side prints one line a
# case: "BENCH-WIRE case=C role=rx|tx bytes=N secs=S busy=B" (secs: the
# receiver's, from accept to the last byte; busy: the guest's busy CPU
# seconds over the case, both CPUs); scripts/bench-wire makes the table.
source /extra/lib.sh

MIB=$((1024 * 1024))
BYTES=$((${BENCH_WIRE_MIB:-256} * MIB))


# Busy CPU ticks of the whole guest (user nice system irq softirq), USER_HZ.
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1" | tail -1; }

# The sender, retrying until the receiver listens.
send() { # case addr port args...
	local c="$1" addr="$2" port="$3" i c0
	shift 3
	for ((i = 0; i < 300; i++)); do
		c0=$(cpu_ticks)
		"$@" >/tmp/b.send 2>/tmp/b.send.err && {
			echo "BENCH-WIRE case=$c role=tx bytes=$BYTES secs=- busy=$(awk -v a=$c0 -v b=$(cpu_ticks) 'BEGIN { printf "%.2f", (b - a) / 100 }')"
			return 0
		}
		grep -qi "refused" /tmp/b.send.err || { echo "BENCH-WIRE-ERROR case=$c: $(tail -2 /tmp/b.send.err)"; return 1; }
		sleep 0.5
	done
	echo "BENCH-WIRE-ERROR case=$c: nothing listened on $addr:$port"
	return 1
}

# The receiver: the command's summary gives bytes and secs.
recv() { # case args...
	local c="$1" c0 got secs
	shift
	c0=$(cpu_ticks)
	"$@" >/tmp/b.recv 2>/tmp/b.recv.err || { echo "BENCH-WIRE-ERROR case=$c: $(tail -2 /tmp/b.recv.err)"; return 1; }
	got=$(field /tmp/b.recv bytes)
	secs=$(field /tmp/b.recv secs)
	[ "$got" = "$BYTES" ] || { echo "BENCH-WIRE-ERROR case=$c: received ${got:-nothing} of $BYTES bytes"; return 1; }
	[ "$(field /tmp/b.recv validation_errors)" = "" ] || [ "$(field /tmp/b.recv validation_errors)" = 0 ] ||
		{ echo "BENCH-WIRE-ERROR case=$c: validation errors"; return 1; }
	echo "BENCH-WIRE case=$c role=rx bytes=$got secs=$secs busy=$(awk -v a=$c0 -v b=$(cpu_ticks) 'BEGIN { printf "%.2f", (b - a) / 100 }')"
}

# One case: B receives with RECV..., A sends with SEND... (split by "--").
run_case() { # case port recv-args... -- send-args...
	local c="$1" port="$2" r=() s=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do r+=("$1"); shift; done
	shift
	s=("$@")
	if [ "$WIRE_ROLE" = b ]; then
		recv "$c" "${r[@]}"
	else
		send "$c" "${s[0]}" "$port" "${s[@]:1}"
	fi
}

wire_up && stacked_wire_up || exit 1
RX_ME=10.78.0.2
echo "BENCH-WIRE-INFO kernel=$(uname -r) role=$WIRE_ROLE peer=$WIRE_PEER_KERNEL bytes=$BYTES"
rc=0
run_case eth0-plain 7400 dmn-xfer sink 7400 copy 10.77.0.2 -- \
	10.77.0.2 ncdevmem-rs -s 10.77.0.2 -p 7400 --bytes $BYTES || rc=1
run_case dmn0-plain 7401 dmn-xfer sink 7401 copy $RX_ME -- \
	$RX_ME ncdevmem-rs -s $RX_ME -p 7401 --bytes $BYTES || rc=1
run_case devmem-rx 7402 ncdevmem-rs -l -s $RX_ME -c 10.78.0.1 -p 7402 -f dmn0 -v 0 --size $((16 * MIB)) -- \
	$RX_ME ncdevmem-rs -s $RX_ME -p 7402 --bytes $BYTES || rc=1
# Devmem TX where the sender's kernel has it.
if { [ "$WIRE_ROLE" = a ] && has_feature devmem-tx; } || { [ "$WIRE_ROLE" = b ] && [[ $WIRE_PEER_FEATURES == *devmem-tx* ]]; }; then
	run_case devmem-tx-into-devmem-rx 7403 ncdevmem-rs -l -s $RX_ME -c 10.78.0.1 -p 7403 -f dmn0 -v 0 --size $((16 * MIB)) -- \
		$RX_ME ncdevmem-rs -s $RX_ME -p 7403 -f dmn0 -c 10.78.0.1 --size $((16 * MIB)) --bytes $BYTES || rc=1
fi
# zcrx where the receiver's kernel has it.
if { [ "$WIRE_ROLE" = b ] && has_feature zcrx; } || { [ "$WIRE_ROLE" = a ] && [[ $WIRE_PEER_FEATURES == *zcrx* ]]; }; then
	run_case zcrx 7404 ncdevmem-rs -l --zcrx -s $RX_ME -c 10.78.0.1 -p 7404 -f dmn0 -t 15 -q 1 -v 0 \
		--provider dma-heap --size $((16 * MIB)) -- \
		$RX_ME ncdevmem-rs -s $RX_ME -p 7404 --bytes $BYTES || rc=1
fi
exit $rc
