// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE fabric: no subnet manager and no SA. The port's GIDs are IP
 * addresses of an Ethernet netdev (the underlay); paths come from IP
 * neighbour resolution and multicast is a local attach plus an IPv6 group
 * join on the underlay.
 */
#include <linux/ethtool.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"

/* A path is resolved like an IP neighbour: rdma_resolve_ip() on the GIDs. */
struct ipoib_roce_path {
	struct rdma_dev_addr dev_addr;
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
};

/* A group is joined on the underlay so the host accepts its traffic. */
struct ipoib_roce_mcast {
	struct net_device *ndev;
	netdevice_tracker tracker;
	bool ipv6_joined;
};

#define IPOIB_ROCE_RESOLVE_MS	2000
#define IPOIB_ROCE_MCAST_HOPS	1	/* scope 2: stays on the link */

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
	if (IS_ERR(ndev))
		snprintf(buf, len, "RoCE %s over ?", ver ? ver : "?");
	else
		snprintf(buf, len, "RoCE %s over %s (MTU %u)", ver ? ver : "?",
			 ndev->name, READ_ONCE(ndev->mtu));
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
}

static void ipoib_roce_resolved(int status, struct sockaddr *src,
				struct rdma_dev_addr *addr, void *context)
{
	struct ipoib_path *path = context;
	struct ipoib_dev *priv = path->priv;
	struct rdma_ah_attr *attr = &path->ah_attr;

	if (!status) {
		memset(attr, 0, sizeof(*attr));
		attr->type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(attr, priv->port);
		rdma_ah_set_grh(attr, &path->dgid, 0, 0, addr->hoplimit, 0);
		/* hardware RoCE puts this MAC on the wire */
		memcpy(attr->roce.dmac, addr->dst_dev_addr, ETH_ALEN);
	}
	ipoib_path_resolved(path, status);
}

static void ipoib_roce_path_cancel(struct ipoib_dev *priv,
				   struct ipoib_path *path)
{
	struct ipoib_roce_path *rp = path->fabric_priv;

	if (!rp)
		return;
	rdma_addr_cancel(&rp->dev_addr);
	rdma_put_gid_attr(rp->dev_addr.sgid_attr);
	kfree(rp);
	path->fabric_priv = NULL;
}

/*
 * A link-local GID in EUI-64 form (a RoCE port's default GID) names its
 * MAC: the path needs no round trip (the underlay's neighbour entry may
 * be gone after a link flap, and resolving it again takes an ND exchange
 * that a lost solicitation stretches by a second or more). A hardware
 * HCA sends to that MAC; soft-RoCE sends through the host's IP stack,
 * which still resolves the neighbour itself before the first packet.
 */
static bool ipoib_roce_path_local(struct ipoib_dev *priv,
				  struct ipoib_path *path)
{
	struct in6_addr *dgid = (struct in6_addr *)path->dgid.raw;
	struct rdma_ah_attr *attr = &path->ah_attr;

	if (!rdma_link_local_addr(dgid) || dgid->s6_addr[11] != 0xff ||
	    dgid->s6_addr[12] != 0xfe)
		return false;
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, priv->port);
	rdma_ah_set_grh(attr, &path->dgid, 0, 0, IPV6_DEFAULT_HOPLIMIT, 0);
	rdma_get_ll_mac(dgid, attr->roce.dmac);
	return true;
}

static int ipoib_roce_path_resolve(struct ipoib_dev *priv,
				   struct ipoib_path *path)
{
	const struct ib_gid_attr *sgid_attr;
	struct ipoib_roce_path *rp;
	union ib_gid gid;
	int ret;

	ipoib_roce_path_cancel(priv, path);
	if (ipoib_roce_path_local(priv, path)) {
		ipoib_path_resolved(path, 0);
		return 0;
	}
	rp = kzalloc(sizeof(*rp), GFP_KERNEL);
	if (!rp)
		return -ENOMEM;
	sgid_attr = rdma_get_gid_attr(priv->ca, priv->port, 0);
	if (IS_ERR(sgid_attr)) {
		kfree(rp);
		return PTR_ERR(sgid_attr);
	}
	rp->dev_addr.sgid_attr = sgid_attr;
	rp->dev_addr.net = &init_net;
	ipoib_local_gid(priv, &gid);
	rdma_gid2ip((struct sockaddr *)&rp->src, &gid);
	rdma_gid2ip((struct sockaddr *)&rp->dst, &path->dgid);
	path->fabric_priv = rp;
	ret = rdma_resolve_ip((struct sockaddr *)&rp->src,
			      (struct sockaddr *)&rp->dst, &rp->dev_addr,
			      IPOIB_ROCE_RESOLVE_MS, ipoib_roce_resolved, true,
			      path);
	if (ret) {
		rdma_put_gid_attr(sgid_attr);
		kfree(rp);
		path->fabric_priv = NULL;
	}
	return ret;
}

