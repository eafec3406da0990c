#!/bin/bash
# Guest tests: module load/unload, parameters, and the parent devices.
source /extra/lib.sh

load_default() {
	modprobe devmemnic || return 1
	[ "$(parent_count)" = 2 ] || { echo "want 2 parents, have $(parent_count)"; return 1; }
	local mask
	for d in /sys/bus/platform/devices/devmemnic.0 /sys/bus/platform/devices/devmemnic.1; do
		[ -e "$d" ] || { echo "missing $d"; return 1; }
	done
	grep -q '^devmemnic ' /proc/modules || { echo "not in /proc/modules"; return 1; }
	rmmod devmemnic || return 1
	[ "$(parent_count)" = 0 ] || { echo "parents left after rmmod: $(parent_count)"; return 1; }
}

load_with_pairs() {
	modprobe devmemnic pairs=3 queues=4 max_queues=6 || return 1
	[ "$(parent_count)" = 6 ] || { echo "want 6 parents, have $(parent_count)"; return 1; }
	[ "$(cat /sys/module/devmemnic/parameters/pairs)" = 3 ] || return 1
	[ "$(cat /sys/module/devmemnic/parameters/queues)" = 4 ] || return 1
	# 4 queues in use, 6 there.
	ethtool -l dmnic5 | tr -s ' \t' ' ' | grep -A4 maximums | grep -q "Combined: 6" ||
		{ echo "dmnic5: maximum not 6 combined"; return 1; }
	ethtool -l dmnic5 | tr -s ' \t' ' ' | grep -A4 Current | grep -q "Combined: 4" ||
		{ echo "dmnic5: not 4 combined in use"; return 1; }
	rmmod devmemnic
}

# Bad parameters ($1, space-separated) must fail the load with a message
# naming one ($2), and leave nothing.
reject_param() {
	local arg="$1" msg="$2"
	dmesg -c >/dev/null
	# shellcheck disable=SC2086 # one word per parameter
	if modprobe devmemnic $arg 2>/dev/null; then
		echo "modprobe devmemnic $arg succeeded"
		rmmod devmemnic
		return 1
	fi
	dmesg | grep -q "$msg" || { echo "no '$msg' in dmesg"; dmesg | tail -5; return 1; }
	[ "$(parent_count)" = 0 ] || { echo "parents left: $(parent_count)"; return 1; }
	! grep -q '^devmemnic ' /proc/modules
}

load_unload_cycles() {
	local i
	for i in $(seq 1 "$1"); do
		insmod /lib/modules/$(uname -r)/extra/devmemnic.ko || { echo "insmod $i failed"; return 1; }
		rmmod devmemnic || { echo "rmmod $i failed"; return 1; }
	done
	[ "$(parent_count)" = 0 ] || { echo "parents left: $(parent_count)"; return 1; }
	echo "$1 cycles done"
}

run_test module/load-default load_default
run_test module/load-pairs-3 load_with_pairs
run_test module/reject-pairs-0 reject_param pairs=0 "pairs=0 is out of range"
run_test module/reject-pairs-17 reject_param pairs=17 "pairs=17 is out of range"
run_test module/reject-queues-0 reject_param queues=0 "queues=0 is out of range"
run_test module/reject-queues-129 reject_param queues=129 "queues=129 is out of range"
run_test module/reject-max-queues-below-queues reject_param "queues=8 max_queues=4" "max_queues=4 is out of range"
run_test module/reject-max-queues-129 reject_param max_queues=129 "max_queues=129 is out of range"
run_test module/load-unload-cycles load_unload_cycles "$(tier 6 100)"
exit $GUEST_FAILED
