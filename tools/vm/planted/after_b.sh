#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Planted for tools/vm/selftest.sh (batch case): a test after warn_stop.sh
# in the same boot, which does not run.
GUESTS=2
VM_TIMEOUT=60
. "$(dirname "$0")/../../../selftests/lib.sh"

check "every guest: ran after the warning" true
finish
