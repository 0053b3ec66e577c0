// SPDX-License-Identifier: GPL-2.0
/*
 * InfiniBand fabric: the SA's reports of multicast groups created and
 * deleted (traps 66 and 67). RFC 4391 s10: senders MUST follow them, so
 * that a SendOnlyNonMember sender learns when a listener's group appears
 * and when the group it sends to is gone.
 *
 * One subscription per port serves every interface of the port that
 * follows groups: a MAD agent takes the SA's unsolicited Reports, and a
 * SubnAdmSet(InformInfo) per trap subscribes. A new SM knows nothing of
 * its predecessor's subscribers, so every SM event subscribes again.
 */
#include <rdma/ib_mad.h>

#include "ipoib.h"

#define IPOIB_NOTICE_TIMEOUT_MS	1000
#define IPOIB_NOTICE_RETRIES	2
#define IPOIB_NOTICE_MAX_BACKOFF 8	/* seconds */
/* an interface going down waits this long at most for the SA's answer */
#define IPOIB_NOTICE_CANCEL_MS	500
#define IPOIB_QP1		1

static const u16 ipoib_notice_traps[] = {
	IPOIB_TRAP_MCG_CREATED,
	IPOIB_TRAP_MCG_DELETED,
};

#define IPOIB_NOTICE_ALL	(BIT(ARRAY_SIZE(ipoib_notice_traps)) - 1)

/* send_buf->context[0] of a Set: trap index, subscribe, generation */
#define IPOIB_NOTICE_SET	BIT(0)
#define IPOIB_NOTICE_SUB	BIT(1)
#define IPOIB_NOTICE_IDX_SHIFT	2
#define IPOIB_NOTICE_GEN_SHIFT	8

/* One per port whose interfaces follow groups. */
struct ipoib_notice_port {
	struct list_head node;		/* ipoib_notice_ports */
	struct ib_device *ca;
	u32 port;
	unsigned int users;		/* under ipoib_notice_mutex */
	struct ib_mad_agent *agent;
	struct ib_event_handler handler;
	struct delayed_work work;	/* subscribes what is not */
	struct completion idle;		/* closing: no Set in flight */
	/* reports are delivered under it, so that none outlives a listener */
	struct mutex listeners_mutex;
	struct list_head listeners;	/* struct ipoib_notice_listener */
	spinlock_t lock;		/* guards what follows (IRQs off) */
	bool closing;
	bool failed;			/* a Set of this round failed */
	bool stale;			/* ... was of an SM that is gone */
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
};

static LIST_HEAD(ipoib_notice_ports);
static DEFINE_MUTEX(ipoib_notice_mutex);

static void ipoib_notice_retry(struct ipoib_notice_port *np)
{
	lockdep_assert_held(&np->lock);
	if (np->closing)
		return;
	np->backoff = np->backoff ?
		min(np->backoff * 2, IPOIB_NOTICE_MAX_BACKOFF) : 1;
	mod_delayed_work(system_wq, &np->work, np->backoff * HZ);
}

