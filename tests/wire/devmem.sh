#!/bin/bash
# Devmem TCP between two guests on a wire (scripts/vm-pair; the same script
# in each, WIRE_ROLE a or b): in each guest a devmemnic pair whose far end,
# dmnic1, is bridged with the wire's NIC, so dmnic0 (10.78.0.1 in A,
# 10.78.0.2 in B) is a devmem NIC on the wire: what it sends leaves through
# dmnic1 (payload read from the dma-buf there: devmem TX) and the wire's
# NIC, and what comes in for it is split into its queues' header buffers
# and dma-bufs. Each way: plain TCP into devmem RX, then devmem TX into
# devmem RX, every byte validated; mixed kernels welcome.
source /extra/lib.sh

DM_ME=10.78.0.$WIRE_ME
DM_PEER=10.78.0.$WIRE_PEER
BYTES=$((8 * 1024 * 1024))

# The bridge, devmemnic and the addresses; waits for the peer's dmnic0.
devmem_wire() {
	local i
	WIRE_IF=$(wire_iface) || { echo "no NIC with this guest's wire MAC"; return 1; }
	modprobe -q bridge 2>/dev/null
	modprobe devmemnic || return 1
	# Only dmnic0 answers for its address: the bridge's own port (br0) is
	# no host interface here (no ARP), and no interface answers ARP for
	# another's address (arp_ignore 1); else the peer may learn br0's MAC
	# for dmnic0's address and the traffic bypass dmnic0.
	echo 1 >/proc/sys/net/ipv4/conf/all/arp_ignore || return 1
	ip -batch - <<-EOF2 || return 1
		link set lo up
		link add br0 type bridge
		link set br0 arp off
		link set $WIRE_IF master br0
		link set dmnic1 master br0
		link set $WIRE_IF up
		link set dmnic1 up
		link set br0 up
		addr add $DM_ME/24 dev dmnic0
		link set dmnic0 up
	EOF2
	for ((i = 0; i < 300; i++)); do
		ping -c 1 -W 1 "$DM_PEER" >/dev/null 2>&1 && {
			echo "info: dmnic0 $DM_ME reaches $DM_PEER ($WIRE_PEER_KERNEL) through dmnic1, br0 and $WIRE_IF; $(uname -r) here"
			return 0
		}
	done
	echo "the peer's dmnic0 ($DM_PEER) never answered"
	return 1
}

# The receiver: devmem RX on dmnic0, BYTES validated in the dma-buf.
receive() { # port
	timeout 300 ncdevmem-rs -l -s "$DM_ME" -c "$DM_PEER" -p "$1" -f dmnic0 -v 7 --size $((16 * 1024 * 1024)) \
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
# a dma-buf through dmnic0; a kernel without devmem TX (6.12) sends plain
# TCP instead and says it skipped (the receiver's devmem RX still counts).
send() { # port plain|devmem
	local i args=() skip=
	if [ "$2" = devmem ]; then
		if has_feature devmem-tx; then
			args=(-f dmnic0 -c "$DM_ME" --size $((4 * 1024 * 1024)))
		else
			skip="$(uname -r) has no devmem TX: plain TCP sent instead"
		fi
	fi
	for ((i = 0; i < 300; i++)); do
		ncdevmem-rs -s "$DM_PEER" -p "$1" -v 7 --bytes $BYTES "${args[@]}" >/tmp/w.send 2>/tmp/w.send.err && {
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

# The devmemnic pair's non-zero counters, for a failure's report.
nic_counters() {
	local d
	for d in dmnic0 dmnic1; do
		echo "$d: $(ethtool -S $d | grep -v ': 0$' | tr -s ' \n' ' ')"
	done
	echo "links: $(ip -s -o link show | tr -s ' ' ' ')"
	echo "tcp: $(grep '^Tcp:' /proc/net/snmp | tr -s ' ' ' ' | tr '\n' ' ')"
	echo "ip: $(grep '^Ip:' /proc/net/snmp | tr -s ' ' ' ' | tr '\n' ' ')"
}

summary_field() { # file field
	sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$1" | tail -1
}

wire_test wire/devmem-link devmem_wire
if [ "$WIRE_FAILED" = 0 ]; then
	wire_test wire/devmem-tx-into-devmem-rx-on-b leg b 7201 devmem
	wire_test wire/plain-into-devmem-rx-on-b leg b 7200 plain
	wire_test wire/plain-into-devmem-rx-on-a leg a 7202 plain
	wire_test wire/devmem-tx-into-devmem-rx-on-a leg a 7203 devmem
fi
exit "$WIRE_FAILED"
