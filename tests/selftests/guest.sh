#!/bin/bash
# Runs upstream's driver selftests (an installed kselftest tree, KSFT_INSTALL)
# against devmemnic, in the guest's shared root (scripts/vm-run VM_ROOT=host):
# dmnic0 here is NETIF, dmnic1 in namespace "peer" the remote (REMOTE_TYPE=
# netns). Each test file runs unmodified through upstream's run_kselftest.sh,
# on a freshly loaded module: a test's leftover state (rules, channel counts,
# bindings) never decides the next one's verdict, and the module must unload
# cleanly after each (its own line: "DMN-SELFTEST-UNLOAD <test> ok|FAIL").
#
# DMN_TOPOLOGY=two-vm (make selftests TOPOLOGY=two-vm, scripts/vm-pair's
# guest A): NETIF is dmn0, a devmemnic device stacked on the wire NIC, and
# the remote is guest B (tests/selftests/remote.sh) reached over ssh
# (REMOTE_TYPE=ssh) on the wire NIC's own addresses, as NIPA runs a
# hardware lane; each file still gets a freshly loaded module here.
#
# Environment: KSFT_INSTALL (the install), SELFTESTS_ONLY (an extended glob of
# "collection:file" names, e.g. 'drivers/net/hw:@(devmem|ntuple).py'),
# DMN_KSFT_MODULES and DMN_KSFT_LACKS (scripts/ksft-kernel-config),
# DMN_TOPOLOGY (one-vm, default, or two-vm).
source /run/devmemnic/extra/lib.sh
shopt -s extglob
: "${KSFT_INSTALL:?}"
TOPOLOGY="${DMN_TOPOLOGY:-one-vm}"

if [ "$TOPOLOGY" = two-vm ]; then
	source /run/devmemnic/extra/wire-lib.sh
	# dmn0 (MAC 52:54:00:78:00:0a): 10.78.0.1, fd78::1; B's dmn0 10.78.0.2,
	# fd78::2, its ssh server on 10.77.0.2 (the wire NIC's address).
	export NETIF=$DM_DEV LOCAL_V4=$DM_ME REMOTE_V4=$DM_PEER LOCAL_V6=$DM_ME6 REMOTE_V6=$DM_PEER6
	export REMOTE_TYPE=ssh REMOTE_ARGS=root@10.77.0.2
	REMOTE_IF=dmn0
else
	# dmnic0: 10.9.0.1, fd00::1; dmnic1 in "peer": 10.9.0.2, fd00::2 (setup_pair).
	export NETIF=dmnic0 LOCAL_V4=10.9.0.1 REMOTE_V4=10.9.0.2 LOCAL_V6=fd00::1 REMOTE_V6=fd00::2
	export REMOTE_TYPE=netns REMOTE_ARGS=peer
	REMOTE_IF=dmnic1
fi
cd "$KSFT_INSTALL" || exit 1
# LOCAL_PREFIX_V6 is the netkit tests' container prefix (NetDrvContEnv).
export LOCAL_PREFIX_V6=2001:db8:2::/64 DISRUPTIVE=True
export PYTHONDONTWRITEBYTECODE=1
# The kernel tree's own tools first (scripts/build-kselftests: bpftool).
[ -d "$KSFT_INSTALL/.tools" ] && export PATH="$KSFT_INSTALL/.tools:$PATH"
# Upstream's variable for slow machines, which its tests read to widen timing
# windows (so_txtime.py schedules its first packet 2 s out instead of 0.2 s;
# gro.py forgives its large_ cases). This guest is TCG.
export KSFT_MACHINE_SLOW=yes

# The module's KUnit suites ran in make check's own guests.
modprobe kunit 2>/dev/null
[ -w /sys/module/kunit/parameters/filter_glob ] &&
	echo "none-in-selftests.none" >/sys/module/kunit/parameters/filter_glob

