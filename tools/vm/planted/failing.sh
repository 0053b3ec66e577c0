#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Planted for tools/vm/selftest.sh (batch case): a check both guests make
# that B fails, once; B's exit status is that failure again.
GUESTS=2
VM_TIMEOUT=60
. "$(dirname "$0")/../../../selftests/lib.sh"

check "every guest: B fails it" test "$ROLE" = A
barrier end
finish
