#!/bin/bash
# Helpers for scripts on a two-guest wire (scripts/vm-pair): each guest has
# a virtio-net NIC on the wire (WIRE_ROLE a or b: MAC 52:54:00:77:00:0a or
# :0b) and addresses 10.77.0.1 (A) and 10.77.0.2 (B), fd77::1 and fd77::2.

WIRE_ROLE="${WIRE_ROLE:?WIRE_ROLE: a or b (scripts/vm-pair sets it)}"
case $WIRE_ROLE in
a) WIRE_ME=1 WIRE_PEER=2 ;;
b) WIRE_ME=2 WIRE_PEER=1 ;;
*) echo "WIRE_ROLE: a or b, not $WIRE_ROLE"; exit 2 ;;
esac
WIRE_PEER_IP=10.77.0.$WIRE_PEER
WIRE_FAILED=0
# The devmemnic device stacked on the wire NIC (stacked_wire_up): its name,
# MAC and addresses, 10.78.0.1 and fd78::1 (A), 10.78.0.2 and fd78::2 (B).
DM_DEV=dmn0
DM_MAC=52:54:00:78:00:0$WIRE_ROLE
DM_ME=10.78.0.$WIRE_ME
DM_PEER=10.78.0.$WIRE_PEER
DM_ME6=fd78::$WIRE_ME
DM_PEER6=fd78::$WIRE_PEER

