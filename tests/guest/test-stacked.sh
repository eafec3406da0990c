#!/bin/bash
# Stacked devices: `ip link add dmn0 link sv0 type devmemnic`, a devmemnic
# NIC whose wire is another Ethernet device (here one end of a veth pair;
# on real hosts eth0). In one guest: dmn0 (10.10.0.1) on sv0 here, dmn1
# (10.10.0.2) on sv1 in namespace peer, made with stock iproute2.
source /extra/lib.sh

# The module, a veth pair sv0 / sv1 (peer), and a stacked device on each
# end, up with addresses; waits for both carriers.
stacked_setup() {
	if [ -n "${DMN_KO:-}" ]; then
		insmod "$DMN_KO" || return 1
	else
		modprobe devmemnic || return 1
	fi
	mkdir -p /run/netns
	ip netns add peer || return 1
	# Only the device holding an address answers ARP for it: else sv1's
	# stack answers for dmn1's address with sv1's MAC (Linux answers ARP
	# for any local address on any interface by default) and frames for
	# 10.10.0.2 bypass dmn1 (Documentation/wire.rst).
	echo 1 >/proc/sys/net/ipv4/conf/all/arp_ignore || return 1
	ip netns exec peer sh -c 'echo 1 >/proc/sys/net/ipv4/conf/all/arp_ignore' || return 1
	ip -batch - <<-EOF || return 1
		link add sv0 type veth peer name sv1 netns peer
		link add dmn0 link sv0 type devmemnic
		addr add 10.10.0.1/24 dev dmn0
		addr add fd10::1/64 dev dmn0 nodad
		link set sv0 up
		link set dmn0 up
	EOF
	ip -n peer -batch - <<-EOF || return 1
		link add dmn1 link sv1 type devmemnic
		addr add 10.10.0.2/24 dev dmn1
		addr add fd10::2/64 dev dmn1 nodad
		link set lo up
		link set sv1 up
		link set dmn1 up
	EOF
	wait_carrier dmn0 && wait_carrier dmn1 peer
}

wait_carrier() { # dev [ns]
	local i c
	for ((i = 0; i < 50; i++)); do
		c=$(in_ns "${2:-}" cat /sys/class/net/$1/carrier 2>/dev/null)
		[ "$c" = 1 ] && return 0
		sleep 0.1
	done
	echo "no carrier on $1"
	return 1
}

# The stacked devices' non-zero counters, for a failure's report.
counters() {
	echo "dmn0: $(ethtool -S dmn0 | grep -v ': 0$' | tr -s ' \n' ' ')"
	echo "dmn1: $(ip netns exec peer ethtool -S dmn1 | grep -v ': 0$' | tr -s ' \n' ' ')"
	echo "dmn1 rules: $(ip netns exec peer ethtool -n dmn1 | tr -s ' \n' ' ')"
}

carrier_of() { # dev [ns]
	in_ns "${2:-}" cat /sys/class/net/$1/carrier 2>/dev/null
}

# `ip link add` with a message the kernel gives; $1: what it must say.
refused() { # message ip-args...
	local want="$1" out
	shift
	out=$(ip "$@" 2>&1) && { echo "ip $* was accepted"; return 1; }
	[[ $out == *"$want"* ]] || { echo "ip $*: \"$out\", want \"$want\""; return 1; }
}

