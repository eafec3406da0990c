#!/bin/bash
# Runs every guest test script copied to /extra/ (test-*.sh), in name order,
# and has kmemleak scan for anything they leaked: after the last one
# (guest/kmemleak-clean-all-scripts), or in make stress after each one
# (guest/kmemleak-clean-<script>).
source /extra/lib.sh
KMEMLEAK=/sys/kernel/debug/kmemleak
# What boot left unreferenced is not ours: scan it now and forget it.
if [ -w $KMEMLEAK ]; then
	echo scan >$KMEMLEAK
	echo clear >$KMEMLEAK
fi
rc=0
# KUnit runs the module's suites on every load; once per boot is enough (the
# scripts load it ~40 times): run them on a first load, then filter them out
# of later ones (kunit.filter_glob is writable at runtime on 6.12 and 7.2).
if ! modprobe devmemnic; then
	fail guest/first-load "modprobe devmemnic failed"
	rc=1
elif ! rmmod devmemnic; then
	fail guest/first-load "rmmod after the first load failed"
	rc=1
else
	pass guest/first-load
fi
[ -w /sys/module/kunit/parameters/filter_glob ] &&
	echo "kunit-ran-on-first-load.none" >/sys/module/kunit/parameters/filter_glob
scripts=(/extra/test-*.sh)
last=${scripts[-1]}
for t in "${scripts[@]}"; do
	name=$(basename "$t" .sh)
	echo "=== $name"
	t0=$(uptime_now)
	: >"$TESTS_RUN_FILE"
	bash "$t" || rc=1
	echo "=== $name took $(secs_since "$t0")s"
	# A test script must leave the module unloaded for the next one.
	module_loaded && { rmmod devmemnic || rc=1; }
	[ -w $KMEMLEAK ] || continue
	# A script that ran no test (its kernel lacks the feature) leaked
	# nothing of ours: skip its scan (the last script's is always run).
	[ "$t" != "$last" ] && [ ! -s "$TESTS_RUN_FILE" ] && continue
	# make check scans once, after the last script (a scan costs about 9 s
	# under TCG; a report's backtrace names the leaking code); make stress
	# after every script, so that a leak is also pinned to its script.
	[ "$t" != "$last" ] && [ "$DMN_TIER" != stress ] && continue
	# Objects younger
	# than 5 s are not reported yet: what the script's last seconds leaked
	# shows in the next script's scan; after the last script, wait them out
	# and scan twice, as kmemleak advises, so a pointer seen once in a stale
	# register does not hide one.
	t0=$(uptime_now)
	[ "$t" = "$last" ] && sleep 6
	echo scan >$KMEMLEAK
	[ "$t" = "$last" ] && echo scan >$KMEMLEAK
	leaks=$(cat $KMEMLEAK)
	# What the scan covers: this script (make stress) or all of them.
	scope=${name#test-}
	[ "$DMN_TIER" = stress ] || scope=all-scripts
	if [ -z "$leaks" ]; then
		pass "guest/kmemleak-clean-$scope" "$(secs_since "$t0")s"
	else
		echo "$leaks" | head -80
		echo "TEST guest/kmemleak-clean-$scope FAIL: $(echo "$leaks" | grep -c 'unreferenced object') unreferenced objects"
		# Reported once: the next script starts clean.
		echo clear >$KMEMLEAK
		rc=1
	fi
done
exit $rc