# The user-space processes alive now (kernel threads have no exe), but for
# the shell listing them.
user_pids() {
	local f pid
	for f in /proc/[0-9]*/exe; do
		pid=${f#/proc/}
		pid=${pid%/exe}
		[ "$pid" = "$BASHPID" ] || [ ! -e "$f" ] || echo "$pid"
	done
}

# Ends what test file $1 left running beside the guest's own processes
# ($2: their pids): a server a failed case never stopped (iou-zcrx's waits for
# a connection with no timeout) keeps its socket, its io_uring and so the
# queue's memory provider, and with it the module, for the files after it.
end_leftovers() { # name, pids before
	local pid comm left=()
	for pid in $(user_pids); do
		[[ " $2 $$ " == *" $pid "* ]] && continue
		read -r comm <"/proc/$pid/comm" 2>/dev/null || continue
		left+=("$pid:$comm")
		# Where it waits, for the log: a hung test's clue.
		echo "DMN-SELFTEST-LEFTOVER-STACK $pid $comm: $(tr '\n' ' ' <"/proc/$pid/stack" 2>/dev/null)"
		kill -TERM "$pid" 2>/dev/null
	done
	[ ${#left[@]} -eq 0 ] && return 0
	echo "DMN-SELFTEST-LEFTOVER $1 ${left[*]}"
	sleep 1
	for pid in "${left[@]%%:*}"; do kill -KILL "$pid" 2>/dev/null; done
	return 0
}

# rmmod, retried for 10 s: a closed io_uring drops its zero-copy receive
# queue (and so the module reference of the binding) from a workqueue, after
# the process that owned it is gone.
unload_module() {
	local i
	for ((i = 0; i < 20; i++)); do
		rmmod devmemnic 2>/dev/null && return 0
		sleep 0.5
	done
	rmmod devmemnic
}

# The tasks in uninterruptible sleep (kernel threads too), with their stacks.
blocked_tasks() {
	local f stat
	for f in /proc/[0-9]*/stat; do
		read -r stat <"$f" 2>/dev/null || continue
		# "pid (comm) state ...": comm may hold spaces, the state follows ") ".
		[[ ${stat##*) } == "D "* ]] || continue
		echo "${stat%%) *}): $(tr '\n' ' ' <"${f%stat}stack" 2>/dev/null)"
	done
}

# Runs a command on the remote: in namespace "peer", or over ssh on B.
on_remote() {
	if [ "$TOPOLOGY" = two-vm ]; then
		ssh -q "$REMOTE_ARGS" "$*"
	else
		ip netns exec peer "$@"
	fi
}

# Two-host topology: ssh to B with the key made for this run (its host key
# known). ssh reads ~/.ssh from the password database's home (/root, the
# host's, read-only here): ssh and scp first in PATH are wrappers giving
# them this run's configuration (-F). Commands share one connection (a
# master started here, before the first file: no process of a file's
# own), as a login under TCG takes longer than some upstream tests give a
# remote command to start (csum.py's receiver listens for 1 s, xdp.py's
# socat for 2 s, after wait_port_listen's own remote polls). A multiplexed
# ssh hands its output descriptors to the master, which holds them until
# the remote command ends: killing the client would leave upstream's
# reader waiting for EOF (a killed background iperf3). So the ssh wrapper
# (ssh-relay, which reads the configuration from $d) relays output through
# pipes of its own and on TERM, INT or HUP kills the client and its relays.
# Without the master, commands log in on their own.
two_vm_setup() {
	local i d=/tmp/two-vm-ssh
	mkdir -m 700 $d || return 1
	install -m 600 /run/devmemnic/extra/two-vm-id $d/id || return 1
	cat >$d/config <<-EOF || return 1
		Host *
		    IdentityFile $d/id
		    UserKnownHostsFile /run/devmemnic/extra/two-vm-known-hosts
		    StrictHostKeyChecking yes
		    BatchMode yes
		    ConnectTimeout 60
		    ServerAliveInterval 30
		    ControlMaster no
		    ControlPath $d/master
	EOF
	install -m 755 /run/devmemnic/extra/ssh-relay /run/devmemnic/bin/ssh || return 1
	printf '#!/bin/sh\nexec /usr/bin/scp -F %s/config "$@"\n' $d >/run/devmemnic/bin/scp || return 1
	chmod 755 /run/devmemnic/bin/ssh /run/devmemnic/bin/scp || return 1
	wire_up || return 1
	wire_for_selftests || return 1
	# B's ssh server starts after its own wire setup: up to 300 s.
	for ((i = 0; i < 60; i++)); do
		ssh -q "$REMOTE_ARGS" true 2>/dev/null && break
		sleep 5
	done
	/usr/bin/ssh -F $d/config -M -N -f "$REMOTE_ARGS" </dev/null >/dev/null 2>&1 ||
		{ echo "no ssh master connection to $REMOTE_ARGS"; return 1; }
	on_remote "ip -br addr show dev $REMOTE_IF" || { echo "no ssh to $REMOTE_ARGS"; return 1; }
	# What a remote command costs here, through the shared connection (the
	# wrapper's way, and the client alone) and with a login of its own (for
	# the log).
	echo "DMN-SELFTEST-SSH shared: $(ssh_ms ssh) ms a command" \
		"(the client alone: $(ssh_ms /usr/bin/ssh -F $d/config) ms);" \
		"own login: $(ssh_ms ssh -S none) ms"
}

# Milliseconds of 5 remote `true`s, on average (the ssh command as arguments).
ssh_ms() { # ssh-command...
	local t0 i
	t0=$(date +%s%N)
	for i in 1 2 3 4 5; do "$@" "$REMOTE_ARGS" true || return 1; done
	echo $((($(date +%s%N) - t0) / 5000000))
}

# Two-host topology: devmemnic loaded (with its arguments) and dmn0
# stacked on the wire NIC, answering B's dmn0.
setup_stacked() { # module arguments...
	modprobe devmemnic "$@" && stacked_add mtu 1500 && stacked_reach_peer 30 v6
}

rc=0
hold_rx_timestamps || exit 1
allow_socket_buffers || exit 1
if [ "$TOPOLOGY" = two-vm ] && ! two_vm_setup; then
	echo "DMN-SELFTEST-SETUP two-vm FAIL"
	exit 1
fi
# Upstream's config made real on a kernel not built for the suite (Debian's):
# the modules of options it asks for that this kernel has as modules
# (scripts/ksft-kernel-config), where the kernel would not load them on its
# own (pppoe's GRO offload for gro.py's PPPoE cases).
# (Comma-separated: VM_ENV splits on spaces.)
for m in ${DMN_KSFT_MODULES//,/ }; do
	modprobe -q "$m" || { echo "DMN-SELFTEST-MODULE $m FAIL"; rc=1; }
done
[ -n "${DMN_KSFT_MODULES:-}" ] && echo "DMN-SELFTEST-MODULES loaded: ${DMN_KSFT_MODULES//,/ }"
# Runs test file $1 ("collection:file") against a fresh devmemnic pair of
# personality $2 (empty: the module's default), and unloads the module after.
run_file() { # name personality
	local name="$1" personality="$2" lacks t0 before limit timeout_args
	# A file that needs an option this kernel lacks (DMN_KSFT_LACKS,
	# "collection:file=CONFIG_X,...") is skipped, as run_kselftest.sh
	# reports a skipped file, with the option.
	lacks=$(for l in ${DMN_KSFT_LACKS//,/ }; do [ "${l%%=*}" = "$name" ] && echo "${l#*=}"; done)
	if [ -n "$lacks" ]; then
		echo "# selftests: ${name%%:*}: ${name#*:}"
		echo "ok 1 selftests: ${name%%:*}: ${name#*:} # SKIP the kernel lacks $lacks"
		return 0
	fi
	# 16 queues in use, up to 66 (rss_ctx.py's test_rss_context32 spreads
	# 32 contexts over 2 queues each beside the main table's 2).
	# The endpoint reaches the netkit tests' container prefix through us
	# (upstream's README: the DUT must be reachable at LOCAL_PREFIX_V6).
	# keep_addr_on_down: tests that take the link down and up (rss_ctx.py's
	# persist cases) expect the addresses back, as a host's network manager
	# restores them; the kernel's default flushes IPv6 addresses on down.
	# (Two hosts: B routes the prefix to us, set up once: remote.sh.)
	# No TIME-WAIT in "peer", as on B (remote.sh says why): upstream's socat
	# binds the port rand_port() found free here, and a pick repeated within
	# one file's minute met peer's TIME-WAIT of the earlier connection.
	if [ "$TOPOLOGY" = two-vm ]; then
		setup_stacked max_queues=66 ${personality:+personality=$personality} &&
			sysctl -qw net.ipv6.conf.dmn0.keep_addr_on_down=1
	else
		setup_pair max_queues=66 ${personality:+personality=$personality} && ip -n peer -6 route add 2001:db8:2::/64 via fd00::1 &&
			sysctl -qw net.ipv6.conf.dmnic0.keep_addr_on_down=1 &&
			ip netns exec peer sysctl -qw net.ipv6.conf.dmnic1.keep_addr_on_down=1 &&
			ip netns exec peer sysctl -qw net.ipv4.tcp_max_tw_buckets=0
	fi
	# shellcheck disable=SC2181
	if [ $? -ne 0 ]; then
		echo "DMN-SELFTEST-SETUP $name FAIL"
		rc=1
		teardown_pair
		return 0
	fi
	t0=$(uptime_now)
	before=$(user_pids)
	# The collection's own per-file timeout (its settings file, which
	# run_kselftest.sh applies), scaled for TCG: 7.3's xdp.py passed 19 of
	# its 27 cases before drivers/net's 360 s ran out, and all 27 in 427 s.
	limit=$(sed -n 's/^timeout=//p' "${name%%:*}/settings" 2>/dev/null)
	timeout_args=()
	[ "${limit:-0}" -gt 0 ] && timeout_args=(-o $((limit * ${DMN_KSFT_TIMEOUT_SCALE:-4})))
	if ! ./run_kselftest.sh "${timeout_args[@]}" -t "$name"; then
		rc=1
		# The NIC's side of a failure, for the log: its non-zero counters.
		echo "DMN-SELFTEST-STATS $name $NETIF: $(ethtool -S $NETIF 2>&1 | grep -v ': 0$' | tr -s ' \n' ' ')"
		echo "DMN-SELFTEST-STATS $name remote $REMOTE_IF: $(on_remote ethtool -S $REMOTE_IF 2>&1 | grep -v ': 0$' | tr -s ' \n' ' ')"
		if [ "$TOPOLOGY" = two-vm ]; then
			echo "DMN-SELFTEST-STATS $name wire: $(wire_state 2>&1)"
			echo "DMN-SELFTEST-STATS $name remote wire: $(on_remote "WIRE_ROLE=b; source /run/devmemnic/extra/wire-lib.sh; wire_state" 2>&1)"
		fi
	fi
	echo "DMN-SELFTEST-TIME $name $(secs_since "$t0")"
	end_leftovers "$name" "$(echo $before)"
	ip netns del peer 2>/dev/null
	if unload_module; then
		echo "DMN-SELFTEST-UNLOAD $name ok"
	else
		echo "DMN-SELFTEST-UNLOAD $name FAIL"
		rc=1
		# What holds it, for the log: the kernel's blocked tasks (a queue
		# restart that never finished) and the module's references.
		echo "DMN-SELFTEST-REFCNT $name $(cat /sys/module/devmemnic/refcnt 2>&1)"
		blocked_tasks | sed "s|^|DMN-SELFTEST-BLOCKED $name |"
		# Whatever holds it, the next test needs a fresh module.
		sleep 5
		rmmod devmemnic 2>/dev/null
	fi
}

# The files of kselftest-list.txt matching pattern $1.
files_matching() { # pattern
	local name
	while read -r name; do
		case "$name" in drivers/net:*.py | drivers/net/hw:*.py) ;; *) continue ;; esac
		[ -n "$1" ] && [[ $name != $1 ]] && continue
		echo "$name"
	done <kselftest-list.txt
}

# bpftrace started once before the files that run it (netpoll_basic.py,
# which gives it 30 s to start, attach and trace 10 s while iperf3 loads
# this guest): its first start reads LLVM's 200 MB of libraries over 9p and
# translates them under TCG (12 s here without load, then 5 s; more than
# 30 s under that load), as a host reads them once from its own disk.
# (TCG guests boot with norandmaps, scripts/vm-run: the same code at the
# same addresses, so TCG's translations serve the test's start too.)
prime_bpftrace() { # files
	local name
	command -v bpftrace >/dev/null || return 0
	for name in "$@"; do
		grep -qw bpftrace "${name%%:*}/${name#*:}" 2>/dev/null || continue
		bpftrace -q -e 'BEGIN { exit(); }' >/dev/null 2>&1 ||
			echo "DMN-SELFTEST-PRIME bpftrace failed (for $name)"
		return 0
	done
}

files=$(files_matching "${SELFTESTS_ONLY:-}")
# shellcheck disable=SC2086 # one name a word
prime_bpftrace $files
for name in $files; do
	run_file "$name" "${DMN_PERSONALITY:-}"
done
# Then files again on other personalities (DMN_PERSONALITY_RUNS,
# "personality=pattern,..."): their table rows are named "file@personality".
for run in ${DMN_PERSONALITY_RUNS//,/ }; do
	echo "DMN-SELFTEST-PERSONALITY ${run%%=*}"
	for name in $(files_matching "${run#*=}"); do
		run_file "$name" "${run%%=*}"
	done
done
# B serves until told (or until this guest stops answering).
[ "$TOPOLOGY" = two-vm ] && { on_remote "touch /tmp/dmn-two-vm-done" || rc=1; }
exit $rc
