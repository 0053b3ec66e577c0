# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of ib_ipoib against a Debian kernel's headers.
#   make                    build for KVER (default below)
#   make KVER=6.1.0-56-amd64
#   make modules_install    install into /lib/modules/KVER/updates + depmod
#   make lint | unit | fuzz | check | check-debug | coverage | demo | bench
#   make mutants [MUTANTS="03-qkey ..."]

KVERS_SUPPORTED := 6.12.117+deb12-amd64 6.1.0-56-amd64
KVER ?= $(firstword $(foreach k,$(KVERS_SUPPORTED),\
	$(if $(wildcard /lib/modules/$(k)/build/Makefile),$(k))) \
	6.12.117+deb12-amd64)
KDIR ?= /lib/modules/$(KVER)/build
TOP := $(CURDIR)
# TEST_HOOKS=1: the race selftests' build (ipoib_test.c), kept apart;
# GCOV=1: profiled for make coverage (a kernel with CONFIG_GCOV_KERNEL)
OBJDIR := $(TOP)/build/$(KVER)$(if $(TEST_HOOKS),-hooks)$(if $(GCOV),-gcov)
SRCS := $(wildcard $(TOP)/*.c $(TOP)/*.h) $(TOP)/Kbuild
W ?= 1
KMAKE = $(MAKE) -C $(KDIR) M=$(OBJDIR) W=$(W) $(if $(TEST_HOOKS),TEST_HOOKS=1) \
	$(if $(GCOV),IPOIB_GCOV=1)

.PHONY: all modules modules_install clean lint unit fuzz check check-debug coverage demo \
	bench mutants deps headers

all: modules

headers:
	@test -f $(KDIR)/Makefile || { \
		echo "No kernel headers for $(KVER) in $(KDIR)."; \
		echo "Install them: apt-get install linux-headers-$(KVER)"; \
		exit 1; }

# Each kernel gets its own object directory of links to the sources, so
# both kernels can be built from one checkout.
$(OBJDIR)/.links: $(SRCS) | headers
	@mkdir -p $(OBJDIR)
	@ln -sf $(SRCS) $(OBJDIR)/
	@touch $@

modules: $(OBJDIR)/.links
	+$(KMAKE) modules

modules_install: modules
	install -D -m 0644 $(OBJDIR)/ib_ipoib.ko \
		$(DESTDIR)/lib/modules/$(KVER)/updates/ib_ipoib.ko
	depmod $(if $(DESTDIR),-b $(DESTDIR)) -a $(KVER)

clean:
	rm -rf $(TOP)/build
	$(MAKE) -C selftests/unit clean

deps:
	@tools/deps.sh

lint: deps
	@tools/lint.sh

unit:
	$(MAKE) -C selftests/unit run

fuzz:
	$(MAKE) -C selftests/unit fuzz-run

check: deps
	@tools/check.sh

# The same VM selftests plus fault injection on a KASAN/lockdep/kmemleak
# kernel built from linux-source-6.12 (cached outside the checkout).
check-debug: deps
	@tools/check-debug.sh

# The mutation lane, not part of make check: the VM selftests against the
# deliberate defects of tools/mutants/ (all, or MUTANTS=): build/mutants/table.txt
mutants: deps
	@tools/mutants/run.sh $(MUTANTS)

# Line coverage of the VM selftests on that kernel (GCOV): build/coverage/
coverage: deps
	@tools/coverage.sh

demo: deps
	@tools/demo.sh

# Datagram-mode throughput in two guests (not a test): build/bench/result.txt
bench: deps
	@tools/bench/run.sh
