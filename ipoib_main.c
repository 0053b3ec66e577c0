// SPDX-License-Identifier: GPL-2.0
/*
 * ib_ipoib: module entry, the RDMA client that finds ports, and the
 * ibN network devices on them.
 */
#include <linux/module.h>
#include <linux/if_arp.h>
#include <linux/log2.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/rtnetlink.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"

MODULE_AUTHOR("ib_ipoib developers");
MODULE_DESCRIPTION("IP over InfiniBand (RFC 4391, RFC 4755) on IB and RoCE ports");
MODULE_LICENSE("GPL");
/* dkms.conf's PACKAGE_VERSION (selftests/dkms.sh checks they agree) */
MODULE_VERSION("0.1");

unsigned int ipoib_sendq_size = 128;
unsigned int ipoib_recvq_size = 256;
int ipoib_debug_level;
int ipoib_mcast_debug_level;
int ipoib_data_debug_level;
int ipoib_cm_data_debug_level;
unsigned int ipoib_roce_qkey = IPOIB_DEFAULT_QKEY;
bool ipoib_cm_uc;
bool ipoib_cm_bidir = true;
bool ipoib_cm_srq = true;
unsigned int ipoib_max_nonsrq_conn_qp = IPOIB_CM_MAX_NONSRQ_DEFAULT;
bool ipoib_sendonly_nonmember;
unsigned int ipoib_max_sendonly = IPOIB_MAX_SENDONLY_DEFAULT;
int ipoib_tx_batch = -1;

module_param_named(send_queue_size, ipoib_sendq_size, uint, 0444);
MODULE_PARM_DESC(send_queue_size, "Entries in the send queue (power of 2, 2..8192)");
module_param_named(recv_queue_size, ipoib_recvq_size, uint, 0444);
MODULE_PARM_DESC(recv_queue_size, "Entries in the receive queue (power of 2, 2..8192)");
module_param_named(debug_level, ipoib_debug_level, int, 0644);
MODULE_PARM_DESC(debug_level, "Enable debug messages if > 0");
module_param_named(mcast_debug_level, ipoib_mcast_debug_level, int, 0644);
MODULE_PARM_DESC(mcast_debug_level, "Enable multicast debug messages if > 0");
module_param_named(data_debug_level, ipoib_data_debug_level, int, 0644);
MODULE_PARM_DESC(data_debug_level, "Enable debug messages for datagram-mode packets dropped if > 0");
module_param_named(cm_data_debug_level, ipoib_cm_data_debug_level, int, 0644);
MODULE_PARM_DESC(cm_data_debug_level, "Enable debug messages for connected-mode packets dropped if > 0");
module_param_named(cm_uc, ipoib_cm_uc, bool, 0444);
MODULE_PARM_DESC(cm_uc, "Connected mode: advertise UC and connect over UC to peers that do (default RC)");
module_param_named(cm_bidir, ipoib_cm_bidir, bool, 0444);
MODULE_PARM_DESC(cm_bidir, "Connected mode: one connection per peer, used both ways, with peers that say they do the same (default on); off: send only on connections we open, as the in-tree driver");
module_param_named(cm_srq, ipoib_cm_srq, bool, 0444);
MODULE_PARM_DESC(cm_srq, "Connected mode: receive through the HCA's shared receive queue when it has one (default on); off: a receive queue per connection");
module_param_named(max_nonsrq_conn_qp, ipoib_max_nonsrq_conn_qp, uint, 0444);
MODULE_PARM_DESC(max_nonsrq_conn_qp, "Connected mode without a shared receive queue: at most this many connections, each with recv_queue_size buffers of 64 KiB (default 128, at most 4096; 0: no connected mode there)");
module_param_named(tx_batch, ipoib_tx_batch, int, 0644);
MODULE_PARM_DESC(tx_batch, "Datagram mode: post the sends of a burst (xmit_more) with one doorbell: -1 where the device has a doorbell (hardware; default), 1 always, 0 never");
module_param_named(roce_qkey, ipoib_roce_qkey, uint, 0444);
MODULE_PARM_DESC(roce_qkey, "Q_Key on RoCE ports, where no SA assigns one (default 0x0b1b)");
/* Above the limit: the limit, said (a refusal would fail the module load) */
static int ipoib_max_sendonly_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n > IPOIB_MAX_SENDONLY_LIMIT) {
		pr_warn("ib_ipoib: max_sendonly %u lowered to %u\n", n,
			IPOIB_MAX_SENDONLY_LIMIT);
		n = IPOIB_MAX_SENDONLY_LIMIT;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static const struct kernel_param_ops ipoib_max_sendonly_ops = {
	.set = ipoib_max_sendonly_set,
	.get = param_get_uint,
};

module_param_cb(max_sendonly, &ipoib_max_sendonly_ops, &ipoib_max_sendonly,
		0644);
__MODULE_PARM_TYPE(max_sendonly, "uint");
MODULE_PARM_DESC(max_sendonly, "Send-only multicast groups per interface: at this many, the least recently used one is left for a new one (default 4096, at most 65536; 0: none, sends to groups not joined are dropped)");
module_param_named(sendonly_nonmember, ipoib_sendonly_nonmember, bool, 0444);
MODULE_PARM_DESC(sendonly_nonmember, "InfiniBand: send to a group only once a listener created it, joining as SendOnlyNonMember and following the SA's group reports (RFC 4391 s10); default off: SendOnlyFullMember, which creates the group");

/*
 * The stack hands us [pseudo header: destination][encapsulation header];
 * an incomplete header (no destination yet) is finished by the neighbour
 * layer, so report it as such.
 */
static int ipoib_hard_header(struct sk_buff *skb, struct net_device *dev,
			     unsigned short type, const void *daddr,
			     const void *saddr, unsigned int len)
{
	u8 *pseudo;

	ipoib_encap_pack(skb_push(skb, IPOIB_ENCAP_LEN), type);
	pseudo = skb_push(skb, IPOIB_PSEUDO_LEN);
	if (!daddr) {
		memset(pseudo, 0, IPOIB_PSEUDO_LEN);
		return -IPOIB_HARD_LEN;
	}
	memcpy(pseudo, daddr, IPOIB_PSEUDO_LEN);
	return IPOIB_HARD_LEN;
}

static const struct header_ops ipoib_header_ops = {
	.create	= ipoib_hard_header,
};

/*
 * RFC 4391 s9.1.1: UD QPN and port GID. RFC 4755 s3.1: RC is advertised
 * whenever we accept connections (whatever mode we send in); an interface
 * that cannot sends zero flags.
 */
static void ipoib_set_dev_addr(struct ipoib_dev *priv)
{
	struct ipoib_lladdr ll = {};
	u8 addr[IPOIB_ADDR_LEN];

	if (ipoib_cm_available(priv))
		ll.flags = IPOIB_FLAG_RC | (ipoib_cm_uc ? IPOIB_FLAG_UC : 0);
	ll.qpn = priv->qp->qp_num;
	memcpy(ll.gid, priv->local_gid.raw, sizeof(ll.gid));
	ipoib_lladdr_pack(addr, &ll);
	dev_addr_set(priv->dev, addr);
}

static int ipoib_ndo_init(struct net_device *dev)
{
	struct ipoib_dev *priv = ipoib_priv(dev);
	int ret;

	/* packets and bytes per CPU: NAPI and transmit share no line */
	dev->tstats = netdev_alloc_pcpu_stats(struct pcpu_sw_netstats);
	if (!dev->tstats)
		return -ENOMEM;
	priv->wq = alloc_ordered_workqueue("%s", WQ_MEM_RECLAIM, dev->name);
	if (!priv->wq) {
		ret = -ENOMEM;
		goto out_stats;
	}
	init_llist_head(&priv->dead_ahs);
	INIT_WORK(&priv->ah_reap_work, ipoib_ah_reap);
	ipoib_path_init(priv);
	ipoib_mcast_init(priv);
	ret = ipoib_ib_init(priv);
	if (ret)
		goto out_wq;
	ret = ipoib_cm_init(priv);
	if (ret)
		goto out_ib;

	ipoib_set_dev_addr(priv);
	refcount_inc(&priv->hca->users);
	return 0;

out_ib:
	ipoib_ib_cleanup(priv);
out_wq:
	destroy_workqueue(priv->wq);
out_stats:
	free_percpu(dev->tstats);
	dev->tstats = NULL;
	return ret;
}

static void ipoib_hca_put(struct ipoib_hca *hca)
{
	if (refcount_dec_and_test(&hca->users))
		complete(&hca->gone);
}

/*
 * Under RTNL, the interface closed: no more events, works or paths. The
 * works that take RTNL may still run (and do nothing): their netdev
 * references keep the rest for ipoib_priv_destructor.
 */
static void ipoib_ndo_uninit(struct net_device *dev)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	mutex_lock(&priv->hca->lock);
	list_del_init(&priv->hca_node);
	mutex_unlock(&priv->hca->lock);
	ipoib_rtnl_work_cancel(priv, &priv->reset_work);
	ipoib_rtnl_work_cancel(priv, &priv->announce_work);
	ipoib_rtnl_work_cancel(priv, &priv->mcast_work);
	ipoib_rtnl_work_cancel(priv, &priv->gid_restore_work);
	/* it takes no RTNL; OPER_UP is clear, nothing queues it again */
	cancel_delayed_work_sync(&priv->link_wait_work);
	ipoib_path_cleanup(priv);
}

