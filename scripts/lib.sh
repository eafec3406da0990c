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

# The kernel under test: 6.12 (Debian 12's linux-source-6.12, LTS), 7.2 or
# 7.3 (Debian's linux-source-7.2 and -7.3, pinned below and fetched by
# scripts/bootstrap), built here; or stock-7.2 / stock-7.3, Debian's own
# (stock_pins).
KERNEL="${KERNEL:-6.12}"
case "$KERNEL" in
6.12 | 7.2 | 7.3 | stock-7.2 | stock-7.3) ;;
*) echo "KERNEL=$KERNEL: expected 6.12, 7.2, 7.3, stock-7.2 or stock-7.3" >&2; exit 2 ;;
esac
# linux-source-7.2 as listed in sid's signed index (main/binary-amd64/Packages.xz).
LINUX72_VERSION=7.2.13-1
LINUX72_SHA256=30a8c5fc63f9028a62e6d7b3f7f43bee67425dbce2a05fceba83f9b87c92083d
LINUX72_FILE=pool/main/l/linux/linux-source-7.2_7.2.13-1_all.deb
LINUX72_SUITES="sid trixie-backports"
# linux-source-7.3 as listed in trixie-backports' signed index: the source
# of the stock 7.3 kernel too.
LINUX73_VERSION=7.3.4-1~bpo13+1
LINUX73_SHA256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
LINUX73_FILE=pool/main/l/linux/linux-source-7.3_7.3.4-1~bpo13+1_all.deb
LINUX73_SUITES="trixie-backports"
# The pinned linux-source package of a self-built 7.x kernel: sets
# SOURCE_SERIES, SOURCE_VERSION, SOURCE_SHA256, SOURCE_FILE and
# SOURCE_SUITES; fails for 6.12 (Debian 12's installed package) and the
# stock kernels.
source_pin() {
	case "$KERNEL" in
	7.2) SOURCE_SERIES=7.2 SOURCE_VERSION=$LINUX72_VERSION SOURCE_SHA256=$LINUX72_SHA256
		SOURCE_FILE=$LINUX72_FILE SOURCE_SUITES=$LINUX72_SUITES ;;
	7.3) SOURCE_SERIES=7.3 SOURCE_VERSION=$LINUX73_VERSION SOURCE_SHA256=$LINUX73_SHA256
		SOURCE_FILE=$LINUX73_FILE SOURCE_SUITES=$LINUX73_SUITES ;;
	*) return 1 ;;
	esac
}
# True for the kernels that have 7.2's devmem features (devmem TX, zcrx,
# leasing, the HDS threshold), self-built or stock.
kernel_is_7x() {
	case "$KERNEL" in 7.2 | 7.3 | stock-7.2 | stock-7.3) return 0 ;; *) return 1 ;; esac
}
DEBIAN_MIRROR=http://deb.debian.org/debian

