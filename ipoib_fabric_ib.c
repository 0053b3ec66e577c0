// SPDX-License-Identifier: GPL-2.0
/*
 * InfiniBand fabric: a subnet manager assigns LIDs and the subnet
 * administrator answers path and multicast-membership queries.
 */
#include <rdma/ib_sa.h>

#include "ipoib.h"

static int ipoib_ib_port_check(struct ipoib_dev *priv)
{
	/* RFC 4391 s5: the link is formed by SA joins of the broadcast group */
	if (!rdma_cap_ib_sa(priv->ca, priv->port) ||
	    !rdma_cap_ib_mcast(priv->ca, priv->port)) {
		dev_warn(&priv->ca->dev, "port %u: no SA or multicast support\n",
			 priv->port);
		return -EOPNOTSUPP;
	}
	return 0;
}

static void ipoib_ib_describe(struct ipoib_dev *priv, char *buf, size_t len)
{
	struct ib_port_attr attr;

	if (ib_query_port(priv->ca, priv->port, &attr)) {
		snprintf(buf, len, "InfiniBand");
		return;
	}
	snprintf(buf, len, "InfiniBand, LID 0x%x, SM LID 0x%x", attr.lid,
		 attr.sm_lid);
}

const struct ipoib_fabric_ops ipoib_fabric_ib = {
	.name		= "ib",
	.port_check	= ipoib_ib_port_check,
	.describe	= ipoib_ib_describe,
};
