#!/bin/bash
# Guest tests: native XDP (PASS, DROP, TX, ABORTED; single- and multi-buffer)
# with /extra/xdp_verdicts.bpf.o (tests/guest/bpf), attached to the peer's
# dmnic1: UDP to port 9 is dropped, to port 7 echoed back out (XDP_TX), to
# port 11 echoed through a redirect to dmnic1 itself (ndo_xdp_xmit), to port
# 13 aborted; everything else passes.
source /extra/lib.sh
MIB=$((1024 * 1024))
PROG=/extra/xdp_verdicts.bpf.o

# Attaches the program to dmnic1 (section $1: xdp or xdp.frags).
attach() { ip -n peer link set dev dmnic1 xdpdrv obj $PROG sec "$1"; }

# Sends $2 datagrams to the peer's port $1 without waiting for replies.
udp_spray() { # port count
	local i
	exec 5<>"/dev/udp/10.9.0.2/$1" || return 1
	for ((i = 0; i < $2; i++)); do echo "datagram $i" >&5; done
	exec 5>&-
}

# What ndo_bpf and the MTU accept: a single-buffer program only while a
# frame fits one page, a multi-buffer one at any MTU, and never the switch
# from multi- to single-buffer above that.
attach_limits() {
	setup_pair || return 1
	attach xdp || { echo "single-buffer attach at MTU 1500 failed"; return 1; }
	ip -n peer -d link show dmnic1 | grep -q 'prog/xdp id' || { echo "no program shown"; return 1; }
	# One 4 KiB page: 320 bytes of headroom, 320 of skb_shared_info, and an
	# Ethernet header with a VLAN tag beside the MTU.
	ip -n peer link set dmnic1 mtu 3438 || { echo "MTU 3438 refused under a single-buffer program"; return 1; }
	ip -n peer link set dmnic1 mtu 3439 2>/dev/null && { echo "MTU 3439 taken under a single-buffer program"; return 1; }
	ip -n peer link set dev dmnic1 xdpdrv off || return 1
	ip -n peer link set dmnic1 mtu 9000 || return 1
	local err
	err=$(attach xdp 2>&1) && { echo "single-buffer attach at MTU 9000 accepted"; return 1; }
	[[ $err == *"single-buffer XDP"* ]] || { echo "no reason given: $err"; return 1; }
	attach xdp.frags || { echo "multi-buffer attach at MTU 9000 failed"; return 1; }
	ip -n peer -force link set dev dmnic1 xdpdrv obj $PROG sec xdp.frags || { echo "multi -> multi refused"; return 1; }
	ip -n peer -force link set dev dmnic1 xdpdrv obj $PROG sec xdp 2>/dev/null && { echo "multi -> single accepted at MTU 9000"; return 1; }
	ip -n peer link set dev dmnic1 xdpdrv off || return 1
	ip -n peer -d link show dmnic1 | grep -q 'prog/xdp' && { echo "program still attached"; return 1; }
	teardown_pair
}

