// SPDX-License-Identifier: GPL-2.0
/*
 * InfiniBand fabric: the SA's reports of multicast groups created and
 * deleted (traps 66 and 67). RFC 4391 s10: senders MUST follow them, so
 * that a SendOnlyNonMember sender learns when a listener's group appears
 * and when the group it sends to is gone; and (s11) a router, whose
 * interface is in allmulticast, learns of every group to join.
 *
 * One subscription per port serves every interface of the port that
 * follows groups: a MAD agent takes the SA's unsolicited Reports (only
 * from the SM's LID), and a SubnAdmSet(InformInfo) per trap subscribes.
 * A new SM knows nothing of its predecessor's subscribers, so every SM
 * event subscribes again. Once subscribed, a GetTable of MCMemberRecords
 * lists each router's partition: a group created after the list was
 * asked for is reported, none falls in between.
 *
 * The port's work reconciles the SA with the port's users: it subscribes
 * while an interface watches, and cancels both subscriptions once none
 * does (a new subscription waits for the cancels, so that a late cancel
 * cannot remove it). The agent itself stays until the RDMA device goes
 * (ipoib_fabric_ib_remove()), so that watching again needs no new agent.
 */
#include <rdma/ib_mad.h>

#include "ipoib.h"

#define IPOIB_NOTICE_TIMEOUT_MS	1000
#define IPOIB_NOTICE_RETRIES	2
#define IPOIB_NOTICE_MAX_BACKOFF 8	/* seconds */
#define IPOIB_QP1		1
/* MAD status of an SA's ERR_NO_RECORDS: class-specific code 3, bits 8-14 */
#define IPOIB_SA_STATUS_NO_RECORDS	(3 << 8)
/* records of one GetTable we look at: over a thousand groups */
#define IPOIB_NOTICE_TABLE_MAX	(64 * 1024)

static const u16 ipoib_notice_traps[] = {
	IPOIB_TRAP_MCG_CREATED,
	IPOIB_TRAP_MCG_DELETED,
};

#define IPOIB_NOTICE_ALL	(BIT(ARRAY_SIZE(ipoib_notice_traps)) - 1)

/*
 * send_buf->context[0]: what the MAD is. A Set: trap index, subscribe,
 * generation. A GetTable: the P_Key. context[1]: once the SA answered
 * well, the MAD itself (the verdict for the send handler).
 */
#define IPOIB_NOTICE_SET	BIT(0)
#define IPOIB_NOTICE_QUERY	BIT(1)
#define IPOIB_NOTICE_SUB	BIT(2)
#define IPOIB_NOTICE_IDX_SHIFT	3
#define IPOIB_NOTICE_IDX_MASK	0x3
#define IPOIB_NOTICE_GEN_SHIFT	8
#define IPOIB_NOTICE_GEN_MASK	0xffffffu
#define IPOIB_NOTICE_PKEY_SHIFT	16

/* One per port whose interfaces follow groups. */
struct ipoib_notice_port {
	struct list_head node;		/* ipoib_notice_ports */
	struct ib_device *ca;
	u32 port;
	struct ib_mad_agent *agent;
	struct ib_event_handler handler;
	struct delayed_work work;	/* subscribes and lists, or cancels */
	/* reports are delivered under it, so that none outlives a listener */
	struct mutex listeners_mutex;
	struct list_head listeners;	/* struct ipoib_notice_listener */
	spinlock_t lock;		/* guards what follows (IRQs off) */
	unsigned int users;		/* interfaces watching */
	bool closing;			/* the device goes */
	bool dirty;			/* subscribed since the last cancels */
	bool failed;			/* a Set of this round failed */
	bool stale;			/* ... was of an SM that is gone */
	bool fresh;			/* subscribed anew: list again */
	unsigned int subscribed;	/* bit per ipoib_notice_traps[] */
	unsigned int in_flight;		/* Sets not yet completed */
	unsigned int gen;		/* SM events seen: answers older are stale */
	unsigned int backoff;		/* seconds */
	u32 tid;
};