/*
 * After unregistration, once no netdev reference is left, outside RTNL
 * (only a failed register_netdevice() calls it under RTNL, with no work
 * ever queued): the waits for grace periods and works, and the verbs
 * objects.
 */
static void ipoib_priv_destructor(struct net_device *dev)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	/* path and group teardown put their AHs after a grace period */
	rcu_barrier();
	flush_workqueue(priv->wq);
	ipoib_cm_cleanup(priv);
	ipoib_ib_cleanup(priv);
	destroy_workqueue(priv->wq);
	free_percpu(dev->tstats);
	ipoib_hca_put(priv->hca);
}

/* Under RTNL: QPs to RTS, receives posted, joins started. */
static int ipoib_datapath_up(struct ipoib_dev *priv)
{
	int ret;

	/* nothing in flight: what the last datapath left counted goes */
	netdev_tx_reset_queue(netdev_get_tx_queue(priv->dev, 0));
	atomic_set(&priv->tx_bql_unsent, 0);
	ret = ipoib_ib_open(priv);
	if (ret)
		return ret;
	/* without connected mode the interface still works, over UD */
	if (ipoib_cm_open(priv))
		netdev_warn(priv->dev, "connected mode unavailable until the next open\n");
	set_bit(IPOIB_FLAG_DATAPATH, &priv->flags);
	/*
	 * Carrier waits for the broadcast group (RFC 4391 s5). Wake, not
	 * start: after a restart the qdisc holds packets to run again.
	 */
	netif_wake_queue(priv->dev);
	ipoib_mcast_start(priv);
	queue_delayed_work(priv->wq, &priv->path_gc_work, IPOIB_PATH_IDLE / 2);
	return 0;
}

static void ipoib_datapath_down(struct ipoib_dev *priv)
{
	if (!test_and_clear_bit(IPOIB_FLAG_DATAPATH, &priv->flags))
		return;
	/*
	 * A restart runs with the interface up: no transmit may still be
	 * posting to the QP or writing the rings torn down below.
	 * netif_tx_disable() waits for the one in ndo_start_xmit; the grace
	 * period, for readers of the paths and groups it looked up and for
	 * NAPI polls that saw DATAPATH set and may have woken the queue,
	 * which the second disable stops again.
	 */
	ipoib_test_teardown();
	netif_tx_disable(priv->dev);
	/* a batch the stack left unfinished: post it, to be flushed */
	netif_tx_lock_bh(priv->dev);
	ipoib_ud_kick(priv);
	netif_tx_unlock_bh(priv->dev);
	synchronize_net();
	netif_tx_disable(priv->dev);
	ipoib_rtnl_work_cancel(priv, &priv->announce_work);
	ipoib_mcast_stop(priv);
	/* while NAPI still reaps the connections' flushed sends */
	ipoib_cm_stop(priv);
	ipoib_path_cleanup(priv);
	ipoib_ib_stop(priv);
}

