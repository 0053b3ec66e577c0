#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Planted for tools/vm/selftest.sh (batch case): checks every guest makes
# (one leaf each), a check and a skip of one guest only (a leaf of that
# guest), a skip every guest makes (one skipped leaf) and one check made
# twice (two leaves).
GUESTS=2
VM_TIMEOUT=60
. "$(dirname "$0")/../../../selftests/lib.sh"

check "every guest: a check both make" true
[ "$ROLE" = B ] || check "A alone: a check of its own" true
skip "every guest: a skip both make" planted
[ "$ROLE" = A ] || skip "B alone: a skip of its own" planted
check "every guest: made twice" true
check "every guest: made twice" true
barrier end
finish
