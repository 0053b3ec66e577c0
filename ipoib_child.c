// SPDX-License-Identifier: GPL-2.0
/*
 * P_Key children: ibX.PPPP interfaces on their parent's port, each with
 * its own UD QP and its own broadcast group (the P_Key is part of every
 * MGID, draft-ietf-ipoib-link-multicast s5-7), so each is its own IPoIB
 * link. Made by the parent's sysfs create_child ("legacy" children, one
 * per P_Key) or by rtnl (ipoib_netlink.c, which may share P_Keys).
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "ipoib.h"

/* The sysfs child of ppriv with (full-member) P_Key pkey, if any */
static struct ipoib_dev *ipoib_legacy_child(struct ipoib_dev *ppriv, u16 pkey)
{
	struct ipoib_dev *priv;

	list_for_each_entry(priv, &ppriv->hca->ports, hca_node)
		if (priv->parent == ppriv && priv->legacy_child &&
		    priv->pkey == pkey)
			return priv;
	return NULL;
}

/*
 * Under RTNL: set up and register dev (allocated with ipoib_setup) as a
 * child of ppriv. On failure the caller frees dev.
 */
int ipoib_child_add(struct ipoib_dev *ppriv, struct net_device *dev,
		    u16 pkey, bool legacy)
{
	struct ipoib_dev *priv = ipoib_priv(dev);
	int ret;

	ASSERT_RTNL();
	/* RFC 4391 s4.1: we are full members; 0x0000/0x8000 name nothing */
	if (!ipoib_pkey_valid(pkey))
		return -EINVAL;
	pkey = ipoib_pkey_full(pkey);
	if (ppriv->parent || ppriv->dev->reg_state != NETREG_REGISTERED)
		return -EOPNOTSUPP;
	/* sysfs children are named by P_Key: one per partition */
	if (legacy && (ppriv->pkey == pkey || ipoib_legacy_child(ppriv, pkey)))
		return -ENOTUNIQ;

	priv->parent = ppriv;
	priv->legacy_child = legacy;
	ret = ipoib_intf_prepare(priv, ppriv->hca, ppriv->port, ppriv->fabric,
				 pkey);
	if (ret)
		return ret;
	dev->dev_port = ppriv->dev->dev_port;
	dev->dev_id = ppriv->dev->dev_id;
	return ipoib_intf_register(priv);
}

/* sysfs create_child: ibX.PPPP in the parent's namespace (under RTNL) */
int ipoib_child_create(struct ipoib_dev *ppriv, u16 pkey)
{
	char name[IFNAMSIZ];
	struct net_device *dev;
	int ret;

	/* the in-tree driver's names: at most 10 characters of the parent's */
	BUILD_BUG_ON(IFNAMSIZ < 16);
	snprintf(name, sizeof(name), "%.10s.%04x", ppriv->dev->name, pkey);
	dev = alloc_netdev(sizeof(struct ipoib_dev), name, NET_NAME_UNKNOWN,
			   ipoib_setup);
	if (!dev)
		return -ENOMEM;
	dev_net_set(dev, dev_net(ppriv->dev));
	ret = ipoib_child_add(ppriv, dev, pkey, true);
	if (ret) {
		free_netdev(dev);
		return ret;
	}
	return 0;
}

/* sysfs delete_child: the sysfs child with that P_Key (under RTNL) */
int ipoib_child_delete(struct ipoib_dev *ppriv, u16 pkey)
{
	struct ipoib_dev *priv;

	ASSERT_RTNL();
	priv = ipoib_legacy_child(ppriv, ipoib_pkey_full(pkey));
	if (!priv)
		return -ENODEV;
	unregister_netdevice(priv->dev);
	return 0;
}
