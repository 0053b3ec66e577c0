// SPDX-License-Identifier: GPL-2.0
/* The one instance of ib_ipoib's tracepoints (ipoib_trace.h). */
#define CREATE_TRACE_POINTS
#include "ipoib_trace.h"
