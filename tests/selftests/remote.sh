#!/bin/bash
# The remote host of upstream's driver selftests in the two-host topology
# (make selftests TOPOLOGY=two-vm: scripts/vm-pair, guest B): a devmemnic
# device dmn0 stacked on the wire NIC (10.78.0.2, fd78::2, MAC
# 52:54:00:78:00:0b) as the remote's interface, and OpenSSH's sshd on the
# wire NIC's own address (10.77.0.2) through which guest A's tests drive
# this side (REMOTE_TYPE=ssh), as NIPA reaches the remote host of a
# hardware lane. Keys were made on the host for this run (scripts/
# selftests): this guest gets its host key and A's public key; sshd comes
# unpacked from Debian's package (DMN_SSHD_DIR: scripts/lib.sh's
# ssh_server_dir). Serves until A says it is done (touches
# /tmp/dmn-two-vm-done here over ssh) or stops answering on the wire.
source /run/devmemnic/extra/lib.sh
source /run/devmemnic/extra/wire-lib.sh
EXTRA=/run/devmemnic/extra
DONE=/tmp/dmn-two-vm-done
SSHD_DIR="${DMN_SSHD_DIR:?DMN_SSHD_DIR: the unpacked openssh-server (scripts/selftests)}"

# This guest's view of the password database: sshd's privilege separation
# user, which a host without an ssh server lacks, and a home of root's own
# (/tmp/root-home): the shell of each ssh command reads ~/.bashrc, and the
# shared one is the host's (its pyenv and the like, writing to stderr of
# every remote command and to a read-only home).
mkdir -m 700 /tmp/root-home || exit 1
sed 's|^\(root:[^:]*:0:0:[^:]*:\)[^:]*:|\1/tmp/root-home:|' /etc/passwd >/tmp/passwd || exit 1
grep -q '^root:[^:]*:0:0:[^:]*:/tmp/root-home:' /tmp/passwd || { echo "cannot give root a home of its own"; exit 1; }
grep -q '^sshd:' /tmp/passwd || echo 'sshd:x:60100:65534::/run/sshd:/usr/sbin/nologin' >>/tmp/passwd
mount --bind /tmp/passwd /etc/passwd || exit 1
mkdir -m 755 /run/sshd || exit 1
install -m 600 "$EXTRA/two-vm-host-key" /tmp/sshd-host-key || exit 1
# StrictModes off: the authorized key sits under /run, a tmpfs anyone may
# write (this guest's only user is root). PATH: the guest's own programs
# first, as in the test script. Sessions: upstream's tests keep several
# commands running at once.
cat >/tmp/sshd_config <<CONFIG || exit 1
ListenAddress 10.77.0.2
HostKey /tmp/sshd-host-key
AuthorizedKeysFile $EXTRA/two-vm-id.pub
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
MaxSessions 64
MaxStartups 64
PidFile /run/sshd.pid
SetEnv PATH=/run/devmemnic/bin:/usr/sbin:/usr/bin:/sbin:/bin
Subsystem sftp $SSHD_DIR/usr/lib/openssh/sftp-server
CONFIG

hold_rx_timestamps || exit 1
allow_socket_buffers || exit 1
wire_up || exit 1
wire_for_selftests || exit 1
modprobe devmemnic || exit 1
stacked_add mtu 1500 || exit 1
ip -6 route add 2001:db8:2::/64 via $DM_PEER6 dev $DM_DEV || exit 1
sysctl -qw net.ipv6.conf.dmn0.keep_addr_on_down=1 || exit 1
# No TIME-WAIT here. Upstream's devmem files send with socat bound to the
# port rand_port() found free on A (devmem_lib.py's socat_send: source
# port = the listener's port), and rand_port() cannot see this host's
# ports: when it picks a port again within 60 s, this side's TIME-WAIT of
# the earlier connection, with the same four addresses and ports, makes
# socat's bind fail with "Address already in use". Picks from 14,000 odd
# ports collide that soon once in about a hundred devmem.py runs, and
# this host, unlike the one-guest topology's namespace (made again for
# each file), keeps its TIME-WAITs across files. With no TIME-WAIT
# sockets (tcp_max_tw_buckets 0) a closed connection here is gone at
# once; A's side, the device under test, keeps its own.
sysctl -qw net.ipv4.tcp_max_tw_buckets=0 || exit 1

# -D -e: in the foreground, logging to stderr (by absolute path: sshd
# re-executes itself for each connection).
"$SSHD_DIR/usr/sbin/sshd" -f /tmp/sshd_config -D -e 2>/tmp/sshd.log &
sshd_pid=$!
echo "info: remote of the two-host selftests: dmn0 10.78.0.2 on $WIRE_IF, sshd ($("$SSHD_DIR/usr/sbin/sshd" -V 2>&1 | head -1)) on 10.77.0.2; $(uname -r); tcp_max_tw_buckets $(sysctl -n net.ipv4.tcp_max_tw_buckets)"

rc=0
misses=0
while [ ! -e $DONE ]; do
	sleep 5
	if ! kill -0 $sshd_pid 2>/dev/null; then
		echo "sshd exited: $(tail -3 /tmp/sshd.log)"
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
kill $sshd_pid 2>/dev/null
echo "info: sshd accepted $(grep -c 'Accepted publickey' /tmp/sshd.log) logins"
ip link del dmn0 || rc=1
rmmod devmemnic || rc=1
exit $rc
