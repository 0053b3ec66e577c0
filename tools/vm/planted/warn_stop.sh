#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Planted for tools/vm/selftest.sh (batch case): a kernel warning under
# panic_on_warn in B, as the harness sees one: the WARNING line in the
# kernel log (written to /dev/kmsg, as smoke.sh's SMOKE_FAIL=warn does),
# then the panic that stops the guest (sysrq c; the Debian kernels have
# no module that warns on demand). A waits for B at the end and gives
# up when run.sh raises the abort flag. The test fails once, the tests
# after it do not run.
GUESTS=2
VM_TIMEOUT=60
. "$(dirname "$0")/../../../selftests/lib.sh"

check "every guest: before the warning" true
if [ "$ROLE" = B ]; then
	echo "WARNING: CPU: 0 PID: $$ at planted.c:1 planted_warn+0x0/0x1" >/dev/kmsg
	echo c >/proc/sysrq-trigger
fi
barrier end
finish
