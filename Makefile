# SPDX-License-Identifier: GPL-2.0
# devmemnic: project targets. Kbuild (the module build) is in ./Kbuild.
#
#   make              build devmemnic.ko against $(KDIR) (default: the cached test kernel)
#   make CLIPPY=1     the same, with clippy
#   make bootstrap    install what is missing and build the cached test kernel
#   make check        every test; ends with "N passed, N failed"
#   make demo         bootstrap, build, boot QEMU, load the module, show what it made
#   make bench        perf kernel, devmem vs copy/discard/veth receive (build/bench/)
#   make vm-run SCRIPT=file [FILES="a b"]   run a script as root in the guest
#   make fmt          rustfmt the module's sources

LLVM_BIN := /usr/lib/llvm-19/bin
export PATH := $(LLVM_BIN):$(HOME)/.cargo/bin:$(PATH)
KDIR ?= $(shell scripts/kdir test)
RUST_SRCS = $(filter-out src/bindings_generated.rs,$(wildcard src/*.rs src/*/*.rs))

TOOLS_TARGET := x86_64-unknown-linux-gnu
TOOLS_BIN := tools/target/$(TOOLS_TARGET)/release

.PHONY: all module tools bootstrap check demo bench vm-run fmt fmt-check clean

all: module tools

# Guest tools: static binaries (glibc, crt-static), copied into the QEMU image.
tools:
	cd tools && RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --target $(TOOLS_TARGET) -p dmn-xfer -p ncdevmem-rs

module:
	@test -f $(KDIR)/Makefile || { echo "no kernel build at KDIR=$(KDIR): run 'make bootstrap' or set KDIR"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=1 $(if $(CLIPPY),CLIPPY=1) modules

bootstrap:
	scripts/bootstrap test

check:
	scripts/check

demo:
	scripts/demo

bench:
	scripts/bench

vm-run:
	@test -n "$(SCRIPT)" || { echo "usage: make vm-run SCRIPT=file [FILES=\"a b ...\"]"; exit 2; }
	scripts/vm-run "$(SCRIPT)" $(FILES)

fmt:
	rustfmt --edition 2021 --config-path $(KDIR)/source/.rustfmt.toml $(RUST_SRCS)

fmt-check:
	rustfmt --check --edition 2021 --config-path $(KDIR)/source/.rustfmt.toml $(RUST_SRCS)

clean:
	@test -f $(KDIR)/Makefile && $(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=1 clean || true
	rm -rf build tools/target