# Every verdict at MTU $1 with program section $2, datagrams of $3 bytes
# echoed, and a TCP stream of $4 MiB through XDP_PASS (its sender segments
# in software: no super-frame reaches a program).
verdicts() { # mtu section echo-bytes mib
	local mtu="$1" sec="$2" size="$3" mib="$4"
	setup_pair || return 1
	ip link set dmnic0 mtu "$mtu" && ip -n peer link set dmnic1 mtu "$mtu" || return 1
	attach "$sec" || return 1
	local drop0 tx0 exc0 txp0 gso0 redir0 xmit0
	drop0=$(rx_sum dmnic1 xdp_drop peer)
	tx0=$(rx_sum dmnic1 xdp_tx peer)
	redir0=$(rx_sum dmnic1 xdp_redirect peer)
	xmit0=$(tx_sum dmnic1 xdp_xmit peer)
	exc0=$(rx_sum dmnic1 xdp_exception peer)
	txp0=$(ip netns exec peer cat /sys/class/net/dmnic1/statistics/tx_packets)
	gso0=$(tx_sum dmnic0 gso_packets)
	udp_spray 9 20 || return 1
	udp_spray 13 5 || return 1
	local n=5 i got
	payload "$size" /tmp/echo-out
	for ((i = 0; i < n; i++)); do
		got=$(udp_roundtrip 10.9.0.2 7 /tmp/echo-out)
		[ "$got" = "$(cat /tmp/echo-out)" ] || { echo "echo $i: ${#got} bytes back of $size"; return 1; }
		got=$(udp_roundtrip 10.9.0.2 11 /tmp/echo-out)
		[ "$got" = "$(cat /tmp/echo-out)" ] || { echo "redirected echo $i: ${#got} bytes back of $size"; return 1; }
	done
	xfer_check 10.9.0.2 5301 $((mib * MIB)) || return 1
	local drop tx exc txp gso redir xmit
	drop=$(($(rx_sum dmnic1 xdp_drop peer) - drop0))
	tx=$(($(rx_sum dmnic1 xdp_tx peer) - tx0))
	redir=$(($(rx_sum dmnic1 xdp_redirect peer) - redir0))
	xmit=$(($(tx_sum dmnic1 xdp_xmit peer) - xmit0))
	exc=$(($(rx_sum dmnic1 xdp_exception peer) - exc0))
	txp=$(($(ip netns exec peer cat /sys/class/net/dmnic1/statistics/tx_packets) - txp0))
	gso=$(($(tx_sum dmnic0 gso_packets) - gso0))
	echo "info: dropped $drop, sent back $tx, redirected $redir (sent $xmit), aborted $exc, super-frames $gso"
	[ "$drop" = 20 ] || { echo "xdp_drop grew by $drop, not 20"; return 1; }
	[ "$redir" = "$n" ] || { echo "xdp_redirect grew by $redir, not $n"; return 1; }
	[ "$xmit" = "$n" ] || { echo "xdp_xmit grew by $xmit, not $n"; return 1; }
	[ "$exc" = 5 ] || { echo "xdp_exception grew by $exc, not 5"; return 1; }
	[ "$tx" = "$n" ] || { echo "xdp_tx grew by $tx, not $n"; return 1; }
	[ "$txp" -ge $((2 * n)) ] || { echo "link tx_packets grew by $txp, under $((2 * n))"; return 1; }
	[ "$gso" = 0 ] || { echo "$gso super-frames sent to a program"; return 1; }
	[ "$(rx_sum dmnic1 xdp_oversize peer)" = 0 ] || { echo "frames too large for the program"; return 1; }
	# Detached, the sender's TSO reaches the wire again.
	ip -n peer link set dev dmnic1 xdpdrv off || return 1
	xfer_check 10.9.0.2 5302 $((4 * MIB)) >/dev/null || return 1
	[ "$(($(tx_sum dmnic0 gso_packets) - gso0))" -gt 0 ] || { echo "no super-frames after detach"; return 1; }
	teardown_pair
}

# A program attached and detached while a stream runs through it: the stream
# completes intact (frames in flight at the switch are dropped and counted,
# TCP resends them), and the module unloads with the program attached.
attach_under_traffic() {
	setup_pair || return 1
	ip netns exec peer dmn-xfer recv 5303 $((16 * MIB)) 7 >/tmp/xfer-recv.5303 2>&1 &
	local rpid=$! i
	wait_listen 5303 || return 1
	dmn-xfer send 10.9.0.2 5303 $((16 * MIB)) 7 >/tmp/xfer-send.5303 2>&1 &
	local spid=$!
	for ((i = 0; i < $(tier 4 20); i++)); do
		attach xdp || return 1
		sleep 0.3
		ip -n peer link set dev dmnic1 xdpdrv off || return 1
		sleep 0.2
	done
	wait $spid || { echo "sender: $(cat /tmp/xfer-send.5303)"; return 1; }
	wait $rpid || { echo "receiver: $(cat /tmp/xfer-recv.5303)"; return 1; }
	grep -q "errors=0" /tmp/xfer-recv.5303 || { echo "bad stream: $(cat /tmp/xfer-recv.5303)"; return 1; }
	echo "info: $(rx_sum dmnic1 xdp_oversize peer) frames in flight at a switch dropped"
	attach xdp || return 1
	rmmod devmemnic || { echo "rmmod with a program attached failed"; return 1; }
	ip netns del peer
}

[ -f $PROG ] || { fail xdp/program-built "no $PROG"; exit 1; }
run_test xdp/attach-limits attach_limits
run_test xdp/verdicts-single-buffer verdicts 1500 xdp 1000 "$(tier 4 64)"
run_test xdp/verdicts-multi-buffer verdicts 9000 xdp.frags 8000 "$(tier 4 64)"
run_test xdp/attach-under-traffic attach_under_traffic
exit $GUEST_FAILED