# Debian's stock kernels (not rebuilt; scripts/stock-kernel): one pinned
# version each, its packages' SHA256 as the suite's signed index lists them,
# and the suite whose toolchain built it (gcc, rustc and bindgen of the
# version its config names). Sets STOCK_*; fails for a self-built kernel.
# What a stock kernel's chroot installs: the suite's rustc, bindgen and the
# gcc $1 its config names, and what the kernel build needs (openssl: Kconfig
# asks it which signing keys it supports; python3: resolve_btfids' libbpf
# build).
stock_root_packages() { # gcc package
	echo "rustc rust-src bindgen libclang-dev $1 make bc flex bison libelf-dev libssl-dev dwarves kmod xz-utils openssl python3 rustfmt rust-clippy"
}
stock_pins() {
	case "$KERNEL" in
	stock-7.2)
		STOCK_SUITE=sid
		STOCK_ROOT_SUITE=sid
		STOCK_SERIES=7.2
		STOCK_VERSION=7.2.13-1
		STOCK_ABI=7.2.13+deb14-amd64
		STOCK_HEADERS_FILE=pool/main/l/linux/linux-headers-7.2.13+deb14-amd64_7.2.13-1_amd64.deb
		STOCK_HEADERS_SHA256=ca62a68d18f87235d0c32b1a3e129f9cb7859ac5e6a0c95574081f02faed8573
		STOCK_SOURCE_FILE=$LINUX72_FILE
		STOCK_SOURCE_SHA256=$LINUX72_SHA256
		STOCK_BINARY_FILE=pool/main/l/linux-signed-amd64/linux-binary-7.2.13+deb14-amd64_7.2.13-1_amd64.deb
		STOCK_BINARY_SHA256=fb8cd0ade4ef82d9dde1dcf183d4bf4033db1b549b0acc9973855ad9cc48c4f5
		STOCK_BASE_FILE=pool/main/l/linux/linux-base-7.2.13+deb14-amd64_7.2.13-1_amd64.deb
		STOCK_BASE_SHA256=2b2d3c6e224358c60974d0bc87461da99a85733eb1fec035b5167582c3bede2b
		STOCK_MODULES_FILE=pool/main/l/linux/linux-modules-7.2.13+deb14-amd64_7.2.13-1_amd64.deb
		STOCK_MODULES_SHA256=a37a3d200915c4cf524e90c81bbb2a8b683d292cd00873e89c23b2ef32b1bf11
		# sid's toolchain of the day the pin was taken (gcc-16 16.2.0-4,
		# rustc 1.97.1, bindgen 0.72.1): the compiler check says so when
		# sid has moved on, and the pin must move with it.
		STOCK_ROOT_PACKAGES=$(stock_root_packages gcc-16)
		;;
	stock-7.3)
		STOCK_SUITE=trixie-backports
		STOCK_ROOT_SUITE=trixie
		STOCK_SERIES=7.3
		STOCK_VERSION=7.3.4-1~bpo13+1
		STOCK_ABI=7.3.4+deb13-amd64
		STOCK_HEADERS_FILE=pool/main/l/linux/linux-headers-7.3.4+deb13-amd64_7.3.4-1~bpo13+1_amd64.deb
		STOCK_HEADERS_SHA256=1c43249a7b98aee4af60f2b822ddb04a9e96c1c9e8b013e5f74d3d9faf318699
		STOCK_SOURCE_FILE=$LINUX73_FILE
		STOCK_SOURCE_SHA256=$LINUX73_SHA256
		# What a guest boots: the kernel (signed vmlinuz) and its
		# System.map, config and list of built-in modules.
		STOCK_BINARY_FILE=pool/main/l/linux-signed-amd64/linux-binary-7.3.4+deb13-amd64_7.3.4-1~bpo13+1_amd64.deb
		STOCK_BINARY_SHA256=7e3248d03a84dcdda88c567aa8c4038f2e7795d2dd167b112c56f8901b6f513f
		STOCK_BASE_FILE=pool/main/l/linux/linux-base-7.3.4+deb13-amd64_7.3.4-1~bpo13+1_amd64.deb
		STOCK_BASE_SHA256=5663505495b5c90be94af42105c7b28629802516779102dac48d5a00cc00fccf
		STOCK_MODULES_FILE=pool/main/l/linux/linux-modules-7.3.4+deb13-amd64_7.3.4-1~bpo13+1_amd64.deb
		STOCK_MODULES_SHA256=b3ea01922c9f133767a83cf6891c19b3693858ded617bf22d1e34f95382c08ea
		STOCK_ROOT_PACKAGES=$(stock_root_packages gcc-14)
		;;
	*) return 1 ;;
	esac
}

# Kernel config fragments that make up each kernel flavour, in merge order
# (7.2 and 7.3 add the 7.2 fragments, for what 7.2 brought, last).
kernel_fragments() {
	local extra="" test_extra=""
	if kernel_is_7x; then
		extra=" $REPO/tests/kconfig/kernel-7.2.config"
		test_extra=" $REPO/tests/kconfig/selftests-7.2.config"
	fi
	case "$1" in
	test) echo "$REPO/tests/kconfig/base.config $REPO/tests/kconfig/debug.config $REPO/tests/kconfig/selftests.config$extra$test_extra" ;;
	perf) echo "$REPO/tests/kconfig/base.config $REPO/tests/kconfig/perf.config$extra" ;;
	ksft)
		kernel_is_7x && test_extra="$test_extra $REPO/tests/kconfig/ksft-7.2.config"
		echo "$REPO/tests/kconfig/base.config $REPO/tests/kconfig/ksft.config $REPO/tests/kconfig/selftests.config$extra$test_extra" ;;
	*) echo "unknown kernel flavour '$1'" >&2; return 1 ;;
	esac
}

