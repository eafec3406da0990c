# Helpers for guest test scripts (bash in the devmemnic QEMU guest); sourced.
#
# Each test prints exactly one line "TEST <name> PASS" or "TEST <name> FAIL: why";
# the host's check runner collects them from the console.

GUEST_FAILED=0

pass() { echo "TEST $1 PASS"; }
fail() {
	echo "TEST $1 FAIL: $2"
	GUEST_FAILED=1
}

# Runs "$@" and records test $name passing iff it exits 0.
run_test() {
	local name="$1"
	shift
	local out
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		echo "$out" | tail -n 20 | sed "s/^/  $name: /"
		fail "$name" "exit $?"
	fi
}

# Counts devmemnic parent devices on the platform bus.
parent_count() {
	ls -d /sys/bus/platform/devices/devmemnic.* 2>/dev/null | wc -l
}