/* An InformInfo Set to the SM's LID, which is where the SA lives. */
static int ipoib_notice_send(struct ipoib_notice_port *np, unsigned int idx,
			     bool subscribe, unsigned int gen, int timeout_ms,
			     int retries)
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
		return ret;
	if (attr.state != IB_PORT_ACTIVE || !attr.sm_lid)
		return -EAGAIN;
	/* the SA listens on the default partition */
	if (ib_find_pkey(np->ca, np->port, IB_DEFAULT_PKEY_FULL, &pkey_index))
		return -ENOENT;
	ah_attr.type = rdma_ah_find_type(np->ca, np->port);
	rdma_ah_set_dlid(&ah_attr, attr.sm_lid);
	rdma_ah_set_sl(&ah_attr, attr.sm_sl);
	rdma_ah_set_port_num(&ah_attr, np->port);
	ah = rdma_create_ah(np->agent->qp->pd, &ah_attr,
			    RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	msg = ib_create_send_mad(np->agent, IPOIB_QP1, pkey_index, 0,
				 IB_MGMT_SA_HDR, IB_MGMT_SA_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	if (IS_ERR(msg)) {
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		return PTR_ERR(msg);
	}
	mad = msg->mad;
	mad->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = IB_MGMT_CLASS_SUBN_ADM;
	mad->mad_hdr.class_version = IB_SA_CLASS_VERSION;
	mad->mad_hdr.method = IB_MGMT_METHOD_SET;
	mad->mad_hdr.attr_id = cpu_to_be16(IB_SA_ATTR_INFORM_INFO);
	spin_lock_irq(&np->lock);
	/* the MAD layer routes answers to us by the TID's upper half */
	mad->mad_hdr.tid = cpu_to_be64((u64)np->agent->hi_tid << 32 |
				       np->tid++);
	np->in_flight++;
	spin_unlock_irq(&np->lock);
	ipoib_sa_inform_pack(mad->data, ipoib_notice_traps[idx], subscribe,
			     IPOIB_QP1);
	msg->ah = ah;
	msg->timeout_ms = timeout_ms;
	msg->retries = retries;
	msg->context[0] = (void *)(uintptr_t)(IPOIB_NOTICE_SET |
		(subscribe ? IPOIB_NOTICE_SUB : 0) |
		idx << IPOIB_NOTICE_IDX_SHIFT |
		(uintptr_t)gen << IPOIB_NOTICE_GEN_SHIFT);
	msg->context[1] = NULL;		/* the answer's verdict, see recv */
	ret = ib_post_send_mad(msg, NULL);
	if (ret) {
		spin_lock_irq(&np->lock);
		np->in_flight--;
		spin_unlock_irq(&np->lock);
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		ib_free_send_mad(msg);
	}
	return ret;
}

static void ipoib_notice_work(struct work_struct *work)
{
	struct ipoib_notice_port *np =
		container_of(work, struct ipoib_notice_port, work.work);
	unsigned int want, gen, i;
	int ret = 0;

	spin_lock_irq(&np->lock);
	want = np->closing || np->in_flight ? 0 :
	       IPOIB_NOTICE_ALL & ~np->subscribed;
	gen = np->gen;
	spin_unlock_irq(&np->lock);
	for (i = 0; i < ARRAY_SIZE(ipoib_notice_traps) && !ret; i++)
		if (want & BIT(i))
			ret = ipoib_notice_send(np, i, true, gen,
						IPOIB_NOTICE_TIMEOUT_MS,
						IPOIB_NOTICE_RETRIES);
	if (ret) {
		dev_dbg(&np->ca->dev, "port %u: InformInfo not sent: %d\n",
			np->port, ret);
		spin_lock_irq(&np->lock);
		ipoib_notice_retry(np);
		spin_unlock_irq(&np->lock);
	}
}

/* The SA answered a Set: the verdict goes to the send completion. */
static void ipoib_notice_answered(struct ib_mad_send_buf *msg,
				  const struct ib_sa_mad *mad)
{
	if (!mad->mad_hdr.status &&
	    mad->mad_hdr.method == IB_MGMT_METHOD_GET_RESP)
		msg->context[1] = msg;
}

/*
 * A Set is done: answered, timed out or cancelled. A round of Sets ends
 * with the last of them: then a failure retries later, an answer from an
 * SM that has gone since starts again at once.
 */
static void ipoib_notice_set_done(struct ipoib_notice_port *np,
				  unsigned long tag, bool ok)
{
	unsigned int idx = (tag >> IPOIB_NOTICE_IDX_SHIFT) & 0x3f;
	unsigned int was;
	unsigned long flags;

	spin_lock_irqsave(&np->lock, flags);
	was = np->subscribed;
	np->in_flight--;
	if (np->closing) {
		if (!np->in_flight)
			complete(&np->idle);
		goto out;
	}
	if ((unsigned int)(tag >> IPOIB_NOTICE_GEN_SHIFT) != np->gen)
		np->stale = true;
	else if (ok)
		np->subscribed |= BIT(idx);
	else
		np->failed = true;
	if (np->in_flight)
		goto out;
	if (np->stale) {
		mod_delayed_work(system_wq, &np->work, 0);
	} else if (np->failed) {
		ipoib_notice_retry(np);
	} else if (np->subscribed == IPOIB_NOTICE_ALL && was != np->subscribed) {
		np->backoff = 0;
		dev_info(&np->ca->dev, "port %u: following the SA's reports of multicast groups created and deleted\n",
			 np->port);
	}
	np->stale = false;
	np->failed = false;
out:
	spin_unlock_irqrestore(&np->lock, flags);
}

static void ipoib_notice_sent(struct ib_mad_agent *agent,
			      struct ib_mad_send_wc *wc)
{
	struct ipoib_notice_port *np = agent->context;
	struct ib_mad_send_buf *msg = wc->send_buf;
	unsigned long tag = (uintptr_t)msg->context[0];
	bool ok = wc->status == IB_WC_SUCCESS && msg->context[1];

	rdma_destroy_ah(msg->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_free_send_mad(msg);
	if (tag & IPOIB_NOTICE_SET)
		ipoib_notice_set_done(np, tag, ok);
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
	if (ib_post_send_mad(msg, NULL)) {
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		ib_free_send_mad(msg);
	}
}

static void ipoib_notice_report(struct ipoib_notice_port *np,
				struct ib_mad_recv_wc *rwc)
{
	const struct ib_sa_mad *mad = (const struct ib_sa_mad *)rwc->recv_buf.mad;
	struct ipoib_notice_listener *l;
	u8 gid[IPOIB_GID_LEN];
	u16 trap;

	if (mad->mad_hdr.attr_id != cpu_to_be16(IB_SA_ATTR_NOTICE) ||
	    rwc->mad_len < (int)sizeof(*mad)) {
		dev_warn_ratelimited(&np->ca->dev, "port %u: a Report of attribute 0x%x dropped\n",
				     np->port, be16_to_cpu(mad->mad_hdr.attr_id));
		return;
	}
	ipoib_notice_respond(np, rwc);
	if (ipoib_sa_notice_parse(mad->data, sizeof(mad->data), &trap, gid) ||
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

	if (send_buf)
		ipoib_notice_answered(send_buf, mad);
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
		mod_delayed_work(system_wq, &np->work, 0);
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
		if (np->ca == ca && np->port == port) {
			np->users++;
			return np;
		}
	np = kzalloc(sizeof(*np), GFP_KERNEL);
	if (!np)
		return ERR_PTR(-ENOMEM);
	np->ca = ca;
	np->port = port;
	np->users = 1;
	spin_lock_init(&np->lock);
	mutex_init(&np->listeners_mutex);
	INIT_LIST_HEAD(&np->listeners);
	INIT_DELAYED_WORK(&np->work, ipoib_notice_work);
	init_completion(&np->idle);
	/* Reports are requests to us; answers to our Sets find us by TID */
	set_bit(IB_MGMT_METHOD_REPORT, req.method_mask);
	np->agent = ib_register_mad_agent(ca, port, IB_QPT_GSI, &req, 0,
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
	mod_delayed_work(system_wq, &np->work, 0);
	return np;
}

/*
 * The last user of the port: cancel the subscriptions (briefly: the SA
 * drops a subscriber whose Reports go unanswered anyway), then stop the
 * agent, which ends every Set still in flight by its send completion.
 */
static void ipoib_notice_port_put(struct ipoib_notice_port *np)
{
	unsigned long cancel_wait = msecs_to_jiffies(IPOIB_NOTICE_CANCEL_MS);
	unsigned int subscribed, i;
	bool wait;

	lockdep_assert_held(&ipoib_notice_mutex);
	if (--np->users)
		return;
	list_del(&np->node);
	ib_unregister_event_handler(&np->handler);
	spin_lock_irq(&np->lock);
	np->closing = true;
	subscribed = np->subscribed;
	spin_unlock_irq(&np->lock);
	cancel_delayed_work_sync(&np->work);
	/* from here the Set that brings in_flight to 0 completes idle */
	spin_lock_irq(&np->lock);
	reinit_completion(&np->idle);
	spin_unlock_irq(&np->lock);
	for (i = 0; i < ARRAY_SIZE(ipoib_notice_traps); i++)
		if (subscribed & BIT(i))
			ipoib_notice_send(np, i, false, 0,
					  IPOIB_NOTICE_CANCEL_MS, 0);
	spin_lock_irq(&np->lock);
	wait = np->in_flight;
	spin_unlock_irq(&np->lock);
	if (wait)
		wait_for_completion_timeout(&np->idle, cancel_wait);
	ib_unregister_mad_agent(np->agent);
	mutex_destroy(&np->listeners_mutex);
	kfree(np);
}

static void ipoib_ib_mcast_watch_on(struct ipoib_dev *priv)
{
	struct ipoib_notice_listener *l;
	struct ipoib_notice_port *np;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return;
	mutex_lock(&ipoib_notice_mutex);
	np = ipoib_notice_port_get(priv->ca, priv->port);
	if (IS_ERR(np)) {
		mutex_unlock(&ipoib_notice_mutex);
		netdev_warn(priv->dev, "cannot follow the SA's group reports (%ld): send-only groups retry on a timer\n",
			    PTR_ERR(np));
		kfree(l);
		return;
	}
	l->priv = priv;
	l->np = np;
	mutex_lock(&np->listeners_mutex);
	list_add(&l->node, &np->listeners);
	mutex_unlock(&np->listeners_mutex);
	mutex_unlock(&ipoib_notice_mutex);
	priv->fabric_priv = l;
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
	ipoib_notice_port_put(l->np);
	mutex_unlock(&ipoib_notice_mutex);
	kfree(l);
}

void ipoib_ib_mcast_watch(struct ipoib_dev *priv, bool on)
{
	ASSERT_RTNL();
	if (on && !priv->fabric_priv)
		ipoib_ib_mcast_watch_on(priv);
	else if (!on)
		ipoib_ib_mcast_watch_off(priv);
}
