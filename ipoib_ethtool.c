// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool: driver identity, link, statistics, queue depths and receive
 * interrupt moderation (the CQs' moderation, where the device has it).
 */
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
	bool netdev;		/* in rtnl_link_stats64, else ipoib_counters */
	size_t offset;
};

#define IPOIB_NETDEV_STAT(m) \
	{ #m, true, offsetof(struct rtnl_link_stats64, m) }
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
	IPOIB_OWN_STAT(tx_no_carrier),
	IPOIB_OWN_STAT(tx_mcast_limit),
	IPOIB_OWN_STAT(mcast_sendonly_evicted),
	IPOIB_OWN_STAT(tx_bad_daddr),
	IPOIB_OWN_STAT(tx_too_big),
	IPOIB_OWN_STAT(tx_batched),
	IPOIB_OWN_STAT(restarts),
	IPOIB_OWN_STAT(path_resolutions),
	IPOIB_OWN_STAT(path_failures),
	IPOIB_OWN_STAT(mcast_joins),
	IPOIB_OWN_STAT(mcast_join_failures),
	IPOIB_OWN_STAT(mcast_sa_reports),
	IPOIB_OWN_STAT(cm_connections),
	IPOIB_OWN_STAT(cm_failures),
	IPOIB_OWN_STAT(cm_setup_expired),
	IPOIB_OWN_STAT(cm_no_room),
	IPOIB_OWN_STAT(cm_no_last_wqe),
	IPOIB_OWN_STAT(cm_rnr_failures),
	IPOIB_OWN_STAT(cm_tx_stalled),
	IPOIB_OWN_STAT(cm_peer_moved),
	IPOIB_OWN_STAT(cm_gid_stale),
	IPOIB_OWN_STAT(cm_crossed),
	IPOIB_OWN_STAT(cm_rx_misdirected),
	IPOIB_OWN_STAT(cm_bad_pdata),
	IPOIB_OWN_STAT(cm_rx_buffers),
	IPOIB_OWN_STAT(cm_tx_csum_pending),
	IPOIB_OWN_STAT(cm_rx_csum_pending),
	IPOIB_OWN_STAT(cm_rx_bad_csum_imm),
	IPOIB_OWN_STAT(tx_csum_sw),
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
	struct rtnl_link_stats64 s;
	unsigned int i;

	dev_get_stats(dev, &s);
	for (i = 0; i < ARRAY_SIZE(ipoib_stats); i++) {
		const struct ipoib_stat *st = &ipoib_stats[i];

		if (st->netdev)
			data[i] = *(u64 *)((u8 *)&s + st->offset);
		else
			data[i] = atomic_long_read((atomic_long_t *)
						   ((u8 *)&priv->counters +
						    st->offset));
	}
}

/* No negotiation: the port's (or RoCE's netdev's) speed, full duplex. */
static int ipoib_get_link_ksettings(struct net_device *dev,
				    struct ethtool_link_ksettings *ks)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ks->base.speed = netif_carrier_ok(dev) ?
			 priv->fabric->link_speed(priv) : SPEED_UNKNOWN;
	ks->base.duplex = ks->base.speed == SPEED_UNKNOWN ? DUPLEX_UNKNOWN :
							    DUPLEX_FULL;
	ks->base.port = PORT_OTHER;
	ks->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

/* The send_queue_size / recv_queue_size parameters, fixed at load time. */
static void ipoib_get_ringparam(struct net_device *dev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	ring->rx_max_pending = IPOIB_MAX_QUEUE_SIZE;
	ring->tx_max_pending = IPOIB_MAX_QUEUE_SIZE;
	ring->rx_pending = priv->recvq_size;
	ring->tx_pending = priv->sendq_size;
}

static int ipoib_get_coalesce(struct net_device *dev,
			      struct ethtool_coalesce *ec,
			      struct kernel_ethtool_coalesce *kec,
			      struct netlink_ext_ack *extack)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	ec->rx_coalesce_usecs = priv->rx_coal_usecs;
	ec->rx_max_coalesced_frames = priv->rx_coal_frames;
	return 0;
}

/* rx-usecs / rx-frames become the receive CQs' moderation (16 bits). */
static int ipoib_set_coalesce(struct net_device *dev,
			      struct ethtool_coalesce *ec,
			      struct kernel_ethtool_coalesce *kec,
			      struct netlink_ext_ack *extack)
{
	struct ipoib_dev *priv = ipoib_priv(dev);
	u16 usecs = ec->rx_coalesce_usecs, frames = ec->rx_max_coalesced_frames;
	int ret;

	if (ec->rx_coalesce_usecs > U16_MAX ||
	    ec->rx_max_coalesced_frames > U16_MAX) {
		NL_SET_ERR_MSG(extack, "rx-usecs and rx-frames go up to 65535");
		return -EINVAL;
	}
	ret = rdma_set_cq_moderation(priv->recv_cq, frames, usecs);
	if (!ret && priv->cm.recv_cq)
		ret = rdma_set_cq_moderation(priv->cm.recv_cq, frames, usecs);
	if (ret == -EOPNOTSUPP) {
		NL_SET_ERR_MSG(extack, "the RDMA device has no completion queue moderation");
		return ret;
	}
	if (ret) {
		NL_SET_ERR_MSG(extack, "the RDMA device refused the moderation");
		return ret;
	}
	priv->rx_coal_usecs = usecs;
	priv->rx_coal_frames = frames;
	return 0;
}

static const struct ethtool_ops ipoib_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_RX_USECS |
				     ETHTOOL_COALESCE_RX_MAX_FRAMES,
	.get_drvinfo		= ipoib_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= ipoib_get_link_ksettings,
	.get_ringparam		= ipoib_get_ringparam,
	.get_coalesce		= ipoib_get_coalesce,
	.set_coalesce		= ipoib_set_coalesce,
	.get_sset_count		= ipoib_get_sset_count,
	.get_strings		= ipoib_get_strings,
	.get_ethtool_stats	= ipoib_get_ethtool_stats,
};

void ipoib_set_ethtool_ops(struct net_device *dev)
{
	dev->ethtool_ops = &ipoib_ethtool_ops;
}
