# Helpers for guest test scripts (bash in the devmemnic QEMU guest); sourced.
#
# Each test prints exactly one line "TEST <name> PASS" or "TEST <name> FAIL: why";
# the host's check runner collects them from the console.

GUEST_FAILED=0

# The test tier: "check" (make check: every scenario, at counts that catch a
# regression) or "stress" (make stress: the long loops in full). Scripts size
# their loops with `tier CHECK_COUNT STRESS_COUNT`.
DMN_TIER="${DMN_TIER:-check}"
tier() { if [ "$DMN_TIER" = stress ]; then echo "$2"; else echo "$1"; fi; }

# Every verdict is also counted in $TESTS_RUN_FILE (run-all skips the
# kmemleak scan after a script that ran no test).
TESTS_RUN_FILE=/tmp/guest-tests-run
pass() {
	echo "TEST $1 PASS${2:+ ($2)}"
	echo "$1" >>$TESTS_RUN_FILE
}

# The kernel's features, as the host probed them from the tree it boots
# (scripts/kernel-features, passed in by scripts/vm-run): "devmem-tx zcrx ...".
DMN_FEATURES="${DMN_FEATURES-}"
has_feature() { [[ " $DMN_FEATURES " == *" $1 "* ]]; }

# tests.manifest (beside this file): which boots run each test and what it
# needs of the kernel. Read once, with builtins only (an exec costs
# 0.06-0.25 s under TCG).
declare -A MANIFEST_BOOTS=() MANIFEST_NEEDS=()
if [ -r "${BASH_SOURCE[0]%/*}/tests.manifest" ]; then
	while read -r _name _boots _needs _rest; do
		[[ -z $_name || $_name == \#* ]] && continue
		MANIFEST_BOOTS[$_name]=$_boots
		MANIFEST_NEEDS[$_name]=$_needs
	done <"${BASH_SOURCE[0]%/*}/tests.manifest"
	unset _name _boots _needs _rest
fi
# Keeps the kernel's receive time stamping (netstamp_needed_key) on for as
# long as this shell lives: a socket asking for SO_TIMESTAMP, held by a
# sleeping python3 (the shared host root's). Each ping otherwise turns the
# static key on and off, patching the receive path's code; under TCG
# another vCPU can run the patched instruction's int3 after the patch
# ended ("Oops: int3" in netif_receive_skb_list_internal, seen on both
# guests of the two-host selftests, where ssh and ping run by the
# hundred). Python 3.11's socket module does not name SO_TIMESTAMP (29 on
# Linux): the first version of this died at the name, silently, and held
# nothing; so it now returns only once the option is set. For the upstream
# selftests' guests, which run it first.
hold_rx_timestamps() {
	local i held=/tmp/dmn-rx-timestamps-held
	rm -f "$held"
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMP", 29), 1)
open(sys.argv[1], "w").close()
time.sleep(1 << 30)
' "$held" </dev/null >/dev/null 2>&1 &
	for ((i = 0; i < 300; i++)); do
		[ -e "$held" ] && return 0
		sleep 0.1
	done
	echo "cannot hold receive time stamping on (SO_TIMESTAMP)" >&2
	return 1
}

# Lets sockets have the receive and send buffers they ask for, up to 4 MiB
# (as this machine's net.core.rmem_max is; Linux's default cap is 208 KiB).
# gro's packet socket in upstream's gro_hw.py asks for 1 MB and got 416 KiB
# (2 MB with this): about 350 (1,700) of devmemnic's coalesced packets of two
# 200-byte segments, 1,216 bytes of truesize each (test-nic.sh's
# gro_hw_charge measures it), while one softirq round may deliver 300
# (netdev_budget); whenever the reader fell behind, the socket dropped some
# (11 and 90 of 500 in two failed runs). For the upstream selftests' guests.
allow_socket_buffers() {
	sysctl -qw net.core.rmem_max=4194304 net.core.wmem_max=4194304
}

# Runs a command in namespace $1, or in the root one if $1 is empty.
in_ns() { # ns command...
	local ns="$1"
	shift
	if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
}
# Seconds since boot (for timing steps), and whole seconds since such a mark.
# (Shell builtins only: every exec costs 0.06-0.25 s under TCG, and these run
# around every test.)
uptime_now() {
	local up rest
	read -r up rest </proc/uptime
	echo "$up"
}
# Hundredths of a second in an uptime reading ("123.45" -> 12345).
centisecs() { echo $((10#${1%.*} * 100 + 10#${1#*.})); }
secs_since() { # mark
	local now rest
	read -r now rest </proc/uptime
	echo $((($(centisecs "$now") - $(centisecs "$1") + 50) / 100))
}
# Whether devmemnic is loaded (a module's /sys/module entry lives as long as it).
module_loaded() { [ -d /sys/module/devmemnic ]; }
# Whether a process of one of these names runs (pidof without its exec).
tools_running() { # names...
	local comm f
	for f in /proc/[0-9]*/comm; do
		read -r comm <"$f" 2>/dev/null || continue
		[[ " $* " == *" $comm "* ]] && return 0
	done
	return 1
}
fail() {
	echo "TEST $1 FAIL: $2"
	echo "$1" >>$TESTS_RUN_FILE
	GUEST_FAILED=1
}
# A test that cannot run here, and why (the host accepts it only where the
# kernel lacks what the test needs: scripts/guest_verdicts.py).
skip() {
	echo "TEST $1 SKIP: $2"
}

# Runs "$@" and records test $name passing iff it exits 0; prints the test's
# output (last lines on failure, lines starting "info:" always), then puts the
# guest back in a clean state so one failure does not cascade.
#
# Which tests run: those tests.manifest lists for this boot (DMN_BOOT:
# debug, ksft or stress, or several comma-separated, such as make check's
# "debug,debug-a"; unset, all), and of them those matching GUEST_ONLY
# (a shell pattern, e.g. 'devmem/token-*') when it is set; the others are
# left out silently. A test needing a feature the kernel lacks (DMN_FEATURES)
# is a SKIP naming it; one the manifest does not list fails.
run_test() {
	local name="$1" need
	shift
	# shellcheck disable=SC2053
	[ -n "${GUEST_ONLY:-}" ] && [[ $name != $GUEST_ONLY ]] && return 0
	if [ -z "${MANIFEST_BOOTS[$name]-}" ]; then
		fail "$name" "not in tests.manifest"
		return 0
	fi
	if [ -n "${DMN_BOOT:-}" ]; then
		local boot listed=
		for boot in ${DMN_BOOT//,/ }; do
			[[ ,${MANIFEST_BOOTS[$name]}, == *,$boot,* ]] && listed=1
		done
		[ -n "$listed" ] || return 0
	fi
	for need in ${MANIFEST_NEEDS[$name]//,/ }; do
		[ "$need" = - ] || has_feature "$need" || {
			skip "$name" "the kernel lacks $need (DMN_FEATURES: ${DMN_FEATURES:-none})"
			return 0
		}
	done
	local out rc t0 secs line
	t0=$(uptime_now)
	out=$("$@" 2>&1)
	rc=$?
	# Guest seconds the test took (make check's time budget is spent here).
	secs="$(secs_since "$t0")s"
	while IFS= read -r line; do
		[[ $line == info:* ]] && echo "  $name:${line#info:}"
	done <<<"$out"
	if [ $rc = 0 ]; then
		pass "$name" "$secs"
	else
		echo "$out" | tail -n 20 | sed "s|^|  $name: |"
		# The verdict line carries the test's last word, so the summary
		# (and a CI log that keeps only its tail) says why.
		local why
		why=$(echo "$out" | grep -v '^info:' | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-160)
		fail "$name" "exit $rc after $secs${why:+: $why}"
	fi
	# Processes a failed test left behind would keep bindings and namespaces.
	# ncdevmem-rs restores the NIC on SIGTERM: give it time, then kill.
	# (busybox has killall and pidof, no pkill.)
	# (Every exec costs 0.06-0.25 s under TCG: only what is needed.)
	local i tools="ncdevmem ncdevmem-rs dmn-xfer iou-zcrx" netns=(/run/netns/*)
	if tools_running $tools; then
		killall $tools 2>/dev/null
		for ((i = 0; i < 50; i++)); do
			tools_running $tools || break
			sleep 0.1
		done
		killall -KILL $tools 2>/dev/null
		sleep 0.2
	fi
	[ -e "${netns[0]}" ] && ip -all netns delete
	for ((i = 0; i < 20; i++)); do
		module_loaded || break
		rmmod devmemnic 2>/dev/null && break
		sleep 0.5
	done
	module_loaded && echo "  $name: devmemnic could not be unloaded after the test"
	return 0
}

# Counts devmemnic parent devices on the platform bus.
parent_count() {
	ls -d /sys/bus/platform/devices/devmemnic.* 2>/dev/null | wc -l
}

# An ethtool -S counter of a device (in namespace $3 if given).
stat_of() {
	local dev="$1" name="$2" ns="${3:-}"
	in_ns "$ns" ethtool -S "$dev" | awk -v n="$name:" '$1 == n { print $2; found=1 } END { if (!found) print 0 }'
}

# Sum of a per-queue counter over all RX (TX) queues: rx_sum (tx_sum) dev
# suffix [ns], e.g. rx_sum dmnic1 devmem_packets peer.
queue_sum() { # rx|tx dev suffix [ns]
	local dir="$1" dev="$2" suffix="$3" ns="${4:-}"
	in_ns "$ns" ethtool -S "$dev" | awk -v n="^${dir}[0-9]+_${suffix}:\$" '$1 ~ n { t += $2 } END { print t + 0 }'
}
# Sends a datagram of $3 bytes (a file's) to port $2 of $1 and prints what
# came back within 3 s (nothing if none).
udp_roundtrip() { # address port file
	local reply
	exec 5<>"/dev/udp/$1/$2" || return 1
	dd if="$3" bs=65536 count=1 2>/dev/null >&5
	reply=$(timeout 3 dd bs=65536 count=1 2>/dev/null <&5)
	exec 5>&-
	printf '%s' "$reply"
}

# A file of $1 printable bytes.
payload() { # bytes file
	head -c "$1" /dev/urandom | base64 -w 0 | head -c "$1" >"$2"
}

rx_sum() { queue_sum rx "$@"; }
tx_sum() { queue_sum tx "$@"; }

# Sets $1 huge pages (2 MiB) aside; fails, saying so, if fewer than $2
# (default $1) could be.
reserve_huge_pages() { # pages [at-least]
	echo "$1" >/proc/sys/vm/nr_hugepages
	local got
	got=$(cat /proc/sys/vm/nr_hugepages)
	[ "$got" -ge "${2:-$1}" ] || { echo "only $got of ${2:-$1} huge pages"; return 1; }
}
release_huge_pages() { echo 0 >/proc/sys/vm/nr_hugepages; }

# Switches dmnic1 (down) to personality $1 and brings it back up.
use_personality() { # name
	ip -n peer link set dmnic1 down || return 1
	ip netns exec peer ethtool --set-priv-flags dmnic1 "personality-$1" on || return 1
	ip -n peer link set dmnic1 up || return 1
	ip netns exec peer ethtool --show-priv-flags dmnic1 | grep -q "^personality-$1 *: on" ||
		{ echo "personality-$1 is not on"; return 1; }
}

# What the devmem receiver's admin does on that NIC before binding: split on
# and hds-thresh 0 (a binding needs both), mlx5's split needing HW GRO.
devmem_admin() { # name
	[ "$1" = mlx5 ] && { ip netns exec peer ethtool -K dmnic1 rx-gro-hw on || return 1; }
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	if has_feature hds-thresh; then
		ip netns exec peer dmn-xfer hds-thresh dmnic1 0 >/dev/null || return 1
	fi
}

# Loads devmemnic (the installed module, or the file $DMN_KO) and puts dmnic1
# in namespace "peer": 10.9.0.1/2, fd00::1/2.
setup_pair() {
	if [ -n "${DMN_KO:-}" ]; then
		insmod "$DMN_KO" "$@" || return 1
	else
		modprobe devmemnic "$@" || return 1
	fi
	mkdir -p /run/netns
	ip netns add peer || return 1
	# One ip per namespace: under TCG each exec of ip costs about 0.25 s.
	ip -batch - <<-EOF || return 1
		link set dmnic1 netns peer
		addr add 10.9.0.1/24 dev dmnic0
		addr add fd00::1/64 dev dmnic0 nodad
		link set dmnic0 up
	EOF
	ip -n peer -batch - <<-EOF || return 1
		addr add 10.9.0.2/24 dev dmnic1
		addr add fd00::2/64 dev dmnic1 nodad
		link set dmnic1 up
		link set lo up
	EOF
	local i carrier
	for ((i = 0; i < 50; i++)); do
		read -r carrier </sys/class/net/dmnic0/carrier 2>/dev/null && [ "$carrier" = 1 ] && return 0
		sleep 0.1
	done
	echo "no carrier on dmnic0"
	return 1
}

# A veth pair: $1 (10.8.0.1/24) here, $2 (10.8.0.2/24) in namespace "peer",
# which must exist.
setup_veth() {
	ip link add "$1" type veth peer name "$2" || return 1
	ip link set "$2" netns peer || return 1
	ip addr add 10.8.0.1/24 dev "$1"
	ip link set "$1" up
	ip -n peer addr add 10.8.0.2/24 dev "$2"
	ip -n peer link set "$2" up
	sleep 1
}

teardown_pair() {
	ip netns del peer 2>/dev/null
	module_loaded && rmmod devmemnic
	return 0
}

# Sends BYTES from the root namespace to the peer (address $1, port $2) and
# checks both ends saw the same byte count and checksum and no pattern error.
xfer_check() {
	local addr="$1" port="$2" bytes="$3" seed="${4:-7}"
	ip netns exec peer dmn-xfer recv "$port" "$bytes" "$seed" >/tmp/xfer-recv.$port 2>&1 &
	local rpid=$!
	# (A fixed sleep lost this race under load: connection refused.)
	wait_listen "$port" || { kill $rpid; return 1; }
	local sent
	sent=$(dmn-xfer send "$addr" "$port" "$bytes" "$seed") || { echo "send failed: $sent"; kill $rpid; return 1; }
	wait $rpid || { echo "receiver failed: $(cat /tmp/xfer-recv.$port)"; return 1; }
	local got sent_fnv got_fnv
	got=$(</tmp/xfer-recv.$port)
	echo "info: $sent"
	echo "info: $got"
	[[ $sent =~ fnv=([0-9a-f]+) ]] && sent_fnv=${BASH_REMATCH[1]}
	[[ $got =~ fnv=([0-9a-f]+) ]] && got_fnv=${BASH_REMATCH[1]}
	[ -n "$sent_fnv" ] && [ "$sent_fnv" = "$got_fnv" ] || { echo "checksums differ"; return 1; }
	[[ $got =~ bytes=$bytes\ .*errors=0$ ]] || { echo "receiver saw a bad stream"; return 1; }
}

# Frames a device's RX queues took off their rings, whatever became of them.
rx_frames() {
	local dev="$1" ns="${2:-}"
	echo $(($(rx_sum "$dev" hds_packets "$ns") + $(rx_sum "$dev" linear "$ns") +
		$(rx_sum "$dev" gro_merged "$ns") + $(rx_sum "$dev" alloc_fail "$ns") +
		$(rx_sum "$dev" drops "$ns")))
}

# Whether something listens on TCP $1 in namespace $2 ("" is the root one):
# one awk, which reads /proc/net of its own namespace.
listening() { # port ns
	local port
	printf -v port '%04X' "$1"
	in_ns "$2" awk -v p="$port" '$2 ~ ":"p"$" && $4 == "0A" { f=1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6
}

# Waits (up to 120 s: binding a 64 MB dma-buf is slow under TCG) until
# something listens on TCP $1 in namespace $2 (default peer; "" is the root
# namespace). A fixed sleep instead loses the race under load.
wait_listen() { # port [ns]
	local i
	for ((i = 0; i < 1200; i++)); do
		listening "$1" "${2-peer}" && return 0
		sleep 0.1
	done
	echo "nothing listens on $1"
	return 1
}

# --- devmem: ncdevmem-rs servers on dmnic1 (namespace peer) ---

# Header split on, RSS over queues 0-7, and the devmem flow (client port
# $1 -> server port $1) steered to queue 8, as upstream ncdevmem configures.
devmem_nic_setup() {
	local port="$1"
	ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
	ip netns exec peer ethtool -X dmnic1 equal 8 || return 1
	ip netns exec peer ethtool -N dmnic1 flow-type tcp4 src-ip 10.9.0.1 dst-ip 10.9.0.2 \
		src-port "$port" dst-port "$port" queue 8 >/dev/null || return 1
}

# Starts an ncdevmem-rs server in the peer namespace (summary to $2) as a
# child of this shell; its pid is left in RS_PID (for `wait`).
# Unless the test gives --size, the dma-buf is 16 MiB in make check (binding
# upstream's 64 MB costs tens of seconds under TCG with KASAN) and upstream's
# 65,536,000 bytes in make stress.
rs_server() { # port outfile [extra args]
	local port="$1" out="$2" size=() debugfs=()
	shift 2
	[[ " $* " == *" --size "* ]] || size=(--size "$(tier $((16 * 1024 * 1024)) 65536000)")
	# --wire-faults writes debugfs, which the namespace's own sysfs (ip
	# netns exec mounts one) hides until mounted again.
	[[ " $* " == *" --wire-faults "* ]] &&
		debugfs=(sh -c 'mount -t debugfs none /sys/kernel/debug && exec "$@"' sh)
	ip netns exec peer "${debugfs[@]}" ncdevmem-rs -l -s 10.9.0.2 -p "$port" -f dmnic1 "${size[@]}" "$@" >"$out" 2>"$out.err" &
	RS_PID=$!
}

summary_field() { # file field
	sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$1" | tail -1
}

# The server's summary must show BYTES received, all validated, every frag's
# token returned, and payload in the dma-buf.
check_rs_summary() { # file bytes
	local f="$1" bytes="$2"
	echo "info: $(cat "$f")"
	[ "$(summary_field "$f" bytes)" = "$bytes" ] || { echo "server got $(summary_field "$f" bytes) bytes, want $bytes"; cat "$f.err" | tail -5; return 1; }
	[ "$(summary_field "$f" validation_errors)" = 0 ] || { echo "validation errors"; return 1; }
	[ "$(summary_field "$f" wrong_dmabuf)" = 0 ] || { echo "frags from another dma-buf"; return 1; }
	[ "$(summary_field "$f" tokens_returned)" = "$(summary_field "$f" frags)" ] || { echo "not every token returned"; return 1; }
	[ "$(summary_field "$f" dmabuf_bytes)" -gt $((bytes * 9 / 10)) ] || { echo "payload not in the dma-buf"; return 1; }
}

# What ncdevmem-rs may change on dmnic1 and must put back: header split,
# channels, the RSS table and the ntuple rules.
nic_snapshot() {
	ip netns exec peer ethtool -g dmnic1 | grep -i "split"
	ip netns exec peer ethtool -l dmnic1
	ip netns exec peer ethtool -x dmnic1 | grep -v "^RSS hash key" | grep -v "^[0-9a-f][0-9a-f]:"
	ip netns exec peer ethtool -n dmnic1
}

# Prints how dmnic1 differs now from snapshot $1 (the guest has no /dev/fd,
# so no process substitution).
nic_diff() { # before
	echo "$1" >/tmp/nic.before
	nic_snapshot | diff /tmp/nic.before - | head
}

# A validated flow from here to the peer (10.9.0.2:PORT, pattern SEED) that
# runs until stopped; pids in BG_SEND and BG_RECV, receiver's line in
# /tmp/bg.PORT.
bg_flow_start() { # port seed
	ip netns exec peer dmn-xfer recv "$1" $((1 << 40)) "$2" >/tmp/bg.$1 2>&1 &
	BG_RECV=$!
	wait_listen "$1"
	dmn-xfer send 10.9.0.2 "$1" $((1 << 40)) "$2" >/dev/null 2>&1 &
	BG_SEND=$!
}

# The flow of bg_flow_start still moves (dmnic1 receives more within 2 s);
# then it is stopped and what it received must be valid.
bg_flow_stop_check() { # port
	local b0
	b0=$(rx_sum dmnic1 bytes peer)
	sleep 2
	[ "$(rx_sum dmnic1 bytes peer)" -gt "$b0" ] || { echo "the background flow stopped"; return 1; }
	kill $BG_SEND
	wait $BG_SEND
	wait $BG_RECV
	echo "info: background flow: $(cat /tmp/bg.$1)"
	grep -q " errors=0$" /tmp/bg.$1 || { echo "background flow corrupted"; return 1; }
}

# Totals of the page pools of the root namespace and of every named one,
# from the kernel's page-pool-get: "pools=N inflight=N detached=N
# detached_inflight=N", one line per namespace. A detached pool is one its
# driver destroyed that still waits for buffers. (A device leaving a
# namespace leaves its pools listed under that namespace's loopback device.)
pool_totals() {
	local ns
	for ns in "" /run/netns/*; do
		[ -z "$ns" ] || [ -e "$ns" ] || continue
		in_ns "${ns##*/}" ncdevmem-rs --page-pools | grep "^page-pools"
	done
}

# Runs the NET_RX softirq on every CPU (a ping over loopback from a task
# pinned to it): skbs freed from another CPU wait on that CPU's defer list,
# with their page-pool buffers, until its next NET_RX, which an idle CPU may
# never run. (The driver does the same at unload; this is for buffers whose
# sockets died after it.)
kick_net_rx() {
	local cpu
	for cpu in /sys/devices/system/cpu/cpu[0-9]*; do
		taskset -c "${cpu##*/cpu}" ping -c 1 -W 1 127.0.0.1 >/dev/null 2>&1
	done
}

# dma-bufs attached to a devmemnic parent device (a live binding each).
dmabufs_on_devmemnic() {
	[ -r /sys/kernel/debug/dma_buf/bufinfo ] || { echo "no dma_buf debugfs"; return 1; }
	grep -c "^	devmemnic\." /sys/kernel/debug/dma_buf/bufinfo
}

# Waits up to $1 s until no dma-buf is attached to a devmemnic parent. Each
# round runs NET_RX on every CPU: an RX skb freed by a socket on another CPU
# waits, with its devmem buffers (and so the binding), on the defer list of
# the CPU that received it until that CPU's next NET_RX (kick_net_rx).
wait_dmabufs_detached() { # secs
	local i n
	for i in $(seq 1 $(($1 * 10))); do
		n=$(dmabufs_on_devmemnic)
		[ "$n" = 0 ] && return 0
		kick_net_rx
		sleep 0.1
	done
	grep -B4 "^	devmemnic\." /sys/kernel/debug/dma_buf/bufinfo | head -20
	echo "sockets: $(netstat -tn 2>&1 | tail -n +3 | tr -s ' ' | paste -sd';')"
	echo "peer sockets: $(ip netns exec peer netstat -tn 2>&1 | tail -n +3 | tr -s ' ' | paste -sd';')"
	echo "dmnic0: tx devmem_packets $(tx_sum dmnic0 devmem_packets) dropped $(tx_sum dmnic0 dropped); dmnic1: rx packets $(rx_sum dmnic1 packets peer) drops $(rx_sum dmnic1 drops peer)"
	echo "$n dma-bufs still attached to devmemnic after $1 s"
	return 1
}

# Kills (SIGKILL) the devmem server $RS_PID on port $1 mid-stream, with what
# it holds: a 1 GiB client to it runs until the devmem frame counter that
# command $2 prints has grown by 200 (or $3 tenths of a second went by);
# then its binding must go (its dma-buf detached) within $4 s. Info lines
# say how far it got, prefixed with $5.
kill_server_mid_stream() { # port "counter command" tries detach-secs [label]
	local port="$1" counter="$2" tries="$3" secs="$4" label="${5:+$5: }" base cpid i t0
	base=$($counter)
	ncdevmem-rs -s 10.9.0.2 -p "$port" -v 7 --bytes $((1 << 30)) >/dev/null 2>&1 &
	cpid=$!
	for ((i = 0; i < tries; i++)); do
		[ "$($counter)" -gt $((base + 200)) ] && break
		sleep 0.1
	done
	echo "info: ${label}killing the server after $(($($counter) - base)) devmem frames"
	kill -KILL "$RS_PID"
	wait "$RS_PID" 2>/dev/null
	wait $cpid 2>/dev/null
	t0=$(uptime_now)
	wait_dmabufs_detached "$secs" || return 1
	echo "info: ${label}binding freed $(secs_since "$t0") s after the kill"
}

# TCP sockets of every namespace with their queues and memory (ss -tanmi):
# what a page pool that waits for buffers may be waiting on.
socket_report() {
	local ns
	for ns in "" $(ls /run/netns 2>/dev/null); do
		echo "sockets (${ns:-root}): $(in_ns "$ns" ss -tanmi 2>&1 | paste -sd';')"
	done
}

# Waits until no TCP socket of namespace $1 ("" for the root one) with
# port $2 at either end holds received memory, up to $3 s: what a killed
# flow left behind (an orphan keeps its receive queues, page-pool buffers
# included, until it gives up; dmn-xfer resets its connections so that it
# leaves none).
wait_port_rx_free() { # netns port secs
	local i filter="( sport = :$2 or dport = :$2 )"
	for i in $(seq 1 $(($3 * 10))); do
		if ! in_ns "$1" ss -tanHm "$filter" | grep -q 'skmem:(r[1-9]'; then
			[ "$i" -gt 1 ] && echo "info: sockets on port $2 held received data for $(((i - 1) / 10)).$(((i - 1) % 10)) s"
			return 0
		fi
		[ "$i" = 1 ] && echo "info: holding received data: $(in_ns "$1" ss -tanmi "$filter" | paste -sd';')"
		sleep 0.1
	done
	echo "sockets on port $2 in ${1:-the root namespace} still hold received data after $3 s: $(in_ns "$1" ss -tanmi "$filter" | paste -sd';')"
	return 1
}

# Waits (up to 10 s) until no destroyed page pool waits for buffers.
pools_drained() {
	local i out
	for ((i = 0; i < 100; i++)); do
		# Looked at before kicking: mostly they have drained already.
		out=$(pool_totals)
		[[ $out =~ detached=[1-9] ]] || return 0
		# (What holds the buffers when it takes long.)
		[ "$i" = 20 ] && echo "info: page pools still waiting: $(echo "$out" | paste -sd';'); $(socket_report | paste -sd' ')"
		kick_net_rx
		sleep 0.1
	done
	echo "page pools still waiting for buffers after 10 s: $out"
	socket_report
	return 1
}

# --- a hostile wire: devmemnic's wire faults (Documentation/hardening.rst) ---

# dmnic1's knobs (its parent is devmemnic.1).
FAULTS=/sys/kernel/debug/devmemnic/devmemnic.1/wire_faults

# Sets dmnic1's wire faults: set_faults name=value ...
set_faults() {
	local kv
	for kv in "$@"; do
		echo "${kv#*=}" >"$FAULTS/${kv%%=*}" || { echo "cannot set ${kv%%=*}"; return 1; }
	done
}

FAULT_RATES="drop_ppm burst_enter_ppm duplicate_ppm reorder_ppm corrupt_ppm truncate_ppm delay_us jitter_us"

faults_off() {
	local f
	for f in $FAULT_RATES; do
		set_faults "$f=0" || return 1
	done
}

# Every fault knob is off (0), or the one named says what it holds.
faults_are_off() {
	local f v
	for f in $FAULT_RATES; do
		v=$(cat "$FAULTS/$f")
		[ "$v" = 0 ] || { echo "$f is $v"; return 1; }
	done
}

# Every fault at once at moderate rates (2% loss, 1% duplicates, 25% of the
# frames held behind 3 later ones, 1% with a byte corrupted, 1 ms of delay
# give or take 1 ms): for set_faults (words) or ncdevmem-rs --wire-faults.
# (1% corrupted: about 14 frames of a 2 MiB transfer, never none.)
MODERATE_FAULTS=drop_ppm=20000,duplicate_ppm=10000,reorder_ppm=250000,reorder_gap=3,corrupt_ppm=10000,delay_us=1000,jitter_us=1000

# A TcpExt counter (/proc/net/netstat) of namespace $2 (here if none).
tcpext() { # name [ns]
	in_ns "${2:-}" cat /proc/net/netstat | awk -v n="$1" '
		$1 == "TcpExt:" { if (!h) { for (i = 2; i <= NF; i++) k[i] = $i; h = 1 }
		                  else { for (i = 2; i <= NF; i++) if (k[i] == n) print $i } }'
}

# A counter of /proc/net/snmp's line $1 ("Tcp", "Udp") of namespace $3
# (here if none).
snmp() { # line name [ns]
	in_ns "${3:-}" cat /proc/net/snmp | awk -v l="$1:" -v n="$2" '
		$1 == l { if (!h) { for (i = 2; i <= NF; i++) k[i] = $i; h = 1 }
		          else { for (i = 2; i <= NF; i++) if (k[i] == n) print $i } }'
}
snmp_tcp() { snmp Tcp "$@"; }

# A kernel warning the caller provokes on purpose, in function $1 (a path
# where the kernel itself warns; "f|g": either, as inlining names it):
# scripts/vm-run leaves such a warning out of its console check until
# expect_warning_end; the WARN_ONCE sites are re-armed (debugfs
# clear_warn_once), so that warned $1 can say whether one came.
expect_warning() { # function[|function...]
	echo 1 >/sys/kernel/debug/clear_warn_once || return 1
	echo "devmemnic-expect-warning: begin $1" >/dev/kmsg
}
expect_warning_end() {
	echo "devmemnic-expect-warning: end" >/dev/kmsg
}

# Whether the kernel warned in function $1 (as expect_warning) since the last
# expect_warning.
warned() { # function[|function...]
	dmesg | awk -v want="$1" 'BEGIN { n = split(want, f, "|") }
		/devmemnic-expect-warning: begin/ { w = 0 }
		/WARNING:/ { for (i = 1; i <= n; i++) if (index($0, " " f[i] "+")) w = 1 }
		END { exit !w }'
}

# rmmod, then: every devmem buffer had come back (teardown found no retired
# pool waiting), no page pool is left waiting for buffers, and nothing was
# reported.
unload_clean() {
	local t0 t1 t2
	dmesg -c >/dev/null
	t0=$(centisecs "$(uptime_now)")
	rmmod devmemnic || { echo "rmmod failed"; return 1; }
	t1=$(centisecs "$(uptime_now)")
	if dmesg | grep -q "devmem buffers still out"; then
		echo "devmem buffers leaked"
		return 1
	fi
	pools_drained || return 1
	# (Where a slow teardown spends its time.)
	t2=$(centisecs "$(uptime_now)")
	[ $((t2 - t0)) -gt 500 ] && printf 'info: rmmod took %d.%02d s, page pools drained %d.%02d s later\n' \
		$(((t1 - t0) / 100)) $(((t1 - t0) % 100)) $(((t2 - t1) / 100)) $(((t2 - t1) % 100))
	return 0
}
