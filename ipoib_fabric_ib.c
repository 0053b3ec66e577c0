// SPDX-License-Identifier: GPL-2.0
/*
 * InfiniBand fabric: a subnet manager assigns LIDs and the subnet
 * administrator answers path and multicast-membership queries.
 */
#include <rdma/ib_sa.h>

#include "ipoib.h"
#include "ipoib_compat.h"

#define IPOIB_SA_TIMEOUT_MS	1000
#define IPOIB_JOIN_FULL		1	/* JoinState: FullMember */
#define IPOIB_JOIN_NONMEMBER	2	/* JoinState: NonMember */
#define IPOIB_JOIN_SO_NONMEMBER	4	/* JoinState: SendOnlyNonMember */
#define IPOIB_JOIN_SENDONLY	8	/* JoinState: SendOnlyFullMember */

static struct ib_sa_client ipoib_sa_client;

int ipoib_fabric_ib_register(void)
{
	int ret = ipoib_ib_notice_init();

	if (ret)
		return ret;
	ib_sa_register_client(&ipoib_sa_client);
	return 0;
}

void ipoib_fabric_ib_unregister(void)
{
	ib_sa_unregister_client(&ipoib_sa_client);
	ipoib_ib_notice_exit();
}

/*
 * A path's SA query and answer. It lives as long as its path (freed after
 * the path's grace period, ipoib_ib_path_free): transmit reads rec under
 * RCU for a CM REQ. lock orders the query's end against its cancel: the
 * SA reuses query ids, so only a query still in flight may be cancelled.
 */
struct ipoib_ib_path {
	spinlock_t lock;		/* in_flight vs the SA callback */
	bool in_flight;			/* under lock */
	struct ib_sa_query *query;
	int id;
	struct completion done;
	struct sa_path_rec rec;		/* the answer, for CM REQs */
};

static int ipoib_ib_port_check(struct ipoib_dev *priv)
{
	/* RFC 4391 s5: the link is formed by SA joins of the broadcast group */
	if (!rdma_cap_ib_sa(priv->ca, priv->port) ||
	    !rdma_cap_ib_mcast(priv->ca, priv->port)) {
		dev_warn(&priv->ca->dev, "port %u: no SA or multicast support\n",
			 priv->port);
		return -EOPNOTSUPP;
	}
	return 0;
}

static void ipoib_ib_describe(struct ipoib_dev *priv, char *buf, size_t len)
{
	struct ib_port_attr attr;

	if (ib_query_port(priv->ca, priv->port, &attr)) {
		snprintf(buf, len, "InfiniBand");
		return;
	}
	snprintf(buf, len, "InfiniBand, LID 0x%x, SM LID 0x%x", attr.lid,
		 attr.sm_lid);
}

static void ipoib_ib_path_done(int status, struct sa_path_rec *rec,
			       IPOIB_NUM_PRS_T num_prs, void *context)
{
	struct ipoib_path *path = context;
	struct ipoib_dev *priv = path->priv;
	struct ipoib_ib_path *ip = path->fabric_priv;
	unsigned long flags;

	if (!status && !rec)
		status = -ENOENT;
	if (!status)
		status = ib_init_ah_attr_from_path(priv->ca, priv->port, rec,
						   &path->ah_attr, NULL);
	if (!status) {
		ip->rec = *rec;
		path->dlid = be32_to_cpu(sa_path_get_dlid(rec));
		path->sl = rec->sl;
		path->rate = rec->rate;
		path->mtu = rec->mtu;
	}
	spin_lock_irqsave(&ip->lock, flags);
	ip->in_flight = false;
	spin_unlock_irqrestore(&ip->lock, flags);
	ipoib_path_resolved(path, status);
	complete(&ip->done);
}

/* Stop a query in flight and wait for its callback; ip stays. */
static void ipoib_ib_path_cancel(struct ipoib_dev *priv,
				 struct ipoib_path *path)
{
	struct ipoib_ib_path *ip = path->fabric_priv;
	unsigned long flags;

	if (!ip)
		return;
	spin_lock_irqsave(&ip->lock, flags);
	if (ip->in_flight)
		ib_sa_cancel_query(ip->id, ip->query);
	spin_unlock_irqrestore(&ip->lock, flags);
	wait_for_completion(&ip->done);
}

static void ipoib_ib_path_free(struct ipoib_path *path)
{
	kfree(path->fabric_priv);
}

/* RFC 4391 s9.1.2: LID, SL and rate come from the SA's PathRecord. */
static int ipoib_ib_path_resolve(struct ipoib_dev *priv,
				 struct ipoib_path *path)
{
	struct sa_path_rec rec = {
		.rec_type = SA_PATH_REC_TYPE_IB,
		.dgid = path->dgid,
		.pkey = cpu_to_be16(priv->pkey),
		.numb_path = 1,
		.reversible = 1,
	};
	struct ipoib_ib_path *ip = path->fabric_priv;
	int id;

