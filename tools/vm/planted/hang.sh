#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Planted for tools/vm/selftest.sh (batch case): A never ends and is
# killed at the test's time limit; B ends at once. The boot goes on.
GUESTS=2
VM_TIMEOUT=5
. "$(dirname "$0")/../../../selftests/lib.sh"

check "every guest: before the hang" true
if [ "$ROLE" = A ]; then
	log "hanging"
	sleep 1000
fi
finish
