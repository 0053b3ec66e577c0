// SPDX-License-Identifier: GPL-2.0
/*
 * Telling peers our link-layer address. It holds our UD QPN, which changes
 * whenever the interface is created again (RFC 4391 s9.4), so peers may
 * cache a stale one and send into nothing: no reply and no error tells
 * them. A gratuitous ARP and unsolicited neighbour advertisements update
 * their caches at once. We send them when the carrier comes on, when GID 0
 * changes and when an address is added while the carrier is on (network
 * managers add addresses once they see carrier, and an announcement sent
 * before carries none). The kernel skips IPv6 addresses still in DAD,
 * hence the repeats.
 */
#include <linux/inetdevice.h>
#include <net/addrconf.h>

#include "ipoib.h"

static void ipoib_announce_send(struct ipoib_dev *priv)
{
	__netdev_notify_peers(priv->dev);
	if (priv->announce_left) {
		priv->announce_left--;
		ipoib_rtnl_work_queue(priv, &priv->announce_work,
				      IPOIB_ANNOUNCE_GAP);
	}
}

/* Under RTNL, carrier on: announce now and IPOIB_ANNOUNCE_REPEAT times more. */
void ipoib_announce(struct ipoib_dev *priv)
{
	priv->announce_left = IPOIB_ANNOUNCE_REPEAT;
	ipoib_announce_send(priv);
}

static void ipoib_announce_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      announce_work.work);
	bool added;

	if (!ipoib_rtnl_work_begin(priv))
		return;
	/* an address added while down is announced with the carrier */
	added = test_and_clear_bit(IPOIB_FLAG_ADDR_NEW, &priv->flags);
	if (netif_running(priv->dev) && netif_carrier_ok(priv->dev)) {
		if (added)
			priv->announce_left = IPOIB_ANNOUNCE_REPEAT;
		ipoib_announce_send(priv);
	}
	ipoib_rtnl_work_end(priv);
}

void ipoib_announce_init(struct ipoib_dev *priv)
{
	INIT_DELAYED_WORK(&priv->announce_work, ipoib_announce_work);
}

/* Any context: IPv6's address notifier chain is atomic. */
static void ipoib_addr_added(struct net_device *dev)
{
	struct ipoib_dev *priv;

	if (!ipoib_is_ipoib(dev))
		return;
	priv = ipoib_priv(dev);
	set_bit(IPOIB_FLAG_ADDR_NEW, &priv->flags);
	ipoib_rtnl_work_queue(priv, &priv->announce_work, 0);
}

static int ipoib_inetaddr_event(struct notifier_block *nb,
				unsigned long event, void *ptr)
{
	struct in_ifaddr *ifa = ptr;

	if (event == NETDEV_UP)
		ipoib_addr_added(ifa->ifa_dev->dev);
	return NOTIFY_DONE;
}

static struct notifier_block ipoib_inetaddr_notifier = {
	.notifier_call = ipoib_inetaddr_event,
};

#if IS_ENABLED(CONFIG_IPV6)
static int ipoib_inet6addr_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	struct inet6_ifaddr *ifp = ptr;

	if (event == NETDEV_UP)
		ipoib_addr_added(ifp->idev->dev);
	return NOTIFY_DONE;
}

static struct notifier_block ipoib_inet6addr_notifier = {
	.notifier_call = ipoib_inet6addr_event,
};
#endif

int ipoib_announce_register(void)
{
	int ret = register_inetaddr_notifier(&ipoib_inetaddr_notifier);

#if IS_ENABLED(CONFIG_IPV6)
	if (!ret) {
		ret = register_inet6addr_notifier(&ipoib_inet6addr_notifier);
		if (ret)
			unregister_inetaddr_notifier(&ipoib_inetaddr_notifier);
	}
#endif
	return ret;
}

/* Before the interfaces go: no work is queued after this returns. */
void ipoib_announce_unregister(void)
{
#if IS_ENABLED(CONFIG_IPV6)
	unregister_inet6addr_notifier(&ipoib_inet6addr_notifier);
#endif
	unregister_inetaddr_notifier(&ipoib_inetaddr_notifier);
}
