// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE fabric: no subnet manager and no SA. The port's GIDs are IP
 * addresses of an Ethernet netdev (the underlay); paths come from IP
 * neighbour resolution and multicast is a local attach plus an IPv6 group
 * join on the underlay.
 */
#include <rdma/ib_cache.h>

#include "ipoib.h"

static const char *ipoib_roce_version(enum ib_gid_type type)
{
	switch (type) {
	case IB_GID_TYPE_ROCE:
		return "v1";
	case IB_GID_TYPE_ROCE_UDP_ENCAP:
		return "v2";
	default:
		return NULL;
	}
}

/*
 * Our hardware address carries GID index 0, so that GID must be a RoCE GID
 * with a netdev behind it: that netdev is where the traffic flows.
 */
static int ipoib_roce_port_check(struct ipoib_dev *priv)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	int ret = 0;

	attr = rdma_get_gid_attr(priv->ca, priv->port, 0);
	if (IS_ERR(attr)) {
		dev_warn(&priv->ca->dev, "port %u: no GID at index 0 (%pe)\n",
			 priv->port, attr);
		return PTR_ERR(attr);
	}
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (IS_ERR(ndev) || !ipoib_roce_version(attr->gid_type)) {
		dev_warn(&priv->ca->dev,
			 "port %u: GID 0 is not a RoCE GID of a netdev\n",
			 priv->port);
		ret = -ENODEV;
	}
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	return ret;
}

static void ipoib_roce_describe(struct ipoib_dev *priv, char *buf, size_t len)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	const char *ver;

	attr = rdma_get_gid_attr(priv->ca, priv->port, 0);
	if (IS_ERR(attr)) {
		snprintf(buf, len, "RoCE");
		return;
	}
	ver = ipoib_roce_version(attr->gid_type);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	snprintf(buf, len, "RoCE %s over %s", ver ? ver : "?",
		 IS_ERR(ndev) ? "?" : ndev->name);
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
}

const struct ipoib_fabric_ops ipoib_fabric_roce = {
	.name		= "roce",
	.port_check	= ipoib_roce_port_check,
	.describe	= ipoib_roce_describe,
};