# Made and shown as a link kind; what it refuses, with the reason; deleted
# by `ip link del` and with the module.
link_ops() {
	local out
	modprobe devmemnic || return 1
	ip link add sv0 type veth peer name sv1 || return 1
	refused "MTU above the lower device's" link add dmn0 link sv0 mtu 9000 type devmemnic || return 1
	ip link add dmn0 link sv0 type devmemnic || return 1
	out=$(ip -d -o link show dmn0) || return 1
	echo "info: $out"
	[[ $out == *"dmn0@sv0:"* ]] || { echo "ip link does not show dmn0 on sv0"; return 1; }
	[[ $out == *" devmemnic "* ]] || { echo "ip -d link does not say devmemnic"; return 1; }
	[ "$(ethtool -i dmn0 | sed -n 's/^driver: //p')" = devmemnic ] || return 1
	[ "$(cat /sys/class/net/dmn0/mtu)" = 1500 ] || { echo "MTU $(cat /sys/class/net/dmn0/mtu), not sv0's"; return 1; }
	[ -e /sys/class/net/sv0/upper_dmn0 ] || { echo "sv0 has no upper dmn0"; return 1; }
	refused "must be Ethernet" link add bad1 link lo type devmemnic || return 1
	refused "already has a receive handler" link add bad2 link sv0 type devmemnic || return 1
	refused "cannot stack on a devmemnic device" link add bad3 link dmn0 type devmemnic || return 1
	refused "Cannot find device" link add bad4 link nosuchdev type devmemnic || return 1
	ip link set sv0 mtu 1400 || return 1
	[ "$(cat /sys/class/net/dmn0/mtu)" = 1400 ] || { echo "dmn0 did not follow sv0's MTU"; return 1; }
	refused "" link set dmn0 mtu 1500 || return 1
	ip link del dmn0 || return 1
	[ ! -e /sys/class/net/dmn0 ] || return 1
	# sv0 is free again; a device left on it goes with the module.
	ip link add dmn0 link sv0 type devmemnic || return 1
	ip link add dmn5 link sv1 type devmemnic || return 1
	rmmod devmemnic || return 1
	[ ! -e /sys/class/net/dmn0 ] && [ ! -e /sys/class/net/dmn5 ] || { echo "stacked devices outlived the module"; return 1; }
	ip link del sv0
}

# Plain TCP: out of sv0 and in from sv1 as ordinary frames, into the far
# device's queues; IPv6 neighbour discovery (multicast, copied to the
# stacked device) and TCP over IPv6 too.
plain_tcp() {
	local bytes=$((16 * 1024 * 1024)) tx rx
	stacked_setup || return 1
	xfer_check 10.10.0.2 7300 $bytes || return 1
	ping -6 -c 2 -W 5 fd10::2 >/dev/null || { echo "no IPv6 path from dmn0 to dmn1"; return 1; }
	xfer_check fd10::2 7301 $((4 * 1024 * 1024)) || return 1
	tx=$(tx_sum dmn0 bytes)
	rx=$(rx_sum dmn1 bytes peer)
	echo "info: dmn0 sent $tx bytes, dmn1's queues delivered $rx"
	[ "$tx" -gt $bytes ] && [ "$rx" -gt $bytes ] || { echo "the stream did not cross dmn0 and dmn1"; return 1; }
	[ "$(tx_sum dmn0 dropped)" = 0 ] || { echo "dmn0 dropped $(tx_sum dmn0 dropped)"; return 1; }
	unload_clean
}

# ncdevmem-rs receiving into a dma-buf on dmn1 what dmn0 sends: plain TCP,
# or (devmem) from a dma-buf on dmn0, whose payload dmn0 reads into host
# pages for sv0.
devmem_rx() { # plain|devmem
	local port=7310 bytes=$((8 * 1024 * 1024)) spid args=()
	[ "$1" = devmem ] && port=7311 && args=(-f dmn0 -c 10.10.0.1 --size $((4 * 1024 * 1024)))
	stacked_setup || return 1
	ip netns exec peer ncdevmem-rs -l -s 10.10.0.2 -c 10.10.0.1 -p $port -f dmn1 -v 7 \
		--size $((16 * 1024 * 1024)) >/tmp/st.out 2>/tmp/st.err &
	spid=$!
	wait_listen $port || { cat /tmp/st.err; return 1; }
	timeout 120 ncdevmem-rs -s 10.10.0.2 -p $port -v 7 --bytes $bytes "${args[@]}" >/tmp/st.send 2>/tmp/st.cli ||
		{ tail -3 /tmp/st.cli; counters; return 1; }
	echo "info: sent: $(cat /tmp/st.send)"
	wait $spid || { tail -3 /tmp/st.err; return 1; }
	check_rs_summary /tmp/st.out $bytes || { counters; return 1; }
	if [ "$1" = devmem ]; then
		[ "$(tx_sum dmn0 devmem_packets)" -gt 0 ] || { echo "dmn0 sent nothing from device memory"; return 1; }
	fi
	[ "$(rx_sum dmn1 devmem_packets peer)" -gt 0 ] || return 1
	unload_clean
}