# What make check expects each kernel flavour to offer its guest tests, in
# scripts/kernel-features' names: a tree that probes otherwise, or a module
# whose own probes (modinfo features) disagree, fails the check, so a probe
# that stops matching cannot quietly turn tests into skips.
declared_features() { # flavour (a stock kernel has one: stock)
	local f="kunit" of72="devmem-tx hds-thresh rx-buf-len zcrx lease napi-config"
	local of73="$of72 bind-rx-page-size zcrx-areas"
	case "$KERNEL" in
	7.2) f+=" $of72" ;;
	7.3) f+=" $of73" ;;
	# Debian's: no KUnit.
	stock-7.2) f="$of72" ;;
	stock-7.3) f="$of73" ;;
	esac
	[ "$1" = test ] && f+=" kmemleak"
	echo "$f"
}
# Of those, the ones the module finds by its own probes and lists in
# `modinfo -F features` (FEATURES in src/abstractions/module.rs).
MODULE_PROBED_FEATURES="devmem-tx hds-thresh rx-buf-len napi-config kunit"

START_TS=$(date +%s)
say() { printf '[%4ds] %s\n' $(($(date +%s) - START_TS)) "$*" >&2; }
die() { say "error: $*"; exit 1; }

# Version of the kernel source: Debian's installed linux-source-6.12 (empty
# when not installed), or the pinned linux-source-7.x.
linux_source_version() {
	if source_pin; then
		echo "$SOURCE_VERSION"
		return
	fi
	dpkg-query -W -f='${Status} ${Version}\n' linux-source-6.12 2>/dev/null |
		awk '$3 == "installed" { print $4 }'
}

# The cache key of a kernel flavour: hash of everything that changes its build.
kernel_key() {
	local flavour="$1" f
	case "$KERNEL" in
	stock-*) die "KERNEL=$KERNEL is Debian's own kernel, prepared (scripts/stock-kernel), not built: what needs a kernel built here (make stress, the debug lane's sanitizers) needs KERNEL=6.12, 7.2 or 7.3" ;;
	esac
	{
		echo "recipe 3"
		# (6.12's key input is unchanged from before 7.2 existed.)
		[ "$KERNEL" = 6.12 ] || echo "kernel $KERNEL"
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

# The tree a flavour of $KERNEL boots and modules build against: a self-built
# kernel's cached build, or a stock kernel's prepared tree (its one flavour;
# prepared on first use: scripts/stock-kernel).
kernel_tree() {
	if stock_pins; then
		"$REPO/scripts/stock-kernel" kdir
	else
		kernel_out "$1"
	fi
}
# devmemnic.ko for that tree (prints its path; the build log to stderr).
build_module_for() { # flavour [make args]
	if stock_pins; then
		shift
		"$REPO/scripts/stock-kernel" module "$@"
	else
		"$REPO/scripts/build-module" "$@"
	fi
}

# OpenSSH's sshd and sftp-server, unpacked from Debian 12's packages (apt
# checks them against its signed index) into the cache, not installed: the
# remote guest of the two-host selftests runs them (tests/selftests/
# remote.sh), as NIPA's remote hosts run OpenSSH; this machine gets no ssh
# server. Prints the directory.
ssh_server_dir() {
	local ver dir tmp d
	ver=$(apt-cache policy openssh-server | sed -n 's/^ *Candidate: //p')
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		echo "openssh-server is not in apt's index (apt-get update)" >&2
		return 1
	fi
	dir="$CACHE/openssh-server-${ver//:/_}"
	if [ ! -x "$dir/usr/sbin/sshd" ] || [ ! -x "$dir/usr/lib/openssh/sftp-server" ]; then
		tmp=$(mktemp -d)
		# (apt-get download as root warns that its sandbox user cannot write here.)
		if ! (cd "$tmp" && apt-get download "openssh-server=$ver" openssh-sftp-server) >&2 2>"$tmp/log"; then
			cat "$tmp/log" >&2
			rm -rf "$tmp"
			return 1
		fi
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		for d in "$tmp"/*.deb; do dpkg -x "$d" "$dir.tmp"; done
		rm -rf "$tmp" "$dir"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

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

# The amd64 Packages index of Debian suite $1 (which lists arch-all packages
# too), verified: InRelease by Debian's archive keyring, the index by
# InRelease's SHA256; printed. Downloads go under $2. Empty output if the
# mirror has no such suite or index; exit 1, with a message, if it does not
# verify.
signed_packages_index() { # suite download-dir
	local suite="$1" idx="$2/$1" sum
	mkdir -p "$idx"
	curl -fsSL -o "$idx/InRelease" "$DEBIAN_MIRROR/dists/$suite/InRelease" || return 0
	gpgv --keyring /usr/share/keyrings/debian-archive-keyring.gpg "$idx/InRelease" >/dev/null 2>&1 || {
		echo "$suite's InRelease does not verify with Debian's archive keyring" >&2
		return 1
	}
	curl -fsSL -o "$idx/Packages.xz" "$DEBIAN_MIRROR/dists/$suite/main/binary-amd64/Packages.xz" || return 0
	sum=$(sha256sum "$idx/Packages.xz" | cut -d' ' -f1)
	grep -q " $sum .* main/binary-amd64/Packages.xz\$" "$idx/InRelease" || {
		echo "$suite's main/binary-amd64/Packages.xz does not match its signed InRelease (a mirror mid-sync? try again later)" >&2
		return 1
	}
	xz -dc "$idx/Packages.xz"
	rm -f "$idx/Packages.xz"
}

# The SHA256 a Packages index on stdin lists for package $1 at version $2
# (empty if it does not list it).
index_sha256() { # package version
	awk -v p="$1" -v v="$2" '
		$1 == "Package:" {ok = ($2 == p)} $1 == "Version:" {ok = ok && ($2 == v)}
		ok && $1 == "SHA256:" {print $2} /^$/ {ok = 0}'
}

# Downloads Debian pool path $2 into directory $3 unless it is there with the
# pinned SHA256 $1; prints the file. Dies if the download differs from the pin.
fetch_pinned() { # sha256 pool-path dir
	local deb="$3/${2##*/}"
	mkdir -p "$3"
	if [ ! -f "$deb" ] || ! echo "$1  $deb" | sha256sum -c --quiet 2>/dev/null; then
		curl -fsSL -o "$deb.part" "$DEBIAN_MIRROR/$2" || die "cannot download $2"
		echo "$1  $deb.part" | sha256sum -c --quiet || die "${2##*/}: the download's SHA256 differs from the pin"
		mv "$deb.part" "$deb"
	fi
	echo "$deb"
}