/*
 * Under RTNL, on an open interface: bring the datapath in line with the
 * port's P_Key table. A partition that is not in the table cannot carry
 * traffic, so the interface stays without carrier until a P_Key change
 * event brings it; an index that moved needs the QP set up again.
 */
static int ipoib_datapath_sync(struct ipoib_dev *priv, bool restart)
{
	bool up = test_bit(IPOIB_FLAG_DATAPATH, &priv->flags);
	u16 index;
	int ret;

	ret = ib_find_cached_pkey(priv->ca, priv->port, priv->pkey, &index);
	if (up && (restart || ret || index != priv->pkey_index)) {
		ipoib_datapath_down(priv);
		ipoib_test_restart_gap();
		up = false;
	}
	if (up)
		return 0;
	if (ret) {
		if (!test_and_set_bit(IPOIB_FLAG_PKEY_WAIT, &priv->flags))
			netdev_info(priv->dev, "P_Key 0x%04x is not in the table of %s port %u: no carrier until it is\n",
				    priv->pkey, dev_name(&priv->ca->dev),
				    priv->port);
		netif_carrier_off(priv->dev);
		return 0;
	}
	if (test_and_clear_bit(IPOIB_FLAG_PKEY_WAIT, &priv->flags))
		netdev_info(priv->dev, "P_Key 0x%04x found at index %u\n",
			    priv->pkey, index);
	priv->pkey_index = index;
	return ipoib_datapath_up(priv);
}

static int ipoib_ndo_open(struct net_device *dev)
{
	clear_bit(IPOIB_FLAG_MTU_HINT, &ipoib_priv(dev)->flags);
	return ipoib_datapath_sync(ipoib_priv(dev), false);
}

static int ipoib_ndo_stop(struct net_device *dev)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	clear_bit(IPOIB_FLAG_PKEY_WAIT, &priv->flags);
	/* a restart asked for the datapath that goes now, not the next */
	clear_bit(IPOIB_FLAG_RESTART, &priv->flags);
	ipoib_datapath_down(priv);
	return 0;
}

