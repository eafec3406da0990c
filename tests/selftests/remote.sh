#!/bin/bash
# The remote host of upstream's driver selftests in the two-host topology
# (make selftests TOPOLOGY=two-vm: scripts/vm-pair, guest B): a devmemnic
# device dmn0 stacked on the wire NIC (10.78.0.2, fd78::2, MAC
# 52:54:00:78:00:0b) as the remote's interface, and an ssh server
# (dropbear, from the host's root) on the wire NIC's own address
# (10.77.0.2) through which guest A's tests drive this side (REMOTE_TYPE=
# ssh), as NIPA reaches the remote host of a hardware lane. Keys were made
# on the host for this run (scripts/selftests): this guest gets its host
# key and A's public key. Serves until A says it is done (touches
# /tmp/dmn-two-vm-done here over ssh) or stops answering on the wire.
source /run/devmemnic/extra/wire-lib.sh
EXTRA=/run/devmemnic/extra
DONE=/tmp/dmn-two-vm-done

# Root's home (where dropbear looks for authorized_keys, and what ssh
# sessions source .bashrc from) over the read-only shared one, which stays
# reachable as /root/.cache (the kernels' trees); dropbear refuses keys in a
# directory others can write.
mkdir -p /run/host-root-home || exit 1
mount --bind /root /run/host-root-home || exit 1
mount -t tmpfs -o mode=700 two-vm-home /root || exit 1
ln -s /run/host-root-home/.cache /root/.cache || exit 1
mkdir -m 700 /root/.ssh || exit 1
install -m 600 "$EXTRA/two-vm-id.pub" /root/.ssh/authorized_keys || exit 1
# Commands over ssh run in bash, which reads .bashrc then (Debian's bash
# does for sshd): the guest's own programs first, as in the test script.
echo 'export PATH=/run/devmemnic/bin:/usr/sbin:/usr/bin:/sbin:/bin' >/root/.bashrc

wire_up || exit 1
modprobe devmemnic || exit 1
echo 1 >/proc/sys/net/ipv4/conf/all/arp_ignore || exit 1
ip -batch - <<EOF || exit 1
link add dmn0 address 52:54:00:78:00:0b link $WIRE_IF type devmemnic
addr add 10.78.0.2/24 dev dmn0
addr add fd78::2/64 dev dmn0 nodad
link set dmn0 up
route add 2001:db8:2::/64 via fd78::1 dev dmn0
EOF
sysctl -qw net.ipv6.conf.dmn0.keep_addr_on_down=1 || exit 1

# -s: keys only; -j -k: no port forwarding; -F -E: foreground, log to stderr.
dropbear -r "$EXTRA/two-vm-host-key" -p 10.77.0.2:22 -s -j -k -F -E 2>/tmp/dropbear.log &
dropbear_pid=$!
echo "info: remote of the two-host selftests: dmn0 10.78.0.2 on $WIRE_IF, ssh on 10.77.0.2 (dropbear $dropbear_pid); $(uname -r)"

rc=0
misses=0
while [ ! -e $DONE ]; do
	sleep 5
	if ! kill -0 $dropbear_pid 2>/dev/null; then
		echo "dropbear exited: $(tail -3 /tmp/dropbear.log)"
		rc=1
		break
	fi
	# A that stopped answering for a minute (its guest ended without
	# saying so: a crash, a timeout) ends this one.
	if ping -c 1 -W 2 "$WIRE_PEER_IP" >/dev/null 2>&1; then
		misses=0
	elif ((++misses >= 12)); then
		echo "guest A stopped answering on the wire"
		rc=1
		break
	fi
done
kill $dropbear_pid 2>/dev/null
echo "info: dropbear served $(grep -c 'auth succeeded\|Pubkey auth succeeded' /tmp/dropbear.log) logins"
ip link del dmn0 || rc=1
rmmod devmemnic || rc=1
exit $rc