# Where devmemnic.ko is built for $KERNEL's kernel of a flavour: a copy of the
# module sources per kernel build, so objects of different kernels never mix
# (MODULE_VARIANT, e.g. "clippy", keeps builds with other flags apart too).
module_dir() {
	local v="${MODULE_VARIANT:+-$MODULE_VARIANT}"
	if [ -n "${KDIR:-}" ]; then
		echo "$REPO/build/kdir-$(echo "$KDIR" | sha256sum | cut -c1-12)$v/module"
	else
		echo "$REPO/build/$KERNEL-$1$v/module"
	fi
}

# Copies the module's sources (Kbuild, src/, include/ of $MODULE_SRC, default
# the repository) into build directory $1, leaving its build products
# (--delete drops only stale sources).
#
# Kbuild's dependency files name the sources a build read, each in
# $(wildcard ...): a source added, removed or renamed since leaves them
# satisfied, so a change of the list of sources alone (a file moved into a
# folder) would leave the module as it was. When the list differs from the
# last build's, the build's objects go first.
sync_module_sources() { # dest
	local from="${MODULE_SRC:-$REPO}" list
	list=$(cd "$from" && find Kbuild src include -type f ! -name '*.o' ! -name '.*' | LC_ALL=C sort | sha256sum | cut -c1-16)
	if [ -d "$1" ] && [ "$(cat "$1/.dmn-sources" 2>/dev/null)" != "$list" ]; then
		find "$1" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' \) -delete
	fi
	mkdir -p "$1"
	rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
		--exclude='.*.cmd' --exclude='.*.d' --exclude='Module.symvers' --exclude='modules.order' \
		--exclude='bindings_generated.rs' --exclude='*.rmeta' \
		"$from/Kbuild" "$from/src" "$from/include" "$1/"
	echo "$list" >"$1/.dmn-sources"
}

# This machine's TSC rate in kHz (scripts/host-tsc-khz.c, built once into
# the cache), for guests that should keep time with the TSC (VM_CLOCK=tsc).
host_tsc_khz() {
	local src="$REPO/scripts/host-tsc-khz.c" bin
	bin="$CACHE/guest-tools/host-tsc-khz-$(sha256sum "$src" | cut -c1-12)"
	# (Built under a name of this process's own: scripts/vm-pair starts two
	# guests at once, and on a bare cache both build it.)
	if [ ! -x "$bin" ]; then
		mkdir -p "$CACHE/guest-tools" &&
			gcc -O2 -o "$bin.$$.tmp" "$src" && mv -f "$bin.$$.tmp" "$bin" || return 1
	fi
	"$bin"
}