static struct net_device *ipoib_roce_underlay(struct ipoib_dev *priv,
					      netdevice_tracker *tracker)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;

	attr = rdma_get_gid_attr(priv->ca, priv->port, 0);
	if (IS_ERR(attr))
		return ERR_CAST(attr);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (!IS_ERR(ndev))
		netdev_hold(ndev, tracker, GFP_ATOMIC);
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	return ndev;
}

static void ipoib_roce_mcast_leave(struct ipoib_dev *priv,
				   struct ipoib_mcast *mc)
{
	struct ipoib_roce_mcast *rm = mc->fabric_priv;

	if (!rm)
		return;
	if (rm->ipv6_joined)
		ipv6_dev_mc_dec(rm->ndev, (const struct in6_addr *)mc->mgid);
	netdev_put(rm->ndev, &rm->tracker);
	kfree(rm);
	mc->fabric_priv = NULL;
}

/*
 * No SA: the group exists as soon as someone sends to it. A member
 * attaches its QP (done by the caller) and joins the MGID as an IPv6
 * group on the underlay, without which the host's IP stack drops the
 * RoCE v2 packets (and MLD snooping switches would not forward them).
 * Send-only needs nothing but an address handle.
 */
static int ipoib_roce_mcast_join(struct ipoib_dev *priv,
				 struct ipoib_mcast *mc)
{
	struct ipoib_mcast_params *p = &mc->params;
	struct ipoib_roce_mcast *rm;
	int ret, mtu;

	rm = kzalloc(sizeof(*rm), GFP_KERNEL);
	if (!rm)
		return -ENOMEM;
	rm->ndev = ipoib_roce_underlay(priv, &rm->tracker);
	if (IS_ERR(rm->ndev)) {
		ret = PTR_ERR(rm->ndev);
		kfree(rm);
		return ret;
	}
	/*
	 * Not before the underlay is operationally up: rxe reports the port
	 * ACTIVE when its netdev opens, before linkwatch has set the netdev's
	 * operstate and IPv6 its routes, and a send then fails and takes the
	 * QP to the error state. The join is retried with the usual backoff;
	 * on rxe, the port event that follows linkwatch joins at once.
	 */
	if (!netif_oper_up(rm->ndev)) {
		net_ratelimited_function(netdev_info, priv->dev,
					 "waiting for %s to be operationally up (operstate %u)\n",
					 netdev_name(rm->ndev),
					 READ_ONCE(rm->ndev->operstate));
		netdev_put(rm->ndev, &rm->tracker);
		kfree(rm);
		return -ENETDOWN;
	}
	mc->fabric_priv = rm;
	if (!mc->sendonly) {
		ret = ipv6_dev_mc_inc(rm->ndev,
				      (const struct in6_addr *)mc->mgid);
		if (ret)
			return ret;
		rm->ipv6_joined = true;
	}

	/*
	 * No SA to tell the group's MTU: the largest IB MTU the underlay's
	 * frames carry, as the port's active MTU is derived. (Not
	 * ib_query_port(): rxe takes RTNL in it, and we hold RTNL here.)
	 */
	mtu = ib_mtu_enum_to_int(iboe_get_mtu(READ_ONCE(rm->ndev->mtu)));
	if (mtu < 0) {
		ipoib_warn_rl(priv, "%s's MTU carries no IB MTU: cannot join\n",
			      netdev_name(rm->ndev));
		return -EINVAL;
	}
	memset(p, 0, sizeof(*p));
	p->qkey = ipoib_roce_qkey;
	p->ib_mtu = mtu;
	p->mlid = 0;
	p->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&p->ah_attr, priv->port);
	rdma_ah_set_grh(&p->ah_attr, (union ib_gid *)mc->mgid, 0, 0,
			IPOIB_ROCE_MCAST_HOPS, 0);
	rdma_get_mcast_mac((struct in6_addr *)mc->mgid, p->ah_attr.roce.dmac);
	ipoib_mcast_joined(mc, 0);
	return 0;
}

/*
 * No SA: a RoCE v2 path record from what resolution found (the peer's MAC
 * and hop limit), the port's P_Key and the MTU the underlay allows.
 */
