# SPDX-License-Identifier: GPL-2.0-or-later
#
# mfr: per-memfd memory-failure recovery for HugeTLB memfds.
#
#   make demo              boot the patched kernel in a VM and show mfr working
#   make test              unit tests and the VM suite; ends "N passed, N failed"
#   make vm-run CMD='...'  run CMD as root in a VM with mfr.ko loaded
#   make kernel | module | helpers | daemon | checkpatch | ynl-regen | clean

SHELL := /bin/bash
CACHE_ENV := $(if $(MFR_CACHE),MFR_CACHE=$(MFR_CACHE))
# The kernel build directory for the current series and config (cached).
KDIR = $(shell scripts/build-kernel.sh)
CFLAGS_HELPERS := -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE

HELPERS := $(patsubst tests/helpers/%.c,build/helpers/%,$(wildcard tests/helpers/*.c))

.PHONY: all deps kernel module helpers daemon vm-run test test-peer demo checkpatch ynl-regen clean

all: module helpers daemon

deps:
	scripts/install-deps.sh

kernel: deps
	scripts/build-kernel.sh

module: kernel
	$(MAKE) -C module KDIR=$(KDIR)

helpers: $(HELPERS)

# mfrctl (the daemon/ directory's own Makefile, objects in build/daemon)
daemon: deps
	$(MAKE) -C daemon

build/helpers/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_HELPERS) -o $@ $< -lpthread

vm-run: module helpers
	@test -n "$(CMD)" || { echo "usage: make vm-run CMD='command'" >&2; exit 2; }
	scripts/vm-run.sh '$(subst ','\'',$(CMD))'

test: module helpers daemon
	tests/run

# Peer suites (kernel selftests) against the same kernel without the
# series: builds a second kernel, so it is not part of "make test".
test-peer: module helpers
	tests/peer/compare.sh

demo: module helpers
	scripts/vm-run.sh "$(CURDIR)/scripts/demo.sh"

checkpatch: kernel
	scripts/checkpatch.sh

ynl-regen: deps
	$(PYTHON_BIN) scripts/ynl-regen.py --ksrc "$$(scripts/build-kernel.sh --prepare-only)"

clean:
	rm -rf build
	rm -f module/*.o module/*.ko module/*.mod* module/.*.cmd module/Module.symvers module/modules.order

PYTHON_BIN ?= /usr/bin/python3