	ipoib_local_gid(priv, &rec.sgid);
	/* as the in-tree driver asks: QoS policies may go by it */
	rec.traffic_class = READ_ONCE(priv->bcast_tclass);
	if (ip) {
		ipoib_ib_path_cancel(priv, path);
		reinit_completion(&ip->done);
	} else {
		ip = kzalloc(sizeof(*ip), GFP_KERNEL);
		if (!ip)
			return -ENOMEM;
		spin_lock_init(&ip->lock);
		init_completion(&ip->done);
		path->fabric_priv = ip;
	}
	/*
	 * Cancels are ordered after this function (same work, or
	 * cancel_work_sync() first); the callback may come before the id
	 * is stored, and clears in_flight.
	 */
	spin_lock_irq(&ip->lock);
	ip->in_flight = true;
	spin_unlock_irq(&ip->lock);
	id = ib_sa_path_rec_get(&ipoib_sa_client, priv->ca, priv->port,
				&rec, IB_SA_PATH_REC_DGID |
				IB_SA_PATH_REC_SGID |
				IB_SA_PATH_REC_NUMB_PATH |
				IB_SA_PATH_REC_TRAFFIC_CLASS |
				IB_SA_PATH_REC_REVERSIBLE |
				IB_SA_PATH_REC_PKEY, IPOIB_SA_TIMEOUT_MS,
				GFP_KERNEL, ipoib_ib_path_done, path,
				&ip->query);
	ip->id = id;
	if (id < 0) {
		/* no callback will come: nothing to cancel or wait for */
		spin_lock_irq(&ip->lock);
		ip->in_flight = false;
		spin_unlock_irq(&ip->lock);
		complete(&ip->done);
		return id;
	}
	return 0;
}

static int ipoib_ib_mcast_done(int status, struct ib_sa_multicast *sa_mc)
{
	struct ipoib_mcast *mc = sa_mc->context;
	struct ipoib_dev *priv = mc->priv;
	struct ib_sa_mcmember_rec *rec = &sa_mc->rec;
	struct ipoib_mcast_params *p = &mc->params;

	/* -ENETRESET: the SA dropped us (port or SM event) */
	if (!status && ib_mtu_enum_to_int(rec->mtu) < 0) {
		/* a bad SA's answer must not become our MTU */
		ipoib_warn_rl(priv, "SA answered a join with MTU code %u: ignored\n",
			      rec->mtu);
		/* (not -EINVAL, which is the SA's refusal) */
		status = -EPROTO;
	}
	if (!status) {
		rdma_destroy_ah_attr(&p->ah_attr);
		p->qkey = be32_to_cpu(rec->qkey);
		p->ib_mtu = ib_mtu_enum_to_int(rec->mtu);
		p->mlid = be16_to_cpu(rec->mlid);
		status = ib_init_ah_from_mcmember(priv->ca, priv->port, rec,
						  NULL, IB_GID_TYPE_IB,
						  &p->ah_attr);
	}
	ipoib_mcast_joined(mc, status);
	/* the membership stays until mcast_leave() frees it */
	return 0;
}

/*
 * RFC 4391 s5: a FullMember join of the broadcast group, which the SM
 * creates. Other groups are created by the first joiner with the
 * broadcast group's parameters, so that all of the link can use them.
 */