static void ipoib_roce_cm_path(struct ipoib_dev *priv, struct ipoib_path *path,
			       struct sa_path_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->rec_type = SA_PATH_REC_TYPE_ROCE_V2;
	ipoib_local_gid(priv, &rec->sgid);
	rec->dgid = path->dgid;
	sa_path_set_dmac(rec, path->ah_attr.roce.dmac);
	rec->roce.route_resolved = true;
	rec->hop_limit = rdma_ah_read_grh(&path->ah_attr)->hop_limit;
	rec->pkey = cpu_to_be16(priv->pkey);
	rec->mtu_selector = IB_SA_EQ;
	rec->mtu = ib_mtu_int_to_enum(READ_ONCE(priv->mcast_mtu));
	rec->rate_selector = IB_SA_EQ;
	rec->rate = IB_RATE_PORT_CURRENT;
	rec->packet_life_time_selector = IB_SA_EQ;
	rec->numb_path = 1;
	rec->reversible = 1;
}

/*
 * Our hardware address names GID 0, whose IPv6 address lives on the
 * underlay. While that address is tentative (RFC 4862 s5.4: duplicate
 * address detection, 1 to 2 s after the link comes up by default) the
 * host's IP stack drops RoCE v2 packets to it, and sends no neighbour
 * solicitation from it: nothing unicast works either way. An IPv4
 * address has no such wait.
 */
static int ipoib_roce_link_ready(struct ipoib_dev *priv, char *why,
				 size_t len)
{
	netdevice_tracker tracker;
	struct net_device *ndev;
	struct in6_addr addr;
	union ib_gid gid;
	struct net *net;
	int ret = 0;

	/*
	 * A hardware HCA terminates RoCE itself and sends to the MAC of the
	 * path: a tentative address stops only the host's own IP stack,
	 * which soft-RoCE's packets go through both ways.
	 */
	if (!ib_uses_virt_dma(priv->ca))
		return 0;
	ipoib_local_gid(priv, &gid);
	memcpy(&addr, gid.raw, sizeof(addr));
	if (ipv6_addr_v4mapped(&addr))
		return 0;
	/* (no table to look in: ipv6.disable=1) */
	if (!ipv6_mod_enabled()) {
		snprintf(why, len, "an IPv6 stack for GID 0 (%pI6c)", &addr);
		return -ENOENT;
	}
	ndev = ipoib_roce_underlay(priv, &tracker);
	if (IS_ERR(ndev))
		return 0;	/* the port's own checks say what is wrong */
	net = dev_net(ndev);
	/* an optimistic address (RFC 4429) cannot solicit either */
	if (ipv6_chk_addr_and_flags(net, &addr, ndev, false, 1,
				    IFA_F_TENTATIVE | IFA_F_OPTIMISTIC))
		goto out;
	if (ipv6_chk_addr_and_flags(net, &addr, ndev, false, 1,
				    IFA_F_DADFAILED)) {
		ret = -EAGAIN;
		snprintf(why, len,
			 "duplicate address detection of %pI6c on %s",
			 &addr, netdev_name(ndev));
	} else if (ipv6_chk_addr_and_flags(net, &addr, ndev, false, 1, 0)) {
		ret = -EADDRINUSE;
		snprintf(why, len,
			 "%pI6c on %s, a duplicate (DAD failed), to be resolved",
			 &addr, netdev_name(ndev));
	} else {
		ret = -ENOENT;
		snprintf(why, len, "GID 0 (%pI6c) to be an address of %s",
			 &addr, netdev_name(ndev));
	}
out:
	netdev_put(ndev, &tracker);
	return ret;
}

/* The core places the default GIDs of the device's netdevs again. */
static void ipoib_roce_gid_restore(struct ipoib_dev *priv)
{
	rdma_roce_rescan_device(priv->ca);
}

/* RoCE runs at the speed of the Ethernet netdev under it. */
static u32 ipoib_roce_link_speed(struct ipoib_dev *priv)
{
	struct ethtool_link_ksettings ks;
	netdevice_tracker tracker;
	struct net_device *ndev;
	u32 speed = SPEED_UNKNOWN;

	ASSERT_RTNL();
	ndev = ipoib_roce_underlay(priv, &tracker);
	if (IS_ERR(ndev))
		return speed;
	if (!__ethtool_get_link_ksettings(ndev, &ks))
		speed = ks.base.speed;
	netdev_put(ndev, &tracker);
	return speed;
}

const struct ipoib_fabric_ops ipoib_fabric_roce = {
	.name		= "roce",
	.port_check	= ipoib_roce_port_check,
	.describe	= ipoib_roce_describe,
	.path_resolve	= ipoib_roce_path_resolve,
	.path_cancel	= ipoib_roce_path_cancel,
	.mcast_join	= ipoib_roce_mcast_join,
	.mcast_leave	= ipoib_roce_mcast_leave,
	.cm_path	= ipoib_roce_cm_path,
	.link_speed	= ipoib_roce_link_speed,
	.link_ready	= ipoib_roce_link_ready,
	.gid_restore	= ipoib_roce_gid_restore,
	.gid_entries_kept = true,
};
