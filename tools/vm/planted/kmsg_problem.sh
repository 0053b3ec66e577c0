#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Planted for tools/vm/selftest.sh (batch case): a kernel problem that
# does not stop the guest (the form of a netdev whose references never
# drop), in B's kernel log during this test, written to /dev/kmsg as
# smoke.sh's SMOKE_FAIL=warn does. The test fails once; the boot goes on.
GUESTS=2
VM_TIMEOUT=60
. "$(dirname "$0")/../../../selftests/lib.sh"

check "every guest: passes" true
[ "$ROLE" = A ] ||
	echo "unregister_netdevice: waiting for planted0 to become free. Usage count = 2" >/dev/kmsg
barrier end
finish