# The wire's interface: the NIC with this guest's MAC (virtio_net loaded
# first where it is a module).
wire_iface() {
	local mac=52:54:00:77:00:0$WIRE_ROLE f
	modprobe -q virtio_net 2>/dev/null
	for f in /sys/class/net/*/address; do
		[ "$(cat "$f")" = "$mac" ] && { basename "$(dirname "$f")"; return 0; }
	done
	return 1
}

# The wire's side of a failure, on one line for the log: the wire NIC's
# qdisc counters, and the TCP sockets here but the listeners, established
# ones and ssh's (state, local and peer address): a closed connection's
# TIME-WAIT or FIN state holds its local port, and a sender binding that
# port fails until it goes.
wire_state() {
	local ifc
	ifc=$(wire_iface) || { echo "no NIC with this guest's wire MAC"; return 1; }
	echo "qdisc: $(tc -s qdisc show dev "$ifc" | tr -s ' \n' ' ')" \
		"| TCP: $(ss -tanH | awk '$1 != "LISTEN" && $1 != "ESTAB" && $4 !~ /:22$/ && $5 !~ /:22$/ { n++; if (n <= 100) printf "%s %s %s; ", $1, $4, $5 } END { printf "(%d)", n }')"
}

# Brings the wire up with this guest's addresses; waits (up to 300 s: the
# other guest may boot later, or slower) until the peer answers a ping.
wire_up() {
	local i
	WIRE_IF=$(wire_iface) || { echo "no NIC with this guest's wire MAC"; return 1; }
	ip link set lo up
	ip link set "$WIRE_IF" up || return 1
	ip addr add 10.77.0.$WIRE_ME/24 dev "$WIRE_IF" || return 1
	ip -6 addr add fd77::$WIRE_ME/64 dev "$WIRE_IF" nodad || return 1
	for ((i = 0; i < 300; i++)); do
		ping -c 1 -W 1 "$WIRE_PEER_IP" >/dev/null 2>&1 && return 0
	done
	echo "the peer ($WIRE_PEER_IP) never answered on $WIRE_IF"
	return 1
}

# The booted kernel's features (scripts/kernel-features, from vm-run).
has_feature() { [[ " ${DMN_FEATURES-} " == *" $1 "* ]]; }

# Runs "$@" as test $1's body (after the name): "TEST name PASS|FAIL",
# or SKIP when it succeeded saying "skip: why"; its output's "info:" lines
# always, its last lines on failure.
wire_test() { # name command...
	local name="$1" out t0
	shift
	t0=$(date +%s)
	if out=$("$@" 2>&1); then
		grep '^info:' <<<"$out" | sed "s|^|  $name: |"
		if grep -q '^skip:' <<<"$out"; then
			echo "TEST $name SKIP: $(sed -n 's/^skip: //p' <<<"$out" | head -1)"
			return
		fi
		echo "TEST $name PASS ($(($(date +%s) - t0))s)"
	else
		tail -20 <<<"$out" | sed "s|^|  $name: |"
		echo "TEST $name FAIL: $(tail -1 <<<"$out")"
		WIRE_FAILED=1
	fi
}

# Sends BYTES of SEED's pattern to the peer's PORT, retrying for up to
# 300 s until the peer listens.
wire_send() { # port bytes seed
	local i
	for ((i = 0; i < 300; i++)); do
		dmn-xfer send "$WIRE_PEER_IP" "$1" "$2" "$3" 2>/tmp/wire-send.err && return 0
		grep -q "refused" /tmp/wire-send.err || { cat /tmp/wire-send.err; return 1; }
		sleep 1
	done
	echo "the peer never listened on $1"
	return 1
}

# Stacks DM_DEV on the wire NIC (WIRE_IF, up) with DM_MAC and this
# guest's addresses; "ip link add" options come as arguments (mtu 1500).
# devmemnic is loaded already (with the caller's module arguments).
stacked_add() { # ip-link-add-options...
	# Only the device holding an address answers ARP for it: else the wire
	# NIC's stack answers for dmn0's address with its own MAC (Linux's
	# default) and the peer's frames bypass dmn0.
	echo 1 >/proc/sys/net/ipv4/conf/all/arp_ignore || return 1
	ip -batch - <<-EOF2 || return 1
		link set lo up
		link set $WIRE_IF up
		link add $DM_DEV address $DM_MAC $* link $WIRE_IF type devmemnic
		addr add $DM_ME/24 dev $DM_DEV
		addr add $DM_ME6/64 dev $DM_DEV nodad
		link set $DM_DEV up
	EOF2
}

# Waits (up to $1 seconds or so) until the peer's DM_DEV answers on its
# IPv4 address, and with "v6" on its IPv6 one too (iputils' ping: the
# selftests guests have it, the wire tests' initramfs has busybox's).
stacked_reach_peer() { # tries [v6]
	local i
	for ((i = 0; i < $1; i++)); do
		ping -c 1 -W 1 "$DM_PEER" >/dev/null 2>&1 || continue
		[ "${2:-}" != v6 ] || ping -6 -c 1 -W 1 "$DM_PEER6" >/dev/null 2>&1 || continue
		return 0
	done
	# Which side is missing: the peer guest (nothing came in on the wire)
	# or its DM_DEV (frames came; the neighbour entry says whether ARP for
	# DM_PEER got an answer).
	local s=/sys/class/net
	echo "the peer's $DM_DEV ($DM_PEER${2:+, $DM_PEER6}) never answered" \
		"($WIRE_IF received $(cat $s/"$WIRE_IF"/statistics/rx_packets) frames, $DM_DEV $(cat $s/$DM_DEV/statistics/rx_packets);" \
		"neighbour: $(ip neigh show "$DM_PEER" | head -1))"
	return 1
}

# Loads devmemnic, stacks DM_DEV on the wire NIC; waits (up to 300 s) for
# the peer's DM_DEV to answer.
stacked_wire_up() {
	WIRE_IF=$(wire_iface) || { echo "no NIC with this guest's wire MAC"; return 1; }
	modprobe devmemnic || return 1
	stacked_add || return 1
	stacked_reach_peer 300 || return 1
	echo "info: $DM_DEV $DM_ME on $WIRE_IF reaches $DM_PEER ($WIRE_PEER_KERNEL); $(uname -r) here"
}

# The wire as upstream's selftests need it across two hosts: jumbo frames
# (as on a hardware lane's NICs: DM_DEV stays at 1500, and tests raising
# its MTU, ping.py's multi-buffer XDP at 9000, stay within its lower
# device's, as a stacked device must), and no GRO on the wire NIC (gro.py
# sends frame sequences that must not coalesce, and judges DM_DEV's own
# GRO: the wire NIC must not merge them first), and a FIFO in front of the
# wire NIC, as a cable keeps frames in order: Debian's kernels default to
# fq_codel, which, once the wire NIC's TX ring fills, sends flows round
# robin, so that a flow's frames overtake older ones of other flows
# (gro_hw.py's test_gro_order sends 512 flows' first frames, then their
# second ones, and checks their order at the receiver). Its limit is
# fq_codel's default, so that it drops no more than that did.
wire_for_selftests() {
	ip link set "$WIRE_IF" mtu 9216 || return 1
	ethtool -K "$WIRE_IF" gro off || return 1
	tc qdisc replace dev "$WIRE_IF" root pfifo limit 10240
}