struct ipoib_notice_listener {
	struct list_head node;		/* np->listeners */
	struct ipoib_dev *priv;
	struct ipoib_notice_port *np;
	u16 pkey;
	/* under np->listeners_mutex: */
	bool lists;			/* mcast_list on */
	bool list_due;			/* a list to ask for */
	bool list_in_flight;
};

static LIST_HEAD(ipoib_notice_ports);
static DEFINE_MUTEX(ipoib_notice_mutex);
static struct workqueue_struct *ipoib_notice_wq;

static void ipoib_notice_retry(struct ipoib_notice_port *np)
{
	lockdep_assert_held(&np->lock);
	if (np->closing)
		return;
	np->backoff = np->backoff ?
		min(np->backoff * 2, IPOIB_NOTICE_MAX_BACKOFF) : 1;
	mod_delayed_work(ipoib_notice_wq, &np->work, np->backoff * HZ);
}

static void ipoib_notice_retry_soon(struct ipoib_notice_port *np)
{
	spin_lock_irq(&np->lock);
	ipoib_notice_retry(np);
	spin_unlock_irq(&np->lock);
}

static void ipoib_notice_mad_free(struct ib_mad_send_buf *msg)
{
	rdma_destroy_ah(msg->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_free_send_mad(msg);
}

/* A request to the SA, at the SM's LID: the header filled in, no data. */
static struct ib_mad_send_buf *ipoib_notice_mad(struct ipoib_notice_port *np,
						u8 method, u16 attr_id)
{
	struct rdma_ah_attr ah_attr = {};
	struct ib_mad_send_buf *msg;
	struct ib_port_attr attr;
	struct ib_sa_mad *mad;
	struct ib_ah *ah;
	u16 pkey_index;
	int ret;

	ret = ib_query_port(np->ca, np->port, &attr);
	if (ret)
		return ERR_PTR(ret);
	if (attr.state != IB_PORT_ACTIVE || !attr.sm_lid)
		return ERR_PTR(-EAGAIN);
	/* the SA listens on the default partition */
	if (ib_find_pkey(np->ca, np->port, IB_DEFAULT_PKEY_FULL, &pkey_index))
		return ERR_PTR(-ENOENT);
	ah_attr.type = rdma_ah_find_type(np->ca, np->port);
	rdma_ah_set_dlid(&ah_attr, attr.sm_lid);
	rdma_ah_set_sl(&ah_attr, attr.sm_sl);
	rdma_ah_set_port_num(&ah_attr, np->port);
	ah = rdma_create_ah(np->agent->qp->pd, &ah_attr,
			    RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah))
		return ERR_CAST(ah);
	msg = ib_create_send_mad(np->agent, IPOIB_QP1, pkey_index, 0,
				 IB_MGMT_SA_HDR, IB_MGMT_SA_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	if (IS_ERR(msg)) {
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		return msg;
	}
	msg->ah = ah;
	msg->timeout_ms = IPOIB_NOTICE_TIMEOUT_MS;
	msg->retries = IPOIB_NOTICE_RETRIES;
	mad = msg->mad;
	mad->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = IB_MGMT_CLASS_SUBN_ADM;
	mad->mad_hdr.class_version = IB_SA_CLASS_VERSION;
	mad->mad_hdr.method = method;
	mad->mad_hdr.attr_id = cpu_to_be16(attr_id);
	spin_lock_irq(&np->lock);
	/* the MAD layer routes answers to us by the TID's upper half */
	mad->mad_hdr.tid = cpu_to_be64((u64)np->agent->hi_tid << 32 |
				       np->tid++);
	spin_unlock_irq(&np->lock);
	return msg;
}

/* An InformInfo Set: a subscription, or its cancel. */
static int ipoib_notice_send(struct ipoib_notice_port *np, unsigned int idx,
			     bool subscribe, unsigned int gen)
{
	struct ib_mad_send_buf *msg;
	struct ib_sa_mad *mad;
	int ret;

	msg = ipoib_notice_mad(np, IB_MGMT_METHOD_SET, IB_SA_ATTR_INFORM_INFO);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	mad = msg->mad;
	ipoib_sa_inform_pack(mad->data, ipoib_notice_traps[idx], subscribe,
			     IPOIB_QP1);
	msg->context[0] = (void *)(uintptr_t)(IPOIB_NOTICE_SET |
		(subscribe ? IPOIB_NOTICE_SUB : 0) |
		idx << IPOIB_NOTICE_IDX_SHIFT |
		(gen & IPOIB_NOTICE_GEN_MASK) << IPOIB_NOTICE_GEN_SHIFT);
	msg->context[1] = NULL;
	spin_lock_irq(&np->lock);
	np->in_flight++;
	spin_unlock_irq(&np->lock);
	ret = ib_post_send_mad(msg, NULL);
	if (ret) {
		spin_lock_irq(&np->lock);
		np->in_flight--;
		spin_unlock_irq(&np->lock);
		ipoib_notice_mad_free(msg);
	}
	return ret;
}

/* RFC 4391 s11 A: a GetTable of the partition's groups. */
static int ipoib_notice_query(struct ipoib_notice_port *np, u16 pkey)
{
	struct ib_mad_send_buf *msg;
	struct ib_sa_mad *mad;
	int ret;

	msg = ipoib_notice_mad(np, IB_SA_METHOD_GET_TABLE,
			       IB_SA_ATTR_MC_MEMBER_REC);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	mad = msg->mad;
	mad->sa_hdr.comp_mask = IB_SA_MCMEMBER_REC_PKEY;
	ipoib_sa_mcmember_query_pack(mad->data, pkey);
	msg->context[0] = (void *)(uintptr_t)(IPOIB_NOTICE_QUERY |
		(uintptr_t)pkey << IPOIB_NOTICE_PKEY_SHIFT);
	msg->context[1] = NULL;
	ret = ib_post_send_mad(msg, NULL);
	if (ret)
		ipoib_notice_mad_free(msg);
	return ret;
}

/* Ask for the lists due; with the subscriptions in place (see top). */
static void ipoib_notice_lists(struct ipoib_notice_port *np, bool fresh)
{
	struct ipoib_notice_listener *l;
	bool retry = false;

	mutex_lock(&np->listeners_mutex);
	list_for_each_entry(l, &np->listeners, node) {
		if (fresh && l->lists)
			l->list_due = true;
		if (!l->list_due || l->list_in_flight)
			continue;
		if (ipoib_notice_query(np, l->pkey))
			retry = true;
		else
			l->list_in_flight = true;
	}
	mutex_unlock(&np->listeners_mutex);
	if (retry)
		ipoib_notice_retry_soon(np);
}

static void ipoib_notice_work(struct work_struct *work)
{
	struct ipoib_notice_port *np =
		container_of(work, struct ipoib_notice_port, work.work);
	unsigned int want = 0, gen, i;
	bool all, fresh, cancel;
	int ret = 0;

	spin_lock_irq(&np->lock);
	all = np->users && np->subscribed == IPOIB_NOTICE_ALL;
	fresh = all && np->fresh;
	np->fresh &= !fresh;
	/* a round in flight ends first (set_done comes back here) */
	cancel = !np->in_flight && !np->users && np->dirty;
	if (cancel) {
		np->dirty = false;
		np->subscribed = 0;
	} else if (!np->in_flight && np->users) {
		want = IPOIB_NOTICE_ALL & ~np->subscribed;
		np->dirty |= !!want;
	}
	if (np->closing) {
		want = 0;
		cancel = false;
		all = false;
	}
	gen = np->gen;
	spin_unlock_irq(&np->lock);
	if (fresh)
		dev_info(&np->ca->dev, "port %u: following the SA's reports of multicast groups created and deleted\n",
			 np->port);
	if (all) {
		ipoib_notice_lists(np, fresh);
		return;
	}
	/* cancels: best effort, the SA keeps nothing we cannot replace */
	for (i = 0; cancel && i < ARRAY_SIZE(ipoib_notice_traps); i++)
		ipoib_notice_send(np, i, false, gen);
	for (i = 0; i < ARRAY_SIZE(ipoib_notice_traps) && !ret; i++)
		if (want & BIT(i))
			ret = ipoib_notice_send(np, i, true, gen);
	if (ret) {
		dev_dbg(&np->ca->dev, "port %u: InformInfo not sent: %d\n",
			np->port, ret);
		ipoib_notice_retry_soon(np);
	}
}

/*
 * A Set is done: answered, timed out or cancelled. A round of Sets ends
 * with the last of them: then a failure retries later, an answer from an
 * SM that has gone since starts again at once, and a round that leaves
 * all subscribed lists.
 */
static void ipoib_notice_set_done(struct ipoib_notice_port *np,
				  struct ib_mad_send_buf *msg, bool ok)
{
	unsigned long tag = (uintptr_t)msg->context[0];
	unsigned int idx = (tag >> IPOIB_NOTICE_IDX_SHIFT) &
			   IPOIB_NOTICE_IDX_MASK;
	unsigned int gen = (tag >> IPOIB_NOTICE_GEN_SHIFT) &
			   IPOIB_NOTICE_GEN_MASK;
	unsigned long flags;

	spin_lock_irqsave(&np->lock, flags);
	np->in_flight--;
	if (np->closing)
		goto out;
	if (!(tag & IPOIB_NOTICE_SUB)) {
		/* cancels done: subscribe again if someone watches now */
		if (!np->in_flight && np->users)
			mod_delayed_work(ipoib_notice_wq, &np->work, 0);
		goto out;
	}
	if (gen != (np->gen & IPOIB_NOTICE_GEN_MASK))
		np->stale = true;
	else if (ok)
		np->subscribed |= BIT(idx);
	else
		np->failed = true;
	if (np->in_flight)
		goto out;
	if (np->stale) {
		mod_delayed_work(ipoib_notice_wq, &np->work, 0);
	} else if (np->failed || np->subscribed != IPOIB_NOTICE_ALL) {
		ipoib_notice_retry(np);
	} else {
		np->backoff = 0;
		np->fresh = true;
		mod_delayed_work(ipoib_notice_wq, &np->work, 0);
	}
	np->stale = false;
	np->failed = false;
out:
	spin_unlock_irqrestore(&np->lock, flags);
}

/* A GetTable is done: unless it was answered, ask again later. */
static void ipoib_notice_query_done(struct ipoib_notice_port *np,
				    struct ib_mad_send_buf *msg,
				    enum ib_wc_status status)
{
	u16 pkey = (uintptr_t)msg->context[0] >> IPOIB_NOTICE_PKEY_SHIFT;
	struct ipoib_notice_listener *l;
	bool retry = false;

	mutex_lock(&np->listeners_mutex);
	list_for_each_entry(l, &np->listeners, node) {
		if (l->pkey != pkey || !l->list_in_flight)
			continue;
		l->list_in_flight = false;
		retry |= l->list_due;
	}
	mutex_unlock(&np->listeners_mutex);
	/* a flush: the agent is going, nothing to say */
	if (!retry || status == IB_WC_WR_FLUSH_ERR)
		return;
	dev_warn_ratelimited(&np->ca->dev, "port %u: the SA did not list the groups of P_Key 0x%04x (%d): asking again\n",
			     np->port, pkey, status);
	ipoib_notice_retry_soon(np);
}

/* A subscription not taken: what the SA said (@mad) or did not. */
static void ipoib_notice_refused(struct ipoib_notice_port *np,
				 struct ib_mad_send_buf *msg,
				 const struct ib_sa_mad *mad,
				 enum ib_wc_status status)
{
	unsigned long tag = (uintptr_t)msg->context[0];
	unsigned int idx = (tag >> IPOIB_NOTICE_IDX_SHIFT) &
			   IPOIB_NOTICE_IDX_MASK;

	if (!(tag & IPOIB_NOTICE_SUB) || idx >= ARRAY_SIZE(ipoib_notice_traps))
		return;
	if (mad)
		dev_warn_ratelimited(&np->ca->dev, "port %u: the SA refused to report trap %u (MAD status 0x%04x): asking again later\n",
				     np->port, ipoib_notice_traps[idx],
				     be16_to_cpu(mad->mad_hdr.status));
	else if (status != IB_WC_WR_FLUSH_ERR)
		dev_warn_ratelimited(&np->ca->dev, "port %u: the SA did not answer a subscription to trap %u (%s): asking again later\n",
				     np->port, ipoib_notice_traps[idx],
				     ib_wc_status_msg(status));
}

static void ipoib_notice_sent(struct ib_mad_agent *agent,
			      struct ib_mad_send_wc *wc)
{
	struct ipoib_notice_port *np = agent->context;
	struct ib_mad_send_buf *msg = wc->send_buf;
	unsigned long tag = (uintptr_t)msg->context[0];
	bool ok = wc->status == IB_WC_SUCCESS && msg->context[1] == msg;

	if ((tag & IPOIB_NOTICE_SET) && wc->status != IB_WC_SUCCESS)
		ipoib_notice_refused(np, msg, NULL, wc->status);
	if (tag & IPOIB_NOTICE_SET)
		ipoib_notice_set_done(np, msg, ok);
	else if (tag & IPOIB_NOTICE_QUERY)
		ipoib_notice_query_done(np, msg, wc->status);
	ipoib_notice_mad_free(msg);
}

/* The SA answered a Set: the verdict goes to the send completion. */
static void ipoib_notice_answered(struct ipoib_notice_port *np,
				  struct ib_mad_send_buf *msg,
				  const struct ib_sa_mad *mad)
{
	if (!mad->mad_hdr.status &&
	    mad->mad_hdr.method == IB_MGMT_METHOD_GET_RESP)
		msg->context[1] = msg;
	else
		ipoib_notice_refused(np, msg, mad, IB_WC_SUCCESS);
}

/* One buffer of the records, out of however many RMPP segments. */
static u8 *ipoib_notice_gather(struct ipoib_notice_port *np,
			       struct ib_mad_recv_wc *rwc, size_t *len)
{
	size_t seg_data = rwc->mad_seg_size - IB_MGMT_SA_HDR;
	struct ib_mad_recv_buf *seg;
	size_t want, off = 0;
	u8 *data;

	if (rwc->mad_seg_size <= IB_MGMT_SA_HDR)
		return NULL;
	want = rwc->mad_len - IB_MGMT_SA_HDR;
	if (want > IPOIB_NOTICE_TABLE_MAX) {
		dev_warn_ratelimited(&np->ca->dev, "port %u: a list of %zu octets of groups, the first %u taken\n",
				     np->port, want, IPOIB_NOTICE_TABLE_MAX);
		want = IPOIB_NOTICE_TABLE_MAX;
	}
	data = kvmalloc(want, GFP_KERNEL);
	if (!data)
		return NULL;
	list_for_each_entry(seg, &rwc->rmpp_list, list) {
		size_t n = min(want - off, seg_data);

		memcpy(data + off, (u8 *)seg->mad + IB_MGMT_SA_HDR, n);
		off += n;
		if (off == want)
			break;
	}
	*len = off;
	return data;
}

/* The partition's groups, each reported as created to its routers. */
static void ipoib_notice_table(struct ipoib_notice_port *np,
			       struct ib_mad_send_buf *msg,
			       struct ib_mad_recv_wc *rwc)
{
	const struct ib_sa_mad *mad = (const struct ib_sa_mad *)rwc->recv_buf.mad;
	u16 pkey = (uintptr_t)msg->context[0] >> IPOIB_NOTICE_PKEY_SHIFT;
	u16 offset = be16_to_cpu(mad->sa_hdr.attr_offset);
	struct ipoib_notice_listener *l;
	size_t len = 0, n = 0, i;
	u8 *data = NULL;
	bool got = true;

	/* an SA may answer "no records" for a partition without groups */
	if (mad->mad_hdr.method != IB_SA_METHOD_GET_TABLE_RESP ||
	    (mad->mad_hdr.status &&
	     mad->mad_hdr.status != cpu_to_be16(IPOIB_SA_STATUS_NO_RECORDS)))
		return;
	msg->context[1] = msg;
	if (!mad->mad_hdr.status && rwc->mad_len > IB_MGMT_SA_HDR) {
		data = ipoib_notice_gather(np, rwc, &len);
		got = data;
		if (data)
			n = ipoib_sa_table_count(len, offset);
	}
	mutex_lock(&np->listeners_mutex);
	list_for_each_entry(l, &np->listeners, node) {
		if (l->pkey != pkey || !l->list_in_flight)
			continue;
		l->list_due = !got;
		for (i = 0; i < n; i++)
			ipoib_mcast_group_event(l->priv,
						data + i * (size_t)offset * 8,
						true);
	}
	mutex_unlock(&np->listeners_mutex);
	kvfree(data);
}

/* Every Report gets its ReportResp, or the SA sends it again. */
static void ipoib_notice_respond(struct ipoib_notice_port *np,
				 struct ib_mad_recv_wc *rwc)
{
	struct ib_mad_send_buf *msg;
	struct ib_sa_mad *mad;
	struct ib_ah *ah;

	ah = ib_create_ah_from_wc(np->agent->qp->pd, rwc->wc,
				  rwc->recv_buf.grh, np->port);
	if (IS_ERR(ah))
		return;
	msg = ib_create_send_mad(np->agent, rwc->wc->src_qp,
				 rwc->wc->pkey_index, 0, IB_MGMT_SA_HDR,
				 IB_MGMT_SA_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	if (IS_ERR(msg)) {
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		return;
	}
	mad = msg->mad;
	memcpy(mad, rwc->recv_buf.mad, sizeof(*mad));
	mad->mad_hdr.method = IB_MGMT_METHOD_REPORT_RESP;
	mad->mad_hdr.status = 0;
	msg->ah = ah;
	msg->context[0] = NULL;
	if (ib_post_send_mad(msg, NULL))
		ipoib_notice_mad_free(msg);
}

/* Reports come from the SA, which lives at the SM's LID; others lie. */
static bool ipoib_notice_from_sa(struct ipoib_notice_port *np,
				 struct ib_mad_recv_wc *rwc)
{
	struct ib_port_attr attr;

	return !ib_query_port(np->ca, np->port, &attr) &&
	       attr.sm_lid && rwc->wc->slid == attr.sm_lid;
}

static void ipoib_notice_report(struct ipoib_notice_port *np,
				struct ib_mad_recv_wc *rwc)
{
	const struct ib_sa_mad *mad = (const struct ib_sa_mad *)rwc->recv_buf.mad;
	struct ipoib_notice_listener *l;
	u8 gid[IPOIB_GID_LEN];
	u16 trap;

	if (!ipoib_notice_from_sa(np, rwc)) {
		dev_warn_ratelimited(&np->ca->dev, "port %u: a Report from LID 0x%x, not the SM's, dropped\n",
				     np->port, rwc->wc->slid);
		return;
	}
	ipoib_notice_respond(np, rwc);
	if (mad->mad_hdr.attr_id != cpu_to_be16(IB_SA_ATTR_NOTICE) ||
	    rwc->mad_len < (int)sizeof(*mad) ||
	    ipoib_sa_notice_parse(mad->data, sizeof(mad->data), &trap, gid) ||
	    (trap != IPOIB_TRAP_MCG_CREATED && trap != IPOIB_TRAP_MCG_DELETED))
		return;
	mutex_lock(&np->listeners_mutex);
	list_for_each_entry(l, &np->listeners, node)
		ipoib_mcast_group_event(l->priv, gid,
					trap == IPOIB_TRAP_MCG_CREATED);
	mutex_unlock(&np->listeners_mutex);
}

static void ipoib_notice_recv(struct ib_mad_agent *agent,
			      struct ib_mad_send_buf *send_buf,
			      struct ib_mad_recv_wc *rwc)
{
	struct ipoib_notice_port *np = agent->context;
	const struct ib_sa_mad *mad = (const struct ib_sa_mad *)rwc->recv_buf.mad;

	if (send_buf && ((uintptr_t)send_buf->context[0] & IPOIB_NOTICE_QUERY))
		ipoib_notice_table(np, send_buf, rwc);
	else if (send_buf)
		ipoib_notice_answered(np, send_buf, mad);
	else if (mad->mad_hdr.method == IB_MGMT_METHOD_REPORT)
		ipoib_notice_report(np, rwc);
	ib_free_recv_mad(rwc);
}

/* A new SM, LID or registration: the SA may not know us any more. */
static void ipoib_notice_event(struct ib_event_handler *handler,
			       struct ib_event *event)
{
	struct ipoib_notice_port *np =
		container_of(handler, struct ipoib_notice_port, handler);
	unsigned long flags;

	if (event->element.port_num != np->port)
		return;
	switch (event->event) {
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
	case IB_EVENT_SM_CHANGE:
		break;
	default:
		return;
	}
	spin_lock_irqsave(&np->lock, flags);
	if (!np->closing) {
		np->gen++;
		np->subscribed = 0;
		np->backoff = 0;
		mod_delayed_work(ipoib_notice_wq, &np->work, 0);
	}
	spin_unlock_irqrestore(&np->lock, flags);
}

static struct ipoib_notice_port *ipoib_notice_port_get(struct ib_device *ca,
						       u32 port)
{
	struct ib_mad_reg_req req = {
		.mgmt_class = IB_MGMT_CLASS_SUBN_ADM,
		.mgmt_class_version = IB_SA_CLASS_VERSION,
	};
	struct ipoib_notice_port *np;

	lockdep_assert_held(&ipoib_notice_mutex);
	list_for_each_entry(np, &ipoib_notice_ports, node)
		if (np->ca == ca && np->port == port)
			return np;
	np = kzalloc(sizeof(*np), GFP_KERNEL);
	if (!np)
		return ERR_PTR(-ENOMEM);
	np->ca = ca;
	np->port = port;
	spin_lock_init(&np->lock);
	mutex_init(&np->listeners_mutex);
	INIT_LIST_HEAD(&np->listeners);
	INIT_DELAYED_WORK(&np->work, ipoib_notice_work);
	/*
	 * Reports are requests to us: the MAD layer gives the method of a
	 * class to one agent per port, so no other Report consumer can
	 * share this port meanwhile. Answers to our Sets and GetTables find
	 * us by TID (the MAD layer joins a table's RMPP segments).
	 */
	set_bit(IB_MGMT_METHOD_REPORT, req.method_mask);
	np->agent = ib_register_mad_agent(ca, port, IB_QPT_GSI, &req,
					  IB_MGMT_RMPP_VERSION,
					  ipoib_notice_sent, ipoib_notice_recv,
					  np, 0);
	if (IS_ERR(np->agent)) {
		int ret = PTR_ERR(np->agent);

		mutex_destroy(&np->listeners_mutex);
		kfree(np);
		return ERR_PTR(ret);
	}
	INIT_IB_EVENT_HANDLER(&np->handler, ca, ipoib_notice_event);
	ib_register_event_handler(&np->handler);
	list_add(&np->node, &ipoib_notice_ports);
	return np;
}

/* One more or one less interface watching: the work follows. */
static void ipoib_notice_users(struct ipoib_notice_port *np, int delta)
{
	spin_lock_irq(&np->lock);
	np->users += delta;
	if ((delta > 0 && np->users == 1) || (delta < 0 && !np->users))
		mod_delayed_work(ipoib_notice_wq, &np->work, 0);
	spin_unlock_irq(&np->lock);
}

/*
 * The RDMA device goes, its interfaces gone: stop each port's agent,
 * which ends every MAD still in flight by its send completion. Cancels
 * sent when the last interface stopped watching may be cut short; the
 * SA forgets subscribers whose port leaves the subnet.
 */
void ipoib_fabric_ib_remove(struct ib_device *ca)
{
	struct ipoib_notice_port *np, *n;

	mutex_lock(&ipoib_notice_mutex);
	list_for_each_entry_safe(np, n, &ipoib_notice_ports, node) {
		if (np->ca != ca)
			continue;
		list_del(&np->node);
		ib_unregister_event_handler(&np->handler);
		spin_lock_irq(&np->lock);
		np->closing = true;
		spin_unlock_irq(&np->lock);
		cancel_delayed_work_sync(&np->work);
		ib_unregister_mad_agent(np->agent);
		WARN_ON(!list_empty(&np->listeners));
		mutex_destroy(&np->listeners_mutex);
		kfree(np);
	}
	mutex_unlock(&ipoib_notice_mutex);
}

static int ipoib_ib_mcast_watch_on(struct ipoib_dev *priv)
{
	struct ipoib_notice_listener *l;
	struct ipoib_notice_port *np;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	mutex_lock(&ipoib_notice_mutex);
	np = ipoib_notice_port_get(priv->ca, priv->port);
	if (IS_ERR(np)) {
		mutex_unlock(&ipoib_notice_mutex);
		ipoib_warn_rl(priv, "cannot follow the SA's group reports: %ld\n",
			      PTR_ERR(np));
		kfree(l);
		return PTR_ERR(np);
	}
	l->priv = priv;
	l->np = np;
	l->pkey = priv->pkey;
	mutex_lock(&np->listeners_mutex);
	list_add(&l->node, &np->listeners);
	mutex_unlock(&np->listeners_mutex);
	ipoib_notice_users(np, 1);
	mutex_unlock(&ipoib_notice_mutex);
	priv->fabric_priv = l;
	return 0;
}

/* After this returns no report reaches priv. */
static void ipoib_ib_mcast_watch_off(struct ipoib_dev *priv)
{
	struct ipoib_notice_listener *l = priv->fabric_priv;

	if (!l)
		return;
	priv->fabric_priv = NULL;
	mutex_lock(&ipoib_notice_mutex);
	mutex_lock(&l->np->listeners_mutex);
	list_del(&l->node);
	mutex_unlock(&l->np->listeners_mutex);
	ipoib_notice_users(l->np, -1);
	mutex_unlock(&ipoib_notice_mutex);
	kfree(l);
}

int ipoib_ib_mcast_watch(struct ipoib_dev *priv, bool on)
{
	ASSERT_RTNL();
	if (!on)
		ipoib_ib_mcast_watch_off(priv);
	else if (!priv->fabric_priv)
		return ipoib_ib_mcast_watch_on(priv);
	return 0;
}

int ipoib_ib_mcast_list(struct ipoib_dev *priv, bool on)
{
	struct ipoib_notice_listener *l = priv->fabric_priv;

	ASSERT_RTNL();
	if (!l)
		return on ? -ENOTCONN : 0;
	mutex_lock(&l->np->listeners_mutex);
	l->lists = on;
	l->list_due = on;
	mutex_unlock(&l->np->listeners_mutex);
	if (on)
		mod_delayed_work(ipoib_notice_wq, &l->np->work, 0);
	return 0;
}

int ipoib_ib_notice_init(void)
{
	ipoib_notice_wq = alloc_workqueue("ipoib_notice", WQ_UNBOUND, 0);
	return ipoib_notice_wq ? 0 : -ENOMEM;
}

void ipoib_ib_notice_exit(void)
{
	destroy_workqueue(ipoib_notice_wq);
}
