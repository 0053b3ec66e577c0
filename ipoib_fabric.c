// SPDX-License-Identifier: GPL-2.0
/*
 * Choosing the fabric of a port: the only place that looks at the link
 * layer. Everything else asks priv->fabric.
 */
#include "ipoib.h"

const struct ipoib_fabric_ops *ipoib_fabric_for_port(struct ib_device *ca,
						     u32 port)
{
	if (rdma_protocol_ib(ca, port))
		return &ipoib_fabric_ib;
	if (rdma_protocol_roce(ca, port))
		return &ipoib_fabric_roce;
	/* iWARP has no UD QPs, so no IPoIB; OPA reports IB and is one here */
	return NULL;
}