static netdev_tx_t ipoib_xmit(struct ipoib_dev *priv, struct sk_buff *skb)
{
	struct net_device *dev = priv->dev;
	struct ipoib_lladdr dst;

	if (unlikely(ipoib_lladdr_parse(skb->data, skb_headlen(skb), &dst) ||
		     skb->len < IPOIB_HARD_LEN)) {
		atomic_long_inc(&priv->counters.tx_bad_daddr);
		DEV_STATS_INC(dev, tx_dropped);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	/*
	 * No carrier: the port is down or the broadcast group not joined.
	 * The qdisc goes on feeding us until linkwatch runs, up to a second
	 * later; a send posted now would fail, and on rxe take the QP to
	 * the error state, costing a restart once the link is back.
	 */
	if (unlikely(!netif_carrier_ok(dev))) {
		atomic_long_inc(&priv->counters.tx_no_carrier);
		DEV_STATS_INC(dev, tx_dropped);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	if (dst.qpn == IPOIB_MCAST_QPN)
		return ipoib_mcast_xmit(priv, skb, dst.gid);
	if (unlikely(!dst.qpn)) {
		/* no destination: an unresolved packet-socket send */
		atomic_long_inc(&priv->counters.tx_bad_daddr);
		DEV_STATS_INC(dev, tx_dropped);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	return ipoib_path_xmit(priv, skb, &dst);
}

/*
 * Datagrams sent with xmit_more wait for the doorbell, which rings with
 * the last of the batch, whatever it was (connected, queued, dropped),
 * or when the batch ends early because the queue stopped. xmit_more is
 * read once: an ICMP error sent meanwhile (too big) transmits on another
 * device, which rewrites it.
 */
static netdev_tx_t ipoib_ndo_start_xmit(struct sk_buff *skb,
					struct net_device *dev)
{
	struct ipoib_dev *priv = ipoib_priv(dev);
	netdev_tx_t ret;

	priv->tx_more = netdev_xmit_more();
	ret = ipoib_xmit(priv, skb);
	if (unlikely(priv->tx_unposted) &&
	    (!priv->tx_more || ret != NETDEV_TX_OK ||
	     netif_xmit_stopped(netdev_get_tx_queue(dev, 0))))
		ipoib_ud_kick(priv);
	return ret;
}

static void ipoib_ndo_set_rx_mode(struct net_device *dev)
{
	ipoib_mcast_restart(ipoib_priv(dev));
}

static int ipoib_ndo_change_mtu(struct net_device *dev, int new_mtu)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	/* remember what the admin asked for; the group may lower it */
	if (!priv->mtu_internal)
		priv->admin_mtu = new_mtu;
	WRITE_ONCE(dev->mtu, new_mtu);
	return 0;
}

static void ipoib_set_mtu(struct ipoib_dev *priv, unsigned int mtu)
{
	if (priv->dev->mtu == mtu)
		return;
	priv->mtu_internal = true;
	dev_set_mtu(priv->dev, mtu);
	priv->mtu_internal = false;
}

/*
 * Under RTNL, when the group MTU or the mode changes. Datagram: at most
 * the UD MTU (group MTU minus the header). Connected: up to 65520, and
 * what the admin asked for (RFC 4755 s5; peers without a connection get
 * ICMP "too big" with the UD MTU, s7.2).
 */
void ipoib_apply_mtu(struct ipoib_dev *priv)
{
	unsigned int ud = IPOIB_UD_MTU(priv->mcast_mtu), max, mtu;

	max = priv->mode == IPOIB_MODE_CONNECTED ? IPOIB_CM_MTU : ud;
	priv->dev->max_mtu = max;
	mtu = priv->admin_mtu ? min(priv->admin_mtu, max) : ud;
	ipoib_set_mtu(priv, mtu);
}

/*
 * At carrier on: IPv6 needs a link MTU of 1280 (RFC 8200 s5), and the
 * kernel turns it off on a link with less. The group's MTU decides it:
 * on RoCE, an underlay of 1500 octets gives IB MTU 1024 and an IPoIB MTU
 * of 1020. Said once per open, with what would restore it.
 */
void ipoib_mtu_hint(struct ipoib_dev *priv)
{
	unsigned int ud = IPOIB_UD_MTU(priv->mcast_mtu);
	char where[64];

	if (priv->dev->mtu >= IPV6_MIN_MTU || ud >= IPV6_MIN_MTU ||
	    test_and_set_bit(IPOIB_FLAG_MTU_HINT, &priv->flags))
		return;
	priv->fabric->describe(priv, where, sizeof(where));
	netdev_warn(priv->dev, "MTU %u is below IPv6's minimum of %u, so the kernel keeps IPv6 off here: the broadcast group's MTU is %u (%s); a group MTU of 2048 restores IPv6 (on RoCE, an underlay MTU of 2048 plus the RoCE headers: 2128 with rxe)\n",
		    priv->dev->mtu, IPV6_MIN_MTU, priv->mcast_mtu, where);
}

#define IPOIB_OFFLOADS	(NETIF_F_SG | NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM | \
			 NETIF_F_RXCSUM)

/*
 * Datagram mode: checksum offload only where the HCA computes IPv4
 * checksums on UD; fragments gathered where the HCA gathers (with SG,
 * the stack segments TCP late, into segments that share its pages,
 * instead of copying each into a linear buffer). Connected mode
 * gathers fragments and offers checksum offload for IPv4 and IPv6: the
 * checksum is left to peers that take checksum-pending packets
 * (ipoib_wire.h) and completed in software for the rest (ipoib_cm_tx.c).
 * RXCSUM: trust what the transport vouches for (the HCA's UD checksum
 * check; checksum-pending packets, which connections made while it is on
 * ask peers for).
 */
static netdev_features_t ipoib_mode_features(struct ipoib_dev *priv)
{
	netdev_features_t can = NETIF_F_RXCSUM;

	if (priv->mode == IPOIB_MODE_CONNECTED)
		return can | NETIF_F_SG | NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM;
	/* priv->ud_tx_sge follows this, once the UD QP exists */
	if (priv->ca->attrs.max_send_sge >= 2)
		can |= NETIF_F_SG;
	if (priv->ca->attrs.device_cap_flags & IB_DEVICE_UD_IP_CSUM)
		can |= NETIF_F_IP_CSUM;
	return can;
}

static netdev_features_t ipoib_ndo_fix_features(struct net_device *dev,
						netdev_features_t features)
{
	return features & (~IPOIB_OFFLOADS | ipoib_mode_features(ipoib_priv(dev)));
}

/*
 * ethtool -k offers what the mode and device can do, the rest [fixed]
 * (before registration, or under RTNL). Offloads that become possible
 * are turned on, unless the user turned them off while they were offered.
 */
static void ipoib_set_hw_features(struct ipoib_dev *priv)
{
	struct net_device *dev = priv->dev;
	netdev_features_t can = ipoib_mode_features(priv);
	netdev_features_t off = dev->hw_features & IPOIB_OFFLOADS &
				~dev->wanted_features;

	dev->hw_features = (dev->hw_features & ~IPOIB_OFFLOADS) | can;
	dev->wanted_features = (dev->wanted_features & ~IPOIB_OFFLOADS) |
			       (can & ~off);
}

/*
 * The sysfs switch (under RTNL). Connected: MTU to 65520, as the in-tree
 * driver does; connections already up stay, so established TCP sessions
 * survive either way. Datagram: new traffic goes UD at once, with the MTU
 * back at the UD MTU; live connections keep receiving until they idle out.
 */
int ipoib_set_mode(struct ipoib_dev *priv, u16 mode)
{
	struct net_device *dev = priv->dev;

	ASSERT_RTNL();
	if (mode == priv->mode)
		return 0;
	if (mode == IPOIB_MODE_CONNECTED && !ipoib_cm_available(priv)) {
		netdev_warn(dev, "connected mode unavailable on %s: no usable shared receive queue (cm_srq=%d) and max_nonsrq_conn_qp=%u\n",
			    dev_name(&priv->ca->dev), ipoib_cm_srq,
			    ipoib_max_nonsrq_conn_qp);
		return -EINVAL;
	}
	priv->mode = mode;
	priv->admin_mtu = mode == IPOIB_MODE_CONNECTED ? IPOIB_CM_MTU : 0;
	ipoib_set_hw_features(priv);
	netdev_update_features(dev);
	ipoib_apply_mtu(priv);
	netdev_info(dev, "%s mode, MTU %u\n",
		    mode == IPOIB_MODE_CONNECTED ? "connected" : "datagram",
		    dev->mtu);
	return 0;
}

static bool ipoib_qp_broken(struct ipoib_dev *priv)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(priv->qp, &attr, IB_QP_STATE, &init))
		return true;
	return attr.qp_state != IB_QPS_RTS;
}

/* how often, and how many times, GID 0 is asked back (20 s in all) */
#define IPOIB_GID_RESTORE_DELAY	(HZ / 5)
#define IPOIB_GID_RESTORE_TRIES	100

/*
 * GID 0 went and has not come back. On RoCE the core deletes the old
 * default GID and adds the new one (the underlay's new MAC) at once, but
 * while anyone still holds the old entry (our address handles, until the
 * port event's leaves and flushes have let them go, and our connections,
 * ipoib_cm_gid_gone()) its slot is taken:
 * the add fails (-ENOSPC) and nothing in the core tries again. Ask the
 * fabric to place it once more, a few times a second for 20 s of the
 * port being active (no RTNL here: the core takes it); the GID change
 * event that follows it does the rest.
 */
static void ipoib_gid_restore_start(struct ipoib_dev *priv)
{
	if (!priv->fabric->gid_restore)
		return;
	atomic_set(&priv->gid_restore_left, IPOIB_GID_RESTORE_TRIES);
	ipoib_rtnl_work_queue(priv, &priv->gid_restore_work,
			      IPOIB_GID_RESTORE_DELAY);
}

