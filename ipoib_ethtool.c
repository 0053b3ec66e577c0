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

static const struct ethtool_ops ipoib_ethtool_ops = {
	.get_drvinfo	= ipoib_get_drvinfo,
	.get_link	= ethtool_op_get_link,
};

void ipoib_set_ethtool_ops(struct net_device *dev)
{
	dev->ethtool_ops = &ipoib_ethtool_ops;
}