# zcrx on dmn1 (io_uring's zero-copy receive) of what dmn0 sends.
zcrx_rx() {
	local port=7320 bytes=$((8 * 1024 * 1024)) spid
	stacked_setup || return 1
	ip netns exec peer ethtool -G dmn1 tcp-data-split on || return 1
	ip netns exec peer ncdevmem-rs -l --zcrx -s 10.10.0.2 -c 10.10.0.1 -p $port -f dmn1 -t 15 -q 1 -v 7 \
		--provider dma-heap --size $((16 * 1024 * 1024)) >/tmp/sz.out 2>/tmp/sz.err &
	spid=$!
	wait_listen $port || { cat /tmp/sz.err; return 1; }
	timeout 120 ncdevmem-rs -s 10.10.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/sz.cli ||
		{ tail -3 /tmp/sz.cli; tail -3 /tmp/sz.err; counters; return 1; }
	wait $spid || { tail -3 /tmp/sz.err; return 1; }
	echo "info: $(cat /tmp/sz.out)"
	[ "$(summary_field /tmp/sz.out bytes)" = $bytes ] || return 1
	[ "$(summary_field /tmp/sz.out validation_errors)" = 0 ] || return 1
	[ "$(stat_of dmn1 rx15_devmem_packets peer)" -gt 0 ] || { echo "nothing went into the area"; return 1; }
	unload_clean
}

# The lower device going down takes the carrier; back up, traffic resumes.
lower_down_up() {
	stacked_setup || return 1
	ip link set sv0 down || return 1
	[ "$(carrier_of dmn0)" = 0 ] || { echo "dmn0 kept its carrier with sv0 down"; return 1; }
	ip link set sv0 up || return 1
	wait_carrier dmn0 || return 1
	wait_carrier dmn1 peer || return 1
	xfer_check 10.10.0.2 7330 $((4 * 1024 * 1024)) || return 1
	unload_clean
}

# The lower devices disappear (deleted) under a bound devmem receiver and
# come back under the same names: the stacked devices stay, without
# carrier, take them back, and the receiver, its binding kept, gets every
# byte sent after.
lower_gone_returns() {
	local port=7340 bytes=$((4 * 1024 * 1024)) spid
	stacked_setup || return 1
	ip netns exec peer ncdevmem-rs -l -s 10.10.0.2 -c 10.10.0.1 -p $port -f dmn1 -v 7 \
		--size $((16 * 1024 * 1024)) >/tmp/sg.out 2>/tmp/sg.err &
	spid=$!
	wait_listen $port || { cat /tmp/sg.err; return 1; }
	ip link del sv0 || return 1
	[ -e /sys/class/net/dmn0 ] && ip netns exec peer test -e /sys/class/net/dmn1 ||
		{ echo "a stacked device went with its lower device"; return 1; }
	[ "$(carrier_of dmn0)" = 0 ] && [ "$(carrier_of dmn1 peer)" = 0 ] || { echo "carrier without a lower device"; return 1; }
	[[ $(ip -o link show dmn0) != *"dmn0@"* ]] || { echo "dmn0 still shows a lower device"; return 1; }
	ip link add sv0 type veth peer name sv1 netns peer || return 1
	ip link set sv0 up && ip -n peer link set sv1 up || return 1
	wait_carrier dmn0 && wait_carrier dmn1 peer || return 1
	[[ $(ip -o link show dmn0) == *"dmn0@sv0:"* ]] || { echo "dmn0 did not take sv0 back"; return 1; }
	timeout 120 ncdevmem-rs -s 10.10.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/sg.cli ||
		{ tail -3 /tmp/sg.cli; counters; return 1; }
	wait $spid || { tail -3 /tmp/sg.err; return 1; }
	check_rs_summary /tmp/sg.out $bytes || { counters; return 1; }
	unload_clean
}