static void ipoib_gid_restore_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      gid_restore_work.work);
	union ib_gid gid;

	if (READ_ONCE(priv->dev->reg_state) != NETREG_REGISTERED ||
	    !rdma_query_gid(priv->ca, priv->port, 0, &gid))
		goto out;
	/*
	 * Not while the port is down: the underlay's return adds its
	 * default GIDs by itself, and the tries begin again with the port
	 * (ipoib_port_event), without RTNL taken for nothing meanwhile.
	 */
	if (ipoib_port_active(priv)) {
		priv->fabric->gid_restore(priv);
		if (atomic_dec_return(&priv->gid_restore_left) > 0)
			ipoib_rtnl_work_queue(priv, &priv->gid_restore_work,
					      IPOIB_GID_RESTORE_DELAY);
		else
			netdev_warn(priv->dev, "GID 0 did not come back to %s port %u\n",
				    dev_name(&priv->ca->dev), priv->port);
	}
out:
	ipoib_rtnl_work_put(priv);
}

/*
 * Under RTNL, after a GID table change: GID 0 is our address (on RoCE it
 * follows the underlay's MAC). A new one goes into our hardware address;
 * NETDEV_CHANGEADDR sends a gratuitous ARP and our announcement the
 * neighbour advertisements, so that peers stop sending to the old GID,
 * which the port no longer accepts.
 */
static void ipoib_follow_gid(struct ipoib_dev *priv)
{
	union ib_gid gid;
	int ret;

	ret = rdma_query_gid(priv->ca, priv->port, 0, &gid);
	if (ret) {
		netdev_info(priv->dev, "GID 0 is gone (%d): memberships and paths go until it is back\n",
			    ret);
		/* let go of what names the old one: its slot is the new one's */
		ipoib_mcast_port_event(priv);
		ipoib_cm_gid_gone(priv);
		ipoib_gid_restore_start(priv);
		return;
	}
	clear_bit(IPOIB_FLAG_GID_GONE_SAID, &priv->flags);
	if (!memcmp(&gid, &priv->local_gid, sizeof(gid)))
		return;
	netdev_info(priv->dev, "GID 0 is now %pI6c (was %pI6c)\n", gid.raw,
		    priv->local_gid.raw);
	write_seqlock_bh(&priv->gid_lock);
	priv->local_gid = gid;
	write_sequnlock_bh(&priv->gid_lock);
	ipoib_set_dev_addr(priv);
	call_netdevice_notifiers(NETDEV_CHANGEADDR, priv->dev);
	/* memberships name the old GID: join again */
	ipoib_mcast_port_event(priv);
	if (netif_running(priv->dev) && netif_carrier_ok(priv->dev))
		ipoib_announce(priv);
}

/*
 * Restart the datapath and rejoin after a transmit timeout, or when a
 * work completion error took the UD QP out of RTS (rxe does that when the
 * port goes down under a send); follow P_Key table changes.
 */
static void ipoib_reset_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      reset_work.work);
	struct net_device *dev = priv->dev;
	bool restart;

	if (!ipoib_rtnl_work_begin(priv))
		return;
	if (test_and_clear_bit(IPOIB_FLAG_GID_CHECK, &priv->flags))
		ipoib_follow_gid(priv);
	if (netif_running(dev)) {
		restart = test_and_clear_bit(IPOIB_FLAG_RESTART, &priv->flags) ||
			  (test_bit(IPOIB_FLAG_DATAPATH, &priv->flags) &&
			   ipoib_qp_broken(priv));
		/*
		 * Not while the port is down: the restart would release the
		 * parked connections, whose MADs then break 6.1 soft-RoCE's
		 * QP1 (ipoib_cm.c); the port's return asks again, and a
		 * look every second covers an event that came too early.
		 */
		if (restart && test_bit(IPOIB_FLAG_PORT_DOWN, &priv->flags) &&
		    !ipoib_port_active(priv)) {
			set_bit(IPOIB_FLAG_RESTART, &priv->flags);
			ipoib_rtnl_work_queue(priv, &priv->reset_work, HZ);
			restart = false;
		}
		/* a peer can provoke this (rxe errors a UD QP on some bad input) */
		if (restart && net_ratelimit())
			netdev_warn(dev, "restarting the datapath\n");
		/* say so, and try again: nothing else would */
		if (ipoib_datapath_sync(priv, restart)) {
			if (net_ratelimit())
				netdev_err(dev, "cannot restart the datapath, retrying in 1 s\n");
			ipoib_rtnl_work_queue(priv, &priv->reset_work, HZ);
		} else if (restart) {
			atomic_long_inc(&priv->counters.restarts);
		}
	}
	ipoib_rtnl_work_end(priv);
}

/* Restart the datapath from the reset work (any context). */
static void ipoib_restart(struct ipoib_dev *priv)
{
	set_bit(IPOIB_FLAG_RESTART, &priv->flags);
	ipoib_rtnl_work_queue(priv, &priv->reset_work, 0);
}

static void ipoib_ndo_tx_timeout(struct net_device *dev, unsigned int txq)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	netdev_warn(dev, "transmit timeout: %u sends in flight, restarting\n",
		    priv->tx_head - priv->tx_tail);
	ipoib_restart(priv);
}

/* A child shows as ibX.PPPP@ibX */
static int ipoib_ndo_get_iflink(const struct net_device *dev)
{
	const struct ipoib_dev *priv = ipoib_priv(dev);

	return priv->parent ? priv->parent->dev->ifindex : dev->ifindex;
}

static const struct net_device_ops ipoib_netdev_ops = {
	.ndo_init		= ipoib_ndo_init,
	.ndo_get_stats64	= dev_get_tstats64,
	.ndo_uninit		= ipoib_ndo_uninit,
	.ndo_open		= ipoib_ndo_open,
	.ndo_stop		= ipoib_ndo_stop,
	.ndo_start_xmit		= ipoib_ndo_start_xmit,
	.ndo_set_rx_mode	= ipoib_ndo_set_rx_mode,
	.ndo_change_mtu		= ipoib_ndo_change_mtu,
	.ndo_fix_features	= ipoib_ndo_fix_features,
	.ndo_tx_timeout		= ipoib_ndo_tx_timeout,
	.ndo_get_iflink		= ipoib_ndo_get_iflink,
};

bool ipoib_is_ipoib(const struct net_device *dev)
{
	return dev->netdev_ops == &ipoib_netdev_ops;
}

