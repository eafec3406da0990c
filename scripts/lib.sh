# Shared settings for devmemnic's scripts; sourced, not run.
#
# Everything built here (kernel trees, the guest image pieces) lives under
# $DEVMEMNIC_CACHE, outside the repository, keyed by what changes it.

set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${DEVMEMNIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/devmemnic}"
BINDGEN_VERSION=0.73.2
LLVM_BIN=/usr/lib/llvm-19/bin
export PATH="$LLVM_BIN:$HOME/.cargo/bin:$PATH"
JOBS="${JOBS:-$(($(nproc) + 1))}"

# Kernel config fragments that make up each kernel flavour, in merge order.
kernel_fragments() {
	case "$1" in
	test) echo "$REPO/tests/kconfig/base.config $REPO/tests/kconfig/debug.config" ;;
	perf) echo "$REPO/tests/kconfig/base.config $REPO/tests/kconfig/perf.config" ;;
	*) echo "unknown kernel flavour '$1'" >&2; return 1 ;;
	esac
}

START_TS=$(date +%s)
say() { printf '[%4ds] %s\n' $(($(date +%s) - START_TS)) "$*" >&2; }
die() { say "error: $*"; exit 1; }

# Version of Debian's linux-source-6.12 package, or empty when not installed.
linux_source_version() {
	dpkg-query -W -f='${Status} ${Version}\n' linux-source-6.12 2>/dev/null |
		awk '$3 == "installed" { print $4 }'
}

# The cache key of a kernel flavour: hash of everything that changes its build.
kernel_key() {
	local flavour="$1" f
	{
		echo "recipe 3"
		echo "flavour $flavour"
		echo "linux-source $(linux_source_version)"
		for f in $(kernel_fragments "$flavour"); do
			echo "fragment $(basename "$f")"
			cat "$f"
		done
		rustc --version
		bindgen --version 2>/dev/null || echo "no bindgen"
		"$LLVM_BIN/clang" --version | head -1
	} | sha256sum | cut -c1-16
}

kernel_src() { echo "$CACHE/linux-$(linux_source_version)"; }
kernel_out() { echo "$CACHE/kernel-$1-$(kernel_key "$1")"; }

# Runs a long command with its output in a log file, printing a heartbeat.
run_logged() {
	local what="$1" log="$2"
	shift 2
	say "$what (log: $log)"
	local t0=$(date +%s)
	("$@") >"$log" 2>&1 &
	local pid=$!
	local n=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		n=$((n + 1))
		if [ $((n % 60)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
			say "  ... $what: $(($(date +%s) - t0))s"
		fi
	done
	if ! wait "$pid"; then
		tail -n 40 "$log" >&2
		die "$what failed after $(($(date +%s) - t0))s; full log: $log"
	fi
	say "$what done in $(($(date +%s) - t0))s"
}