# The lower device's faults while a devmem receiver takes a stream: down
# and up, MTU down and back, deleted and made again; each fault a link
# loss TCP rides out. Every byte arrives, validated in the dma-buf (its
# binding kept throughout), and the devices are torn down clean.
lower_faults_under_traffic() {
	local port=7350 cycles bytes spid cpid i
	cycles=$(tier 3 20)
	bytes=$(tier $((64 * 1024 * 1024)) $((512 * 1024 * 1024)))
	stacked_setup || return 1
	ip netns exec peer ncdevmem-rs -l -s 10.10.0.2 -c 10.10.0.1 -p $port -f dmn1 -v 7 \
		--size $((16 * 1024 * 1024)) >/tmp/sf.out 2>/tmp/sf.err &
	spid=$!
	wait_listen $port || { cat /tmp/sf.err; return 1; }
	timeout 600 ncdevmem-rs -s 10.10.0.2 -p $port -v 7 --bytes $bytes >/tmp/sf.send 2>/tmp/sf.cli &
	cpid=$!
	for ((i = 0; i < cycles; i++)); do
		ip link set sv0 down && ip link set sv0 up || return 1
		ip link set sv0 mtu 1400 && ip link set sv0 mtu 1500 || return 1
		[ "$(cat /sys/class/net/dmn0/mtu)" = 1400 ] || { echo "dmn0 did not follow sv0's MTU down"; return 1; }
		ip link set dmn0 mtu 1500 || return 1
		ip link del sv0 || return 1
		ip link add sv0 type veth peer name sv1 netns peer || return 1
		ip link set sv0 up && ip -n peer link set sv1 up || return 1
		wait_carrier dmn0 && wait_carrier dmn1 peer || return 1
		kill -0 $cpid 2>/dev/null || break
	done
	echo "info: $i fault cycles under traffic"
	wait $cpid || { tail -3 /tmp/sf.cli; counters; return 1; }
	wait $spid || { tail -3 /tmp/sf.err; return 1; }
	check_rs_summary /tmp/sf.out $bytes || { counters; return 1; }
	[ "$i" -gt 0 ] || { echo "the stream ended before a fault"; return 1; }
	unload_clean
}

# netconsole on a stacked device: netpoll transmits with interrupts off
# and dmn0's queue lock held, so dmn0 hands its frames to sv0's driver
# directly (dev_queue_xmit there ran softirqs: dmn0's receive, whose TCP
# ACKs took that lock again, a soft lockup seen with upstream's
# netpoll_basic.py in the two-host topology). 200 kernel messages go out
# through netconsole on dmn0 while 32 MiB come into dmn0: the stream
# validated, at least half the messages counted at dmn1's side (UDP to a
# port nobody listens on: Udp NoPorts), the kernel log clean (vm-run) but
# for the one warning lockdep kernels give for veth under netpoll: sv0's
# veth_xmit() hands the frame to its peer with __netif_rx(), which asserts
# softirq context (lockdep_assert_once), and netpoll runs with interrupts
# off, as it does for netconsole on a veth itself or on a VLAN over one.
netconsole_under_traffic() {
	local t=/sys/kernel/config/netconsole/dmn0 bytes=$((32 * 1024 * 1024)) before after i rpid spid
	stacked_setup || return 1
	[ -d /sys/kernel/config/netconsole ] || { echo "no dynamic netconsole in this kernel"; return 1; }
	mkdir $t || return 1
	if ! { echo dmn0 >$t/dev_name && echo 10.10.0.1 >$t/local_ip && echo 10.10.0.2 >$t/remote_ip &&
		echo 6666 >$t/remote_port && ip netns exec peer cat /sys/class/net/dmn1/address >$t/remote_mac &&
		expect_warning __netif_rx && echo 1 >$t/enabled; }; then
		expect_warning_end
		rmdir $t
		return 1
	fi
	before=$(udp_noports)
	dmn-xfer recv 7340 $bytes 9 >/tmp/nc-recv 2>&1 &
	rpid=$!
	wait_listen 7340 "" || { kill $rpid; expect_warning_end; return 1; }
	ip netns exec peer dmn-xfer send 10.10.0.1 7340 $bytes 9 >/tmp/nc-send 2>&1 &
	spid=$!
	for ((i = 0; i < 200; i++)); do echo "devmemnic netconsole test $i" >/dev/kmsg; done
	wait $spid || { echo "sender: $(cat /tmp/nc-send)"; kill $rpid; expect_warning_end; return 1; }
	wait $rpid || { echo "receiver: $(cat /tmp/nc-recv)"; expect_warning_end; return 1; }
	sleep 1
	after=$(udp_noports)
	echo 0 >$t/enabled
	expect_warning_end
	rmdir $t || return 1
	echo "info: $(cat /tmp/nc-send); $(cat /tmp/nc-recv); netconsole datagrams at dmn1's side: $((after - before)) of 200"
	[[ $(cat /tmp/nc-recv) =~ bytes=$bytes\ .*errors=0$ ]] || { echo "receiver saw a bad stream"; return 1; }
	[ $((after - before)) -ge 100 ] || { counters; return 1; }
	unload_clean
}

# Datagrams namespace peer got for UDP ports nobody listens on.
udp_noports() {
	ip netns exec peer awk '/^Udp:/ { if (n++) { for (i = 1; i <= NF; i++) if (h[i] == "NoPorts") print $i } else for (i = 1; i <= NF; i++) h[i] = $i }' /proc/net/snmp
}

