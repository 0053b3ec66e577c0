// SPDX-License-Identifier: GPL-2.0
/*
 * rtnl link kind "ipoib": `ip link add link ibX name ibX.8001 type ipoib
 * pkey 0x8001 mode connected umcast 1`, changed with `ip link set ...
 * type ipoib`, shown by `ip -d link show`. rtnl children, unlike sysfs
 * ones, may share a P_Key (several interfaces on one partition).
 */
#include <linux/netdevice.h>
#include <linux/if_link.h>
#include <net/rtnetlink.h>

#include "ipoib.h"

static const struct nla_policy ipoib_nl_policy[IFLA_IPOIB_MAX + 1] = {
	[IFLA_IPOIB_PKEY]	= { .type = NLA_U16 },
	[IFLA_IPOIB_MODE]	= { .type = NLA_U16 },
	[IFLA_IPOIB_UMCAST]	= { .type = NLA_U16 },
};

static int ipoib_nl_validate(struct nlattr *tb[], struct nlattr *data[],
			     struct netlink_ext_ack *extack)
{
	/* one send ring, one queue to stop and wake */
	if ((tb[IFLA_NUM_TX_QUEUES] && nla_get_u32(tb[IFLA_NUM_TX_QUEUES]) != 1) ||
	    (tb[IFLA_NUM_RX_QUEUES] && nla_get_u32(tb[IFLA_NUM_RX_QUEUES]) != 1)) {
		NL_SET_ERR_MSG(extack, "an IPoIB link has one transmit and one receive queue");
		return -EINVAL;
	}
	if (!data)
		return 0;
	if (data[IFLA_IPOIB_PKEY] &&
	    !ipoib_pkey_valid(nla_get_u16(data[IFLA_IPOIB_PKEY]))) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_PKEY],
				    "P_Key 0x0000 and 0x8000 name no partition");
		return -EINVAL;
	}
	if (data[IFLA_IPOIB_MODE] &&
	    nla_get_u16(data[IFLA_IPOIB_MODE]) > IPOIB_MODE_CONNECTED) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_MODE],
				    "mode is datagram (0) or connected (1)");
		return -EINVAL;
	}
	return 0;
}

static int ipoib_nl_changelink(struct net_device *dev, struct nlattr *tb[],
			       struct nlattr *data[],
			       struct netlink_ext_ack *extack)
{
	struct ipoib_dev *priv = ipoib_priv(dev);
	int ret;

	if (!data)
		return 0;
	/* the P_Key names the link (its MGIDs, its QP's P_Key index) */
	if (data[IFLA_IPOIB_PKEY] &&
	    ipoib_pkey_full(nla_get_u16(data[IFLA_IPOIB_PKEY])) != priv->pkey) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_PKEY],
				    "the P_Key of an IPoIB link cannot change: delete it and add a new one");
		return -EOPNOTSUPP;
	}
	if (data[IFLA_IPOIB_MODE]) {
		ret = ipoib_set_mode(priv, nla_get_u16(data[IFLA_IPOIB_MODE]));
		if (ret) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_MODE],
					    "connected mode is unavailable on this device (see dmesg)");
			return ret;
		}
	}
	if (data[IFLA_IPOIB_UMCAST])
		ipoib_set_umcast(priv, nla_get_u16(data[IFLA_IPOIB_UMCAST]));
	return 0;
}

static int ipoib_nl_newlink(struct net *src_net, struct net_device *dev,
			    struct nlattr *tb[], struct nlattr *data[],
			    struct netlink_ext_ack *extack)
{
	struct net_device *pdev;
	struct ipoib_dev *ppriv;
	u16 pkey;
	int ret;

	if (!tb[IFLA_LINK]) {
		NL_SET_ERR_MSG(extack, "an IPoIB child needs its parent: ip link add link ibX ...");
		return -EINVAL;
	}
	pdev = __dev_get_by_index(src_net, nla_get_u32(tb[IFLA_LINK]));
	if (!pdev) {
		NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_LINK], "no such parent");
		return -ENODEV;
	}
	if (!ipoib_is_ipoib(pdev)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_LINK],
				    "the parent is not an IPoIB interface");
		return -EINVAL;
	}
	ppriv = ipoib_priv(pdev);
	if (ppriv->parent) {
		NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_LINK],
				    "the parent is a child itself: children hang off a port's interface");
		return -EINVAL;
	}
	pkey = data && data[IFLA_IPOIB_PKEY] ?
	       nla_get_u16(data[IFLA_IPOIB_PKEY]) : ppriv->pkey;
	ret = ipoib_child_add(ppriv, dev, pkey, false);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot set up the child (see dmesg)");
		return ret;
	}
	ret = ipoib_nl_changelink(dev, tb, data, extack);
	if (ret)
		/* rtnl's free_netdev() waits for the unregistration */
		unregister_netdevice(dev);
	return ret;
}

/* Only children go; a port's interface goes with its RDMA device. */
static void ipoib_nl_dellink(struct net_device *dev, struct list_head *head)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	if (!priv->parent) {
		if (net_ratelimit())
			netdev_info(dev, "not deleted: the interface of %s port %u goes with the device\n",
				    dev_name(&priv->ca->dev), priv->port);
		return;
	}
	unregister_netdevice_queue(dev, head);
}

/* a child's IFLA_LINK (its parent) lives in the parent's namespace */
static struct net *ipoib_nl_get_link_net(const struct net_device *dev)
{
	const struct ipoib_dev *priv = ipoib_priv(dev);

	return dev_net(priv->parent ? priv->parent->dev : dev);
}

static size_t ipoib_nl_get_size(const struct net_device *dev)
{
	return 3 * nla_total_size(sizeof(u16));	/* pkey, mode, umcast */
}

static int ipoib_nl_fill_info(struct sk_buff *skb,
			      const struct net_device *dev)
{
	const struct ipoib_dev *priv = ipoib_priv(dev);

	if (nla_put_u16(skb, IFLA_IPOIB_PKEY, priv->pkey) ||
	    nla_put_u16(skb, IFLA_IPOIB_MODE, priv->mode) ||
	    nla_put_u16(skb, IFLA_IPOIB_UMCAST, priv->umcast))
		return -EMSGSIZE;
	return 0;
}

struct rtnl_link_ops ipoib_link_ops __read_mostly = {
	.kind		= "ipoib",
	/* a namespace that dies hands our interfaces back to init_net */
	.netns_refund	= true,
	.maxtype	= IFLA_IPOIB_MAX,
	.policy		= ipoib_nl_policy,
	.priv_size	= sizeof(struct ipoib_dev),
	.setup		= ipoib_setup,
	.validate	= ipoib_nl_validate,
	.newlink	= ipoib_nl_newlink,
	.changelink	= ipoib_nl_changelink,
	.dellink	= ipoib_nl_dellink,
	.get_size	= ipoib_nl_get_size,
	.fill_info	= ipoib_nl_fill_info,
	.get_link_net	= ipoib_nl_get_link_net,
};

int ipoib_netlink_init(void)
{
	return rtnl_link_register(&ipoib_link_ops);
}

void ipoib_netlink_exit(void)
{
	rtnl_link_unregister(&ipoib_link_ops);
}

MODULE_ALIAS_RTNL_LINK("ipoib");