static int ipoib_ib_mcast_join(struct ipoib_dev *priv, struct ipoib_mcast *mc)
{
	struct ipoib_mcast *bc = priv->broadcast;
	struct ib_sa_mcmember_rec rec = {
		.port_gid = priv->local_gid,
		.pkey = cpu_to_be16(priv->pkey),
	};
	ib_sa_comp_mask mask = IB_SA_MCMEMBER_REC_MGID |
			       IB_SA_MCMEMBER_REC_PORT_GID |
			       IB_SA_MCMEMBER_REC_PKEY |
			       IB_SA_MCMEMBER_REC_JOIN_STATE;
	struct ib_sa_multicast *sa_mc;

	/*
	 * RFC 4391 s10: a sender joins as SendOnlyNonMember, which creates
	 * no group; the in-tree driver's SendOnlyFullMember (IBA 1.3)
	 * creates it, so that the first packet never waits for a listener.
	 */
	if (mc->nonmember)
		rec.join_state = IPOIB_JOIN_NONMEMBER;	/* RFC 4391 s11 */
	else if (!mc->sendonly)
		rec.join_state = IPOIB_JOIN_FULL;
	else if (ipoib_sendonly_nonmember)
		rec.join_state = IPOIB_JOIN_SO_NONMEMBER;
	else
		rec.join_state = IPOIB_JOIN_SENDONLY;
	memcpy(rec.mgid.raw, mc->mgid, sizeof(rec.mgid.raw));
	if (mc != bc) {
		if (!bc || bc->state != IPOIB_MCAST_JOINED)
			return -EAGAIN;
		rec.qkey = cpu_to_be32(priv->qkey);
		rec.mtu_selector = IB_SA_EQ;
		rec.mtu = ib_mtu_int_to_enum(priv->mcast_mtu);
		rec.sl = rdma_ah_get_sl(&bc->params.ah_attr);
		rec.traffic_class =
			rdma_ah_read_grh(&bc->params.ah_attr)->traffic_class;
		rec.flow_label = cpu_to_be32(rdma_ah_read_grh(&bc->params.ah_attr)->flow_label);
		rec.hop_limit = rdma_ah_read_grh(&bc->params.ah_attr)->hop_limit;
		rec.rate_selector = IB_SA_EQ;
		rec.rate = rdma_ah_get_static_rate(&bc->params.ah_attr);
		mask |= IB_SA_MCMEMBER_REC_QKEY |
			IB_SA_MCMEMBER_REC_MTU_SELECTOR |
			IB_SA_MCMEMBER_REC_MTU | IB_SA_MCMEMBER_REC_SL |
			IB_SA_MCMEMBER_REC_TRAFFIC_CLASS |
			IB_SA_MCMEMBER_REC_FLOW_LABEL |
			IB_SA_MCMEMBER_REC_HOP_LIMIT |
			IB_SA_MCMEMBER_REC_RATE_SELECTOR |
			IB_SA_MCMEMBER_REC_RATE;
	}
	sa_mc = ib_sa_join_multicast(&ipoib_sa_client, priv->ca, priv->port,
				     &rec, mask, GFP_KERNEL,
				     ipoib_ib_mcast_done, mc);
	if (IS_ERR(sa_mc))
		return PTR_ERR(sa_mc);
	mc->fabric_priv = sa_mc;
	return 0;
}

static void ipoib_ib_mcast_leave(struct ipoib_dev *priv,
				 struct ipoib_mcast *mc)
{
	struct ib_sa_multicast *sa_mc = mc->fabric_priv;

	if (!sa_mc)
		return;
	/* waits for a callback in flight; leaves the group on the SA */
	ib_sa_free_multicast(sa_mc);
	mc->fabric_priv = NULL;
}

/*
 * ib_sa keeps every membership of the port, ours and userspace's (through
 * ib_ucma); asked only for groups we have not joined.
 */
static bool ipoib_ib_user_joined(struct ipoib_dev *priv, const u8 *mgid)
{
	struct ib_sa_mcmember_rec rec;
	union ib_gid gid;

	memcpy(gid.raw, mgid, sizeof(gid.raw));
	return !ib_sa_get_mcmember_rec(priv->ca, priv->port, &gid, &rec);
}

/* The SA's PathRecord serves the CM as it is (RFC 4755 s3.2). */
static void ipoib_ib_cm_path(struct ipoib_dev *priv, struct ipoib_path *path,
			     struct sa_path_rec *rec)
{
	struct ipoib_ib_path *ip = path->fabric_priv;

	*rec = ip->rec;
}

/* Lane rate times lane count (IBTA vol. 1, PortInfo:LinkSpeedActive). */
static u32 ipoib_ib_link_speed(struct ipoib_dev *priv)
{
	struct ib_port_attr attr;
	int lanes;
	u32 lane;

	if (ib_query_port(priv->ca, priv->port, &attr))
		return SPEED_UNKNOWN;
	switch (attr.active_speed) {
	case IB_SPEED_SDR:
		lane = 2500;
		break;
	case IB_SPEED_DDR:
		lane = 5000;
		break;
	case IB_SPEED_QDR:
	case IB_SPEED_FDR10:
		lane = 10000;
		break;
	case IB_SPEED_FDR:
		lane = 14000;
		break;
	case IB_SPEED_EDR:
		lane = 25000;
		break;
	case IB_SPEED_HDR:
		lane = 50000;
		break;
	case IB_SPEED_NDR:
		lane = 100000;
		break;
	case IPOIB_SPEED_XDR:
		lane = 200000;
		break;
	default:
		return SPEED_UNKNOWN;
	}
	lanes = ib_width_enum_to_int(attr.active_width);
	return lanes > 0 ? lane * lanes : SPEED_UNKNOWN;
}

const struct ipoib_fabric_ops ipoib_fabric_ib = {
	.name		= "ib",
	.port_check	= ipoib_ib_port_check,
	.describe	= ipoib_ib_describe,
	.path_resolve	= ipoib_ib_path_resolve,
	.path_cancel	= ipoib_ib_path_cancel,
	.path_free	= ipoib_ib_path_free,
	.mcast_join	= ipoib_ib_mcast_join,
	.mcast_leave	= ipoib_ib_mcast_leave,
	.mcast_watch	= ipoib_ib_mcast_watch,
	.mcast_list	= ipoib_ib_mcast_list,
	.user_joined	= ipoib_ib_user_joined,
	.cm_path	= ipoib_ib_cm_path,
	.link_speed	= ipoib_ib_link_speed,
};