# XDP on a stacked device: /extra/xdp_verdicts.bpf.o (tests/guest/bpf) on
# dmn1 turns datagrams to port 7 around (XDP_TX) and sends those to port
# 11 through a redirect to dmn1 itself (ndo_xdp_xmit): both go back out of
# sv1 to dmn0, single-buffer at MTU 1500 and multi-buffer at 9000 (the veth
# below at 9000 too); port 9 drops. The echoes come back whole, counted.
xdp_verdicts() {
	local prog=/extra/xdp_verdicts.bpf.o mtu sec size i got tx0 xmit0 drop0 tx xmit drop n=0
	stacked_setup || return 1
	tx0=$(rx_sum dmn1 xdp_tx peer)
	xmit0=$(tx_sum dmn1 xdp_xmit peer)
	drop0=$(rx_sum dmn1 xdp_drop peer)
	for mtu in 1500 9000; do
		sec=xdp size=1000
		if [ $mtu = 9000 ]; then
			sec=xdp.frags size=8000
			ip -n peer link set dmn1 xdpdrv off || return 1
			ip link set sv0 mtu 9000 && ip -n peer link set sv1 mtu 9000 || return 1
			ip link set dmn0 mtu 9000 && ip -n peer link set dmn1 mtu 9000 || return 1
		fi
		ip -n peer link set dev dmn1 xdpdrv obj $prog sec $sec || return 1
		payload $size /tmp/st-echo
		for i in 1 2 3; do
			got=$(udp_roundtrip 10.10.0.2 7 /tmp/st-echo)
			[ "$got" = "$(cat /tmp/st-echo)" ] || { echo "MTU $mtu echo $i: ${#got} bytes back of $size"; counters; return 1; }
			got=$(udp_roundtrip 10.10.0.2 11 /tmp/st-echo)
			[ "$got" = "$(cat /tmp/st-echo)" ] || { echo "MTU $mtu redirected echo $i: ${#got} bytes back of $size"; counters; return 1; }
			n=$((n + 1))
		done
		udp_roundtrip 10.10.0.2 9 /tmp/st-echo >/dev/null
	done
	tx=$(($(rx_sum dmn1 xdp_tx peer) - tx0))
	xmit=$(($(tx_sum dmn1 xdp_xmit peer) - xmit0))
	drop=$(($(rx_sum dmn1 xdp_drop peer) - drop0))
	echo "info: $n echoes each way sent back (xdp_tx $tx), redirected (xdp_xmit $xmit); dropped $drop"
	[ "$tx" = $n ] && [ "$xmit" = $n ] && [ "$drop" = 2 ] || { echo "counters: xdp_tx $tx, xdp_xmit $xmit, xdp_drop $drop; want $n, $n, 2"; return 1; }
	unload_clean
}

# A pair made by `ip link add dmx0 type devmemnic` (no lower device): dmx0
# and a peer named by the kernel (dmnic2: the module's pair has 0 and 1),
# deleted together; devmem RX across it, the peer in another namespace.
link_pair() {
	local port=7360 bytes=$((4 * 1024 * 1024)) spid out i
	modprobe devmemnic || return 1
	ip link add dmx0 type devmemnic || return 1
	[ -e /sys/class/net/dmnic2 ] || { echo "no peer dmnic2: $(ls /sys/class/net | tr '\n' ' ')"; return 1; }
	out=$(ip -d -o link show dmnic2) || return 1
	[[ $out == *" devmemnic "* ]] || { echo "ip -d link does not say devmemnic: $out"; return 1; }
	mkdir -p /run/netns
	ip netns add peer || return 1
	ip -batch - <<-EOF || return 1
		link set dmnic2 netns peer
		addr add 10.11.0.1/24 dev dmx0
		link set dmx0 up
	EOF
	[ "$(carrier_of dmx0)" = 0 ] || { echo "carrier with the peer down"; return 1; }
	ip -n peer -batch - <<-EOF || return 1
		addr add 10.11.0.2/24 dev dmnic2
		link set lo up
		link set dmnic2 up
	EOF
	wait_carrier dmx0 || return 1
	ip netns exec peer ncdevmem-rs -l -s 10.11.0.2 -c 10.11.0.1 -p $port -f dmnic2 -v 7 \
		--size $((16 * 1024 * 1024)) >/tmp/sp.out 2>/tmp/sp.err &
	spid=$!
	wait_listen $port || { cat /tmp/sp.err; return 1; }
	timeout 120 ncdevmem-rs -s 10.11.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/sp.cli ||
		{ tail -3 /tmp/sp.cli; return 1; }
	wait $spid || { tail -3 /tmp/sp.err; return 1; }
	check_rs_summary /tmp/sp.out $bytes || return 1
	ip link del dmx0 || return 1
	for ((i = 0; i < 20; i++)); do
		ip netns exec peer test -e /sys/class/net/dmnic2 || break
		sleep 0.1
	done
	ip netns exec peer test -e /sys/class/net/dmnic2 && { echo "the peer outlived ip link del"; return 1; }
	# Deleting the peer deletes both too; a pair left goes with the module.
	ip link add dmx1 type devmemnic || return 1
	ip link del dmnic2 || return 1
	[ ! -e /sys/class/net/dmx1 ] || { echo "dmx1 outlived its peer"; return 1; }
	ip link add dmx2 type devmemnic || return 1
	unload_clean
}