/* alloc_netdev()'s setup, for ours and for rtnl's (ipoib_link_ops) */
void ipoib_setup(struct net_device *dev)
{
	struct ipoib_dev *priv = ipoib_priv(dev);

	priv->dev = dev;
	INIT_LIST_HEAD(&priv->hca_node);
	INIT_DELAYED_WORK(&priv->reset_work, ipoib_reset_work);
	INIT_DELAYED_WORK(&priv->gid_restore_work, ipoib_gid_restore_work);
	ipoib_announce_init(priv);

	dev->netdev_ops = &ipoib_netdev_ops;
	dev->header_ops = &ipoib_header_ops;
	ipoib_set_ethtool_ops(dev);

	dev->type = ARPHRD_INFINIBAND;
	dev->addr_len = IPOIB_ADDR_LEN;
	dev->hard_header_len = IPOIB_HARD_LEN;
	dev->watchdog_timeo = 5 * HZ;
	dev->flags = IFF_BROADCAST | IFF_MULTICAST;
	dev->mtu = IPOIB_UD_MTU(IPOIB_DEFAULT_IB_MTU);
	dev->min_mtu = IPV4_MIN_MTU;
	dev->max_mtu = IPOIB_UD_MTU(4096);
	dev->tx_queue_len = ipoib_sendq_size * 2;
	dev->sysfs_groups[0] = &ipoib_attr_group;
	dev->rtnl_link_ops = &ipoib_link_ops;
	/* children go with rtnl or their parent: all free on unregister */
	dev->needs_free_netdev = true;
	dev->priv_destructor = ipoib_priv_destructor;
	netif_keep_dst(dev);
}

/* A bond's report on us (NETDEV_CHANGELOWERSTATE): we no longer send */
static bool ipoib_lag_backup(void *ptr)
{
	struct netdev_notifier_changelowerstate_info *info = ptr;
	struct netdev_lag_lower_state_info *st = info->lower_state_info;

	return st && !st->tx_enabled;
}

static int ipoib_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct ipoib_dev *priv;

	if (!ipoib_is_ipoib(dev))
		return NOTIFY_DONE;
	priv = ipoib_priv(dev);
	switch (event) {
	/* debugfs names follow the interface's from here, race-free */
	case NETDEV_REGISTER:
		ipoib_fs_add(priv);
		break;
	case NETDEV_CHANGENAME:
		ipoib_fs_rename(priv);
		break;
	case NETDEV_UNREGISTER:
		ipoib_fs_del(priv);
		break;
	case NETDEV_CHANGELOWERSTATE:
		if (ipoib_lag_backup(ptr))
			ipoib_cm_lag_backup(priv);
		break;
	case NETDEV_CHANGE:
		if (netif_carrier_ok(dev) &&
		    test_and_clear_bit(IPOIB_FLAG_ANNOUNCE, &priv->flags)) {
			ipoib_neigh_carrier_on(dev);
			ipoib_cm_link_up(priv);
			ipoib_announce(priv);
		}
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block ipoib_netdev_notifier = {
	.notifier_call = ipoib_netdev_event,
};

/*
 * Fill in an interface on (hca, port) for P_Key pkey, before it registers:
 * the port's interfaces and their children alike.
 */
int ipoib_intf_prepare(struct ipoib_dev *priv, struct ipoib_hca *hca,
		       u32 port, const struct ipoib_fabric_ops *fabric,
		       u16 pkey)
{
	struct net_device *dev = priv->dev;
	u8 bcast[IPOIB_ADDR_LEN];
	int ret;

	priv->hca = hca;
	priv->ca = hca->ca;
	priv->port = port;
	priv->fabric = fabric;
	priv->scope = IPOIB_SCOPE_LINK;
	priv->qkey = IPOIB_DEFAULT_QKEY;
	/* RFC 4391 s4.1: the broadcast GID uses the full-member P_Key */
	priv->pkey = ipoib_pkey_full(pkey);
	priv->pkey_index = 0;

	ipoib_set_hw_features(priv);
	dev->features |= dev->hw_features;

	seqlock_init(&priv->gid_lock);
	ret = rdma_query_gid(hca->ca, port, 0, &priv->local_gid);
	if (ret) {
		dev_warn(&hca->ca->dev, "port %u: cannot read GID 0: %d\n",
			 port, ret);
		return ret;
	}

	ipoib_bcast_lladdr(bcast, priv->scope, priv->pkey);
	memcpy(dev->broadcast, bcast, IPOIB_ADDR_LEN);
	dev->dev_port = port - 1;
	/* old udev rules read dev_id for the port */
	dev->dev_id = port - 1;
	SET_NETDEV_DEV(dev, hca->ca->dev.parent);
	netif_carrier_off(dev);
	return 0;
}

/* Under RTNL: register it and let the port's events reach it. */
int ipoib_intf_register(struct ipoib_dev *priv)
{
	struct ipoib_hca *hca = priv->hca;
	char where[64];
	int ret;

	ASSERT_RTNL();
	ret = register_netdevice(priv->dev);
	if (ret) {
		dev_warn(&hca->ca->dev, "port %u: cannot register %s: %d\n",
			 priv->port, priv->dev->name, ret);
		return ret;
	}
	mutex_lock(&hca->lock);
	list_add_tail(&priv->hca_node, &hca->ports);
	mutex_unlock(&hca->lock);

	priv->fabric->describe(priv, where, sizeof(where));
	netdev_info(priv->dev, "%s port %u, %s, P_Key 0x%04x, UD QPN 0x%06x\n",
		    dev_name(&hca->ca->dev), priv->port, where, priv->pkey,
		    priv->qp->qp_num);
	return 0;
}

static int ipoib_add_port(struct ipoib_hca *hca, u32 port)
{
	const struct ipoib_fabric_ops *fabric;
	struct net_device *dev;
	struct ipoib_dev *priv;
	u16 pkey;
	int ret;

	fabric = ipoib_fabric_for_port(hca->ca, port);
	if (!fabric)
		return 0;

	dev = alloc_netdev(sizeof(*priv), "ib%d", NET_NAME_UNKNOWN,
			   ipoib_setup);
	if (!dev)
		return -ENOMEM;
	priv = ipoib_priv(dev);
	priv->hca = hca;
	priv->ca = hca->ca;
	priv->port = port;
	priv->fabric = fabric;
	ret = fabric->port_check(priv);
	if (ret)
		goto out_free;

	/* the port's own interface takes the P_Key at index 0 */
	ret = ib_query_pkey(hca->ca, port, 0, &pkey);
	if (ret) {
		dev_warn(&hca->ca->dev, "port %u: cannot read P_Key 0: %d\n",
			 port, ret);
		goto out_free;
	}
	ret = ipoib_intf_prepare(priv, hca, port, fabric, pkey);
	if (ret)
		goto out_free;

	rtnl_lock();
	ret = ipoib_intf_register(priv);
	rtnl_unlock();
	if (ret)
		goto out_free;
	return 0;

out_free:
	free_netdev(dev);
	return ret;
}

static bool ipoib_dev_has_addr(struct net_device *dev,
			       const struct sockaddr *addr)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	struct net_device *owner;
	bool ret = false;

	switch (addr->sa_family) {
	case AF_INET:
		owner = ip_dev_find(dev_net(dev), sin->sin_addr.s_addr);
		ret = owner == dev;
		dev_put(owner);
		break;
#if IS_ENABLED(CONFIG_IPV6)
	case AF_INET6:
		ret = ipv6_chk_addr(dev_net(dev), &sin6->sin6_addr, dev, 1);
		break;
#endif
	}
	return ret;
}

