#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Planted for tools/vm/selftest.sh (batch case): a test of one guest,
# whose leaves are its own ("A: DESC"): a pass, a skip, a failure.
GUESTS=1
VM_TIMEOUT=60
. "$(dirname "$0")/../../../selftests/lib.sh"

check "one guest: passes" true
skip "one guest: skipped" planted
check "one guest: fails" false
finish