# dmnic-link names a pair's peer and its address (stock iproute2 cannot
# send a peer for this kind); a taken name is refused with nothing left.
link_named_peer() {
	local out
	modprobe devmemnic || return 1
	dmnic-link add dmx0 --peer dmy0 --peer-address 52:54:00:78:01:02 || return 1
	[ -e /sys/class/net/dmy0 ] || { echo "no peer dmy0: $(ls /sys/class/net | tr '\n' ' ')"; return 1; }
	out=$(cat /sys/class/net/dmy0/address)
	[ "$out" = 52:54:00:78:01:02 ] || { echo "dmy0's address is $out"; return 1; }
	# NET_NAME_USER (3): named by the request, not enumerated.
	out=$(cat /sys/class/net/dmy0/name_assign_type)
	[ "$out" = 3 ] || { echo "dmy0's name_assign_type is $out"; return 1; }
	out=$(ip -d -o link show dmy0) || return 1
	[[ $out == *" devmemnic "* ]] || { echo "ip -d link does not say devmemnic: $out"; return 1; }
	# Each other's peer: the carrier comes when both are up.
	ip link set dmx0 up || return 1
	[ "$(carrier_of dmx0)" = 0 ] || { echo "carrier with the peer down"; return 1; }
	ip link set dmy0 up || return 1
	wait_carrier dmx0 || return 1
	out=$(dmnic-link add dmx1 --peer dmy0 2>&1) && { echo "a taken peer name was accepted"; return 1; }
	[[ $out == *"exists"* ]] || { echo "taken peer name: \"$out\""; return 1; }
	[ ! -e /sys/class/net/dmx1 ] || { echo "dmx1 was left after its peer's refusal"; return 1; }
	out=$(dmnic-link add dmx1 --peer dmx1 2>&1) && { echo "a peer named as its device was accepted"; return 1; }
	out=$(dmnic-link add dmx1 --peer 'a b' 2>&1) && { echo "a peer name with a space was accepted"; return 1; }
	[ ! -e /sys/class/net/dmx1 ] || { echo "dmx1 was made by a refused request"; return 1; }
	# Deleting the peer deletes the pair.
	ip link del dmy0 || return 1
	[ ! -e /sys/class/net/dmx0 ] || { echo "dmx0 outlived its named peer"; return 1; }
	# Without --peer the kernel names it, as ip link add does.
	local before=" $(echo /sys/class/net/*) " new=() d
	dmnic-link add dmx2 || return 1
	for d in /sys/class/net/*; do
		[[ $before == *" $d "* ]] || new+=("${d##*/}")
	done
	[[ ${#new[@]} == 2 && ${new[0]} == dmnic[0-9]* && ${new[1]} == dmx2 ]] ||
		{ echo "dmx2 came with: ${new[*]}"; return 1; }
	unload_clean
}

run_test stacked/link-ops link_ops
run_test link/pair link_pair
run_test link/named-peer link_named_peer
run_test stacked/plain-tcp plain_tcp
run_test stacked/devmem-rx devmem_rx plain
run_test stacked/devmem-tx-into-devmem-rx devmem_rx devmem
run_test stacked/zcrx zcrx_rx
run_test stacked/xdp-verdicts xdp_verdicts
run_test stacked/lower-down-up lower_down_up
run_test stacked/lower-gone-returns lower_gone_returns
run_test stacked/lower-faults-under-traffic lower_faults_under_traffic
run_test stacked/netconsole-under-traffic netconsole_under_traffic
