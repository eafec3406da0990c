#!/bin/bash
# Devmem TCP between two guests on a wire (scripts/vm-pair; the same script
# in each, WIRE_ROLE a or b): in each guest a devmemnic device stacked on
# the wire's NIC (`ip link add dmn0 link eth0 type devmemnic`), dmn0
# (10.78.0.1 in A, 10.78.0.2 in B): what it sends leaves through the wire's
# NIC (a devmem TX payload read from its dma-buf first), and what comes in
# for its address is split into its queues' header buffers and dma-bufs.
# Each way: plain TCP into devmem RX, then devmem TX into devmem RX, every
# byte validated; mixed kernels welcome.
source /extra/lib.sh

BYTES=$((8 * 1024 * 1024))
# The pattern's closing byte: ncdevmem-rs follows the running kernel's
# upstream ncdevmem (0 on 6.12, newline on 7.x) unless told; the two guests
# may run different kernels, so both say which.
PATTERN=(-v 7 --pattern-end newline)

# The receiver: devmem RX on the stacked device, BYTES validated in the dma-buf.
receive() { # port
	timeout 300 ncdevmem-rs -l -s "$DM_ME" -c "$DM_PEER" -p "$1" -f $DM_DEV "${PATTERN[@]}" --size $((16 * 1024 * 1024)) \
		>/tmp/w.$1.out 2>/tmp/w.$1.err || {
		tail -3 /tmp/w.$1.err
		nic_counters
		return 1
	}
	local f=/tmp/w.$1.out
	echo "info: $(cat $f)"
	[ "$(summary_field $f bytes)" = $BYTES ] || { echo "received $(summary_field $f bytes) bytes"; return 1; }
	[ "$(summary_field $f validation_errors)" = 0 ] || return 1
	[ "$(summary_field $f dmabuf_bytes)" -gt $((BYTES * 9 / 10)) ] || {
		nic_counters
		echo "payload not in the dma-buf"
		return 1
	}
}

# The sender, retrying until the peer listens: plain TCP, or (devmem) from
# a dma-buf through the stacked device; a kernel without devmem TX (6.12) sends plain
# TCP instead and says it skipped (the receiver's devmem RX still counts).
send() { # port plain|devmem
	local i args=() skip=
	if [ "$2" = devmem ]; then
		if has_feature devmem-tx; then
			args=(-f $DM_DEV -c "$DM_ME" --size $((4 * 1024 * 1024)))
		else
			skip="$(uname -r) has no devmem TX: plain TCP sent instead"
		fi
	fi
	for ((i = 0; i < 300; i++)); do
		ncdevmem-rs -s "$DM_PEER" -p "$1" "${PATTERN[@]}" --bytes $BYTES "${args[@]}" >/tmp/w.send 2>/tmp/w.send.err && {
			echo "info: sent: $(cat /tmp/w.send)"
			[ -z "$skip" ] || echo "skip: $skip"
			return 0
		}
		grep -qi "refused" /tmp/w.send.err || {
			tail -3 /tmp/w.send.err
			nic_counters
			return 1
		}
		sleep 1
	done
	echo "the peer never listened on $1"
	return 1
}

# Role $1 receives on port $2 what the other sends ($3: plain or devmem).
leg() { # receiver-role port plain|devmem
	if [ "$WIRE_ROLE" = "$1" ]; then receive "$2"; else send "$2" "$3"; fi
}

# The stacked device's non-zero counters, for a failure's report.
nic_counters() {
	echo "$DM_DEV: $(ethtool -S $DM_DEV | grep -v ': 0$' | tr -s ' \n' ' ')"
	echo "links: $(ip -s -o link show | tr -s ' ' ' ')"
	echo "tcp: $(grep '^Tcp:' /proc/net/snmp | tr -s ' ' ' ' | tr '\n' ' ')"
	echo "ip: $(grep '^Ip:' /proc/net/snmp | tr -s ' ' ' ' | tr '\n' ' ')"
}

summary_field() { # file field
	sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$1" | tail -1
}

wire_test wire/devmem-link stacked_wire_up
if [ "$WIRE_FAILED" = 0 ]; then
	wire_test wire/devmem-tx-into-devmem-rx-on-b leg b 7201 devmem
	wire_test wire/plain-into-devmem-rx-on-b leg b 7200 plain
	wire_test wire/plain-into-devmem-rx-on-a leg a 7202 plain
	wire_test wire/devmem-tx-into-devmem-rx-on-a leg a 7203 devmem
fi
exit "$WIRE_FAILED"
