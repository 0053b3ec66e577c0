// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs attributes of ibN that tools written for the in-tree driver use:
 * mode ("datagram" / "connected"), umcast, pkey; create_child and
 * delete_child on a port's interface, parent on a child. Every write
 * needs CAP_NET_ADMIN in the interface's network namespace.
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

static bool ipoib_may_change(struct net_device *dev)
{
	return ns_capable(dev_net(dev)->user_ns, CAP_NET_ADMIN);
}

static ssize_t mode_store(struct device *d, struct device_attribute *attr,
			  const char *buf, size_t count)
{
	struct net_device *dev = to_net_dev(d);
	u16 mode;
	int ret;

	if (!ipoib_may_change(dev))
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

static ssize_t umcast_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(ipoib_priv(to_net_dev(d))->umcast));
}

static ssize_t umcast_store(struct device *d, struct device_attribute *attr,
			    const char *buf, size_t count)
{
	struct net_device *dev = to_net_dev(d);
	int on;

	if (!ipoib_may_change(dev))
		return -EPERM;
	if (kstrtoint(buf, 0, &on))
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	ipoib_set_umcast(ipoib_priv(dev), on);
	rtnl_unlock();
	return count;
}
static DEVICE_ATTR_RW(umcast);

static ssize_t pkey_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "0x%04x\n", ipoib_priv(to_net_dev(d))->pkey);
}
static DEVICE_ATTR_RO(pkey);

static ssize_t parent_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	struct ipoib_dev *priv = ipoib_priv(to_net_dev(d));

	return sysfs_emit(buf, "%s\n", priv->parent->dev->name);
}
static DEVICE_ATTR_RO(parent);

/* A P_Key as the in-tree driver reads it: any base, 1..0xffff, not 0x8000 */
static int ipoib_parse_pkey(const char *buf, u16 *pkey)
{
	unsigned int v;

	if (kstrtouint(buf, 0, &v) || v > 0xffff || !ipoib_pkey_valid(v))
		return -EINVAL;
	*pkey = v;
	return 0;
}

static ssize_t ipoib_child_store(struct device *d, const char *buf,
				 size_t count, bool create)
{
	struct net_device *dev = to_net_dev(d);
	struct ipoib_dev *priv = ipoib_priv(dev);
	u16 pkey;
	int ret;

	if (!ipoib_may_change(dev))
		return -EPERM;
	ret = ipoib_parse_pkey(buf, &pkey);
	if (ret)
		return ret;
	/* the child's sysfs files are not ours: unregistering it here is safe */
	if (!rtnl_trylock())
		return restart_syscall();
	ret = create ? ipoib_child_create(priv, pkey) :
		       ipoib_child_delete(priv, pkey);
	rtnl_unlock();
	if (ret && net_ratelimit())
		netdev_info(dev, "%s_child 0x%04x: %s\n",
			    create ? "create" : "delete", pkey,
			    ret == -ENOTUNIQ ? "P_Key in use here or by a sysfs child" :
			    ret == -ENODEV ? "no sysfs child with that P_Key" :
			    "failed (see above)");
	return ret ? ret : count;
}

static ssize_t create_child_store(struct device *d,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	return ipoib_child_store(d, buf, count, true);
}
static DEVICE_ATTR_WO(create_child);

static ssize_t delete_child_store(struct device *d,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	return ipoib_child_store(d, buf, count, false);
}
static DEVICE_ATTR_WO(delete_child);

static struct attribute *ipoib_attrs[] = {
	&dev_attr_mode.attr,
	&dev_attr_umcast.attr,
	&dev_attr_pkey.attr,
	&dev_attr_parent.attr,
	&dev_attr_create_child.attr,
	&dev_attr_delete_child.attr,
	NULL,
};

/* parent on children only; create_child and delete_child on parents */
static umode_t ipoib_attr_visible(struct kobject *kobj, struct attribute *a,
				  int n)
{
	struct ipoib_dev *priv = ipoib_priv(to_net_dev(kobj_to_dev(kobj)));

	if (a == &dev_attr_parent.attr)
		return priv->parent ? a->mode : 0;
	if (a == &dev_attr_create_child.attr ||
	    a == &dev_attr_delete_child.attr)
		return priv->parent ? 0 : a->mode;
	return a->mode;
}

const struct attribute_group ipoib_attr_group = {
	.attrs = ipoib_attrs,
	.is_visible = ipoib_attr_visible,
};
