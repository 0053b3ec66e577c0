#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Planted for tools/vm/selftest.sh (batch case): B fails a check and goes
# on without signalling; A's wait for it times out, which is A's own
# failure (a failed check does not end B's script): two failed leaves.
GUESTS=2
VM_TIMEOUT=60
. "$(dirname "$0")/../../../selftests/lib.sh"

if [ "$ROLE" = A ]; then
	wait_for B never 3
	signal waited
else
	check "B alone: fails, and goes on" false
	wait_for A waited 30
fi
finish