/* @addr is ours, or our bond's (an enslaved interface has none) */
static bool ipoib_owns_addr(struct net_device *dev,
			    const struct sockaddr *addr)
{
	struct net_device *master;
	bool ret;

	if (ipoib_dev_has_addr(dev, addr))
		return true;
	rcu_read_lock();
	master = netdev_master_upper_dev_get_rcu(dev);
	ret = master && netif_is_lag_master(master) &&
	      ipoib_dev_has_addr(master, addr);
	rcu_read_unlock();
	return ret;
}

/*
 * The interface rdma_cm's listeners know: an enslaved interface's bond
 * (or team), as the in-tree driver answers, which holds the IP address
 * the connection is for; not another master (a VRF), whose routes name
 * us. A reference is taken.
 */
static struct net_device *ipoib_rdma_cm_netdev(struct net_device *dev)
{
	struct net_device *master;

	rcu_read_lock();
	master = netdev_master_upper_dev_get_rcu(dev);
	if (master && netif_is_lag_master(master))
		dev = master;
	dev_hold(dev);
	rcu_read_unlock();
	return dev;
}

/*
 * rdma_cm asks which interface an incoming IB connection is for: the one
 * on that port whose partition and GID match, and, where children share
 * both, the one that holds the destination IP address (or whose bond
 * does). RoCE connections never ask (rdma_cm finds the netdev from the
 * GID itself).
 */
static struct net_device *
ipoib_get_net_dev_by_params(struct ib_device *ca, u32 port, u16 pkey,
			    const union ib_gid *gid,
			    const struct sockaddr *addr, void *client_data)
{
	struct net_device *first = NULL, *by_addr = NULL, *found;
	struct ipoib_hca *hca = client_data;
	struct ipoib_dev *priv;
	unsigned int n = 0;
	union ib_gid ours;

	if (!rdma_protocol_ib(ca, port))
		return NULL;
	mutex_lock(&hca->lock);
	list_for_each_entry(priv, &hca->ports, hca_node) {
		if (priv->port != port || priv->pkey != ipoib_pkey_full(pkey))
			continue;
		ipoib_local_gid(priv, &ours);
		if (gid && memcmp(gid, &ours, sizeof(*gid)))
			continue;
		n++;
		if (!first)
			first = priv->dev;
		if (addr && !by_addr && ipoib_owns_addr(priv->dev, addr))
			by_addr = priv->dev;
	}
	found = n == 1 ? first : by_addr;
	if (found)
		found = ipoib_rdma_cm_netdev(found);
	mutex_unlock(&hca->lock);
	return found;
}

static struct ib_client ipoib_client;

/*
 * What an event costs an interface: only what it changed is redone. On
 * InfiniBand, ib_sa reports a membership lost by a port error, a LID
 * change or a client reregister to its group (-ENETRESET), which joins
 * again by itself (ipoib_multicast.c).
 */
static void ipoib_port_event(struct ipoib_dev *priv, enum ib_event_type ev)
{
	union ib_gid gid;

	switch (ev) {
	case IB_EVENT_PORT_ERR:
		set_bit(IPOIB_FLAG_PORT_DOWN, &priv->flags);
		fallthrough;
	case IB_EVENT_PORT_ACTIVE:
		/* the link went or came: carrier, memberships and paths */
		ipoib_mcast_port_event(priv);
		if (ev != IB_EVENT_PORT_ACTIVE)
			break;
		/* GID 0 still gone: the port's tries to place it again */
		if (rdma_query_gid(priv->ca, priv->port, 0, &gid))
			ipoib_gid_restore_start(priv);
		/* a restart put off while the port was down */
		if (test_bit(IPOIB_FLAG_RESTART, &priv->flags))
			ipoib_rtnl_work_queue(priv, &priv->reset_work, 0);
		break;
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
	case IB_EVENT_SM_CHANGE:
		/*
		 * Path records name LIDs, ours and the peers': resolve them
		 * again (in priv->wq). A new SM may have moved a peer's
		 * LID, which raises no event here, only a reregister.
		 * Memberships: ib_sa rejoins those it has; joins that
		 * failed (no SA) retry at once.
		 */
		ipoib_path_flush_soon(priv);
		ipoib_mcast_sm_event(priv);
		break;
	case IB_EVENT_PKEY_CHANGE:
		/* a partition may have appeared, gone or moved */
		ipoib_rtnl_work_queue(priv, &priv->reset_work, 0);
		break;
	case IB_EVENT_GID_CHANGE:
		/*
		 * On RoCE every address of the underlay has a GID: only a
		 * new GID 0, our own, means anything (ipoib_follow_gid).
		 */
		set_bit(IPOIB_FLAG_GID_CHECK, &priv->flags);
		ipoib_rtnl_work_queue(priv, &priv->reset_work, 0);
		break;
	default:
		break;
	}
}

