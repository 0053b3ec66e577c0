// SPDX-License-Identifier: GPL-2.0
/* ethtool: driver identity and link state. */
#include <linux/ethtool.h>

#include "ipoib.h"

static void ipoib_get_drvinfo(struct net_device *dev,
			      struct ethtool_drvinfo *info)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	strscpy(info->driver, DRV_NAME, sizeof(info->driver));
	ib_get_device_fw_str(priv->ca, info->fw_version);
	strscpy(info->bus_info, dev_name(&priv->ca->dev),
		sizeof(info->bus_info));
}

struct ipoib_stat {
	char name[ETH_GSTRING_LEN];
	bool netdev;		/* in net_device_stats, else ipoib_counters */
	size_t offset;
};

#define IPOIB_NETDEV_STAT(m) \
	{ #m, true, offsetof(struct net_device_stats, m) }
#define IPOIB_OWN_STAT(m) \
	{ #m, false, offsetof(struct ipoib_counters, m) }

/* the in-tree driver's names first, then drops by reason */
static const struct ipoib_stat ipoib_stats[] = {
	IPOIB_NETDEV_STAT(rx_packets),
	IPOIB_NETDEV_STAT(tx_packets),
	IPOIB_NETDEV_STAT(rx_bytes),
	IPOIB_NETDEV_STAT(tx_bytes),
	IPOIB_NETDEV_STAT(tx_errors),
	IPOIB_NETDEV_STAT(rx_dropped),
	IPOIB_NETDEV_STAT(tx_dropped),
	IPOIB_NETDEV_STAT(multicast),
	IPOIB_OWN_STAT(rx_short),
	IPOIB_OWN_STAT(rx_bad_type),
	IPOIB_OWN_STAT(rx_own_mcast),
	IPOIB_OWN_STAT(rx_no_buf),
	IPOIB_OWN_STAT(tx_no_path),
	IPOIB_OWN_STAT(tx_mcast_limit),
	IPOIB_OWN_STAT(tx_bad_daddr),
	IPOIB_OWN_STAT(tx_too_big),
	IPOIB_OWN_STAT(path_resolutions),
	IPOIB_OWN_STAT(mcast_joins),
	IPOIB_OWN_STAT(cm_connections),
	IPOIB_OWN_STAT(cm_failures),
	IPOIB_OWN_STAT(cm_crossed),
	IPOIB_OWN_STAT(cm_rx_misdirected),
	IPOIB_OWN_STAT(cm_bad_pdata),
	IPOIB_OWN_STAT(cm_rx_buffers),
};

static int ipoib_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? ARRAY_SIZE(ipoib_stats) : -EOPNOTSUPP;
}

static void ipoib_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	unsigned int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < ARRAY_SIZE(ipoib_stats); i++)
		memcpy(data + i * ETH_GSTRING_LEN, ipoib_stats[i].name,
		       ETH_GSTRING_LEN);
}

static void ipoib_get_ethtool_stats(struct net_device *dev,
				    struct ethtool_stats *stats, u64 *data)
{
	struct ipoib_dev *priv = ipoib_priv(dev);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ipoib_stats); i++) {
		const struct ipoib_stat *st = &ipoib_stats[i];

		if (st->netdev)
			data[i] = *(unsigned long *)((u8 *)&dev->stats +
						     st->offset);
		else
			data[i] = atomic_long_read((atomic_long_t *)
						   ((u8 *)&priv->counters +
						    st->offset));
	}
}

static const struct ethtool_ops ipoib_ethtool_ops = {
	.get_drvinfo		= ipoib_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_sset_count		= ipoib_get_sset_count,
	.get_strings		= ipoib_get_strings,
	.get_ethtool_stats	= ipoib_get_ethtool_stats,
};

void ipoib_set_ethtool_ops(struct net_device *dev)
{
	dev->ethtool_ops = &ipoib_ethtool_ops;
}
