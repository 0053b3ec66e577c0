#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Planted for tools/vm/selftest.sh (batch case): B exits non-zero without
# a failed check: the test's last leaf fails, once.
GUESTS=2
VM_TIMEOUT=60
. "$(dirname "$0")/../../../selftests/lib.sh"

check "every guest: exit status: passes" true
barrier end
[ "$ROLE" = B ] && exit 3
finish