static void ipoib_event(struct ib_event_handler *handler,
			struct ib_event *event)
{
	struct ipoib_hca *hca = container_of(handler, struct ipoib_hca,
					     event_handler);
	struct ipoib_dev *priv;

	/* events come from ib_core's workqueue: process context */
	mutex_lock(&hca->lock);
	list_for_each_entry(priv, &hca->ports, hca_node) {
		if (priv->port != event->element.port_num)
			continue;
		ipoib_dbg(priv, 1, "port event %s\n",
			  ib_event_msg(event->event));
		ipoib_port_event(priv, event->event);
	}
	mutex_unlock(&hca->lock);
}

static int ipoib_add_one(struct ib_device *ca)
{
	struct ipoib_hca *hca;
	u32 port;
	int ret;

	hca = kzalloc(sizeof(*hca), GFP_KERNEL);
	if (!hca)
		return -ENOMEM;
	hca->ca = ca;
	mutex_init(&hca->lock);
	INIT_LIST_HEAD(&hca->ports);
	refcount_set(&hca->users, 1);
	init_completion(&hca->gone);
	/*
	 * Before the first interface: one opened at once (udev) must not
	 * miss the SM's P_Key table or ACTIVE while the next port is added.
	 */
	INIT_IB_EVENT_HANDLER(&hca->event_handler, ca, ipoib_event);
	ib_register_event_handler(&hca->event_handler);

	rdma_for_each_port(ca, port) {
		ret = ipoib_add_port(hca, port);
		if (ret)
			dev_warn(&ca->dev, "port %u: no IPoIB interface: %d\n",
				 port, ret);
	}
	if (list_empty(&hca->ports)) {
		/* interfaces that failed to register are gone already */
		ib_unregister_event_handler(&hca->event_handler);
		ipoib_hca_put(hca);
		wait_for_completion(&hca->gone);
		mutex_destroy(&hca->lock);
		kfree(hca);
		return -EOPNOTSUPP;
	}
	ib_set_client_data(ca, &ipoib_client, hca);
	return 0;
}

/*
 * The device goes: all its interfaces, children included, leave in one
 * batch, so no child outlives its parent. Their verbs objects go in their
 * destructors, here or in a thread whose unregistration of a child
 * (ip link del, delete_child) has not reached it yet: wait for the last.
 */
static void ipoib_remove_one(struct ib_device *ca, void *client_data)
{
	struct ipoib_hca *hca = client_data;
	struct ipoib_dev *priv;
	LIST_HEAD(kill);

	ib_unregister_event_handler(&hca->event_handler);
	rtnl_lock();
	list_for_each_entry(priv, &hca->ports, hca_node)
		unregister_netdevice_queue(priv->dev, &kill);
	unregister_netdevice_many(&kill);
	rtnl_unlock();
	/* the fabric's per-port agents go before the device's MAD ports */
	ipoib_fabric_ib_remove(ca);
	WARN_ON(!list_empty(&hca->ports));
	ipoib_hca_put(hca);
	wait_for_completion(&hca->gone);
	mutex_destroy(&hca->lock);
	kfree(hca);
}

static struct ib_client ipoib_client = {
	.name	= "ipoib",
	.add	= ipoib_add_one,
	.remove	= ipoib_remove_one,
	.get_net_dev_by_params = ipoib_get_net_dev_by_params,
};

/* Queue depths are powers of two within bounds; say so when we change one. */
static unsigned int ipoib_queue_size(const char *name, unsigned int size)
{
	unsigned int n = roundup_pow_of_two(clamp_t(unsigned int, size,
						    IPOIB_MIN_QUEUE_SIZE,
						    IPOIB_MAX_QUEUE_SIZE));

	if (n != size)
		pr_info("ib_ipoib: %s %u is now %u (a power of 2 within %u..%u)\n",
			name, size, n, IPOIB_MIN_QUEUE_SIZE,
			IPOIB_MAX_QUEUE_SIZE);
	return n;
}

static int __init ipoib_init(void)
{
	int ret;

	ipoib_sendq_size = ipoib_queue_size("send_queue_size",
					    ipoib_sendq_size);
	ipoib_recvq_size = ipoib_queue_size("recv_queue_size",
					    ipoib_recvq_size);
	if (ipoib_max_nonsrq_conn_qp > IPOIB_CM_MAX_NONSRQ) {
		pr_info("ib_ipoib: max_nonsrq_conn_qp %u lowered to %u\n",
			ipoib_max_nonsrq_conn_qp, IPOIB_CM_MAX_NONSRQ);
		ipoib_max_nonsrq_conn_qp = IPOIB_CM_MAX_NONSRQ;
	}
	ret = ipoib_rtnl_init();
	if (ret)
		return ret;
	ipoib_fs_init();
	ret = ipoib_fabric_ib_register();
	if (ret)
		goto out_fs;
	ret = register_netdevice_notifier(&ipoib_netdev_notifier);
	if (ret)
		goto out_fabric;
	ret = ipoib_netlink_init();
	if (ret)
		goto out_notifier;
	ret = ipoib_announce_register();
	if (ret)
		goto out_netlink;
	ret = ipoib_neigh_register();
	if (ret)
		goto out_announce;
	ret = ib_register_client(&ipoib_client);
	if (ret)
		goto out_neigh;
	return 0;

out_neigh:
	ipoib_neigh_unregister();
out_announce:
	ipoib_announce_unregister();
out_netlink:
	ipoib_netlink_exit();
out_notifier:
	unregister_netdevice_notifier(&ipoib_netdev_notifier);
out_fabric:
	ipoib_fabric_ib_unregister();
out_fs:
	ipoib_fs_exit();
	ipoib_rtnl_exit();
	return ret;
}

static void __exit ipoib_exit(void)
{
	ipoib_test_exit();
	ipoib_neigh_unregister();
	ipoib_announce_unregister();
	/* every interface, children too, goes with its device */
	ib_unregister_client(&ipoib_client);
	/* also waits for destructors still returning (dev_unreg_count) */
	ipoib_netlink_exit();
	unregister_netdevice_notifier(&ipoib_netdev_notifier);
	ipoib_fabric_ib_unregister();
	ipoib_fs_exit();
	ipoib_rtnl_exit();
}

module_init(ipoib_init);
module_exit(ipoib_exit);
