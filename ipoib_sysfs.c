// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs attributes of ibN that tools written for the in-tree driver use:
 * mode ("datagram" / "connected").
 */
#include <linux/capability.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "ipoib.h"

static ssize_t mode_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	struct ipoib_dev *priv = ipoib_priv(to_net_dev(d));

	return sysfs_emit(buf, "%s\n", priv->mode == IPOIB_MODE_CONNECTED ?
			  "connected" : "datagram");
}

static ssize_t mode_store(struct device *d, struct device_attribute *attr,
			  const char *buf, size_t count)
{
	struct net_device *dev = to_net_dev(d);
	u16 mode;
	int ret;

	if (!ns_capable(dev_net(dev)->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	if (sysfs_streq(buf, "connected"))
		mode = IPOIB_MODE_CONNECTED;
	else if (sysfs_streq(buf, "datagram"))
		mode = IPOIB_MODE_DATAGRAM;
	else
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	ret = ipoib_set_mode(ipoib_priv(dev), mode);
	rtnl_unlock();
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(mode);

static struct attribute *ipoib_attrs[] = {
	&dev_attr_mode.attr,
	NULL,
};

const struct attribute_group ipoib_attr_group = {
	.attrs = ipoib_attrs,
};
