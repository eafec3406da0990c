# SPDX-License-Identifier: GPL-2.0
# devmemnic: project targets. Kbuild (the module build) is in ./Kbuild.
#
#   make [KERNEL=6.12|7.2|7.3]  build devmemnic.ko for the cached test kernel
#                            (build/<kernel>-test/module/devmemnic.ko) and the tools
#   make module KERNEL=stock-7.3   devmemnic.ko for Debian's stock 7.3 (trixie-
#                            backports) or stock-7.2 (sid), no kernel build
#                            (build/stock-7.x-test/module/); every target below
#                            takes KERNEL=stock-7.2|stock-7.3 too
#   make KDIR=/path          the module against another built kernel tree
#   make CLIPPY=1            the same, with clippy
#   make bootstrap           install what is missing and build the cached kernel
#   make check               every test: self-built 6.12 and 7.3, stock 7.2 and 7.3;
#                            ends with "N passed, N failed"
#   make stress              the long hardening loops in full (6.12 and 7.3 unless
#                            KERNEL=... names one)
#   make demo                bootstrap, build, boot QEMU, load the module, show what it made
#   make selftests           upstream's driver selftests, unmodified, on devmemnic
#                            (6.12, stock-7.2, stock-7.3 unless KERNEL=... names one)
#   make bench               perf kernel, devmem vs copy/discard/veth receive (build/bench/)
#   make vm-run SCRIPT=file [FILES="a b"]   run a script as root in the guest
#   make deb                 the DKMS package (build/deb/devmemnic-dkms_<version>_all.deb)
#   make dkms-test KERNEL=stock-7.3   install that package as a user would, in a
#                            throwaway copy of the suite's chroot, and boot its module
#   make fmt                 rustfmt the module's sources

KERNEL ?= 6.12
export KERNEL
LLVM_BIN := /usr/lib/llvm-19/bin
export PATH := $(LLVM_BIN):$(HOME)/.cargo/bin:$(PATH)
ifdef KDIR
export KDIR
endif
RUST_SRCS = $(filter-out src/bindings_generated.rs,$(shell find src -name '*.rs'))
# rustfmt's configuration: the kernel's own (identical in 6.12, 7.2 and 7.3).
RUSTFMT_TOML = $(or $(KDIR),$(shell scripts/kdir test))/source/.rustfmt.toml

TOOLS_TARGET := x86_64-unknown-linux-gnu
TOOLS_BIN := tools/target/$(TOOLS_TARGET)/release

.PHONY: all module tools bootstrap check stress selftests demo bench vm-run vm-pair deb dkms-test fmt fmt-check clean

all: module tools

# Guest tools: static binaries (glibc, crt-static), copied into the QEMU image.
tools:
	cd tools && RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --target $(TOOLS_TARGET) -p dmn-xfer -p ncdevmem-rs -p dmnic-link

# A stock kernel (KERNEL=stock-7.x) builds in a chroot of its suite, against
# its headers with the Rust metadata rebuilt (scripts/stock-kernel).
module:
ifneq ($(filter stock-%,$(KERNEL)),)
	@$(if $(CLIPPY),MODULE_VARIANT=clippy )scripts/stock-kernel module $(if $(CLIPPY),CLIPPY=1) >/dev/null
else
	@$(if $(CLIPPY),MODULE_VARIANT=clippy )scripts/build-module test $(if $(CLIPPY),CLIPPY=1) >/dev/null
endif

bootstrap:
	scripts/bootstrap test

check:
	scripts/check

# Both kernels unless KERNEL was given.
stress:
	STRESS_KERNELS="$(if $(filter command line environment,$(origin KERNEL)),$(KERNEL),6.12 7.3)" scripts/stress

# The kernels of make check's selftests lanes unless KERNEL was given.
selftests:
	SELFTESTS_KERNELS="$(if $(filter command line environment,$(origin KERNEL)),$(KERNEL),6.12 stock-7.2 stock-7.3)" TOPOLOGY="$(TOPOLOGY)" scripts/selftests

demo:
	scripts/demo

bench:
	$(if $(filter two-vm,$(TOPOLOGY)),scripts/bench-wire,scripts/bench)

deb:
	@scripts/dkms-deb

dkms-test:
	scripts/dkms-test

# Builds what the guest needs first (kernel, module, tools).
vm-run:
	@test -n "$(SCRIPT)" || { echo "usage: make vm-run SCRIPT=file [FILES=\"a b ...\"] [KERNEL=6.12|7.2|stock-7.2|stock-7.3]"; exit 2; }
	@$(if $(KDIR)$(filter stock-%,$(KERNEL)),,scripts/bootstrap test)
	@$(MAKE) --no-print-directory tools
	ko=$$($(if $(filter stock-%,$(KERNEL)),scripts/stock-kernel module,scripts/build-module test)) && \
		VM_KO=$$ko scripts/vm-run "$(SCRIPT)" $(FILES)

# Two guests on a wire (scripts/vm-pair), each kernel's module built first.
vm-pair:
	@test -n "$(SCRIPT_A)" -a -n "$(SCRIPT_B)" || { echo "usage: make vm-pair SCRIPT_A=file SCRIPT_B=file [FILES=\"a b ...\"] [KERNEL_A=stock-7.2] [KERNEL_B=stock-7.3]"; exit 2; }
	@$(MAKE) --no-print-directory tools
	scripts/vm-pair "$(SCRIPT_A)" "$(SCRIPT_B)" $(FILES)

fmt:
	rustfmt --edition 2021 --config-path $(RUSTFMT_TOML) $(RUST_SRCS)

fmt-check:
	rustfmt --check --edition 2021 --config-path $(RUSTFMT_TOML) $(RUST_SRCS)

clean:
	rm -rf build tools/target
