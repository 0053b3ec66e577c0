// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode's conversation with ib_cm (RFC 4755 s3) and the set-up
 * of a channel's QP. CM handlers run in ib_cm's workqueue, which every
 * ib_cm user of the host shares: they do only what cannot wait (a state
 * change, a QP modify, an RTU, sending what waited); QP creation and
 * receive buffers are made by a channel's set-up work in our own
 * workqueue, outside cm.mutex, which is only ever held briefly.
 */
#include <linux/random.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>

#include "ipoib.h"
#include "ipoib_cm.h"

/*
 * RFC 4755 s7.1: RC retransmission must give up well before TCP's first
 * retransmission timeout (200 ms at least). ACK timeout 2^14 * 4.096 us =
 * 67 ms, 3 retries: about 270 ms, then the connection fails and the peer
 * is reached over UD. A receiver out of receive buffers answers RNR NAK,
 * asking for a pause (ib_cm sets no minimum RNR timer: 655 ms); a peer
 * that stays so for 6 of them, about 4 s, has stopped taking data: the
 * connection fails (cm_rnr_failures) rather than retrying for ever (7)
 * while its full send queue holds up the interface.
 */
#define IPOIB_CM_ACK_TIMEOUT	14
#define IPOIB_CM_RETRY		3
#define IPOIB_CM_RNR_RETRY	6
#define IPOIB_CM_RESPONSE	20	/* CM response timeout, 4.096 us * 2^n */
#define IPOIB_CM_MAX_CM_RETRIES	8
/*
 * s3.3's "outstanding" REQ: one of ours sent less than this ago. A REP
 * takes milliseconds; a REQ unanswered for a second was lost (the peer's
 * port was down, or its address tentative, when it came), and a REQ of
 * the peer's that comes now did not cross it: ours gives way to it, or
 * both sides would wait out ib_cm's retries rejecting each other.
 */
#define IPOIB_CM_CROSS_WINDOW	HZ
/* ours, the peer's, and a couple still draining (the table's ref too) */
#define IPOIB_CM_PEER_CHANS	4

/* @buf: IPOIB_CM_PDATA_EXT_LEN octets */
void ipoib_cm_pdata(struct ipoib_dev *priv, u8 *buf)
{
	struct ipoib_cm_pdata pd = {
		.qpn = priv->qp->qp_num,
		.mtu = IPOIB_CM_BUF_SIZE,
		.caps = ipoib_cm_bidir ? IPOIB_CM_CAP_BIDIR : 0,
	};

	/* rx-checksumming off: peers must send complete checksums */
	if (priv->dev->features & NETIF_F_RXCSUM)
		pd.caps |= IPOIB_CM_CAP_CSUM;

	ipoib_cm_pdata_pack(buf, &pd);
}

/*
 * Defensive parse of a peer's private data (RFC 4755 s6). The CM always
 * hands us the whole private data field, zero-padded, so a peer that sent
 * none shows as UD QPN 0.
 */
int ipoib_cm_parse_pdata(const void *data, struct ipoib_cm_pdata *pd)
{
	if (!data || ipoib_cm_pdata_parse(data, IPOIB_CM_PDATA_EXT_LEN, pd))
		return -EINVAL;
	/* QPs 0 and 1 are special; an MTU must carry at least IPv4's */
	if (pd->qpn < 2 || pd->mtu < IPV4_MIN_MTU + IPOIB_ENCAP_LEN)
		return -EINVAL;
	return 0;
}

void ipoib_cm_reject(struct ipoib_dev *priv, struct ib_cm_id *id,
		     enum ib_cm_rej_reason reason)
{
	u8 pdata[IPOIB_CM_PDATA_EXT_LEN];

	/* s3.2: our UD QPN goes in every CM message, REJ included */
	ipoib_cm_pdata(priv, pdata);
	ib_send_cm_rej(id, reason, NULL, 0, pdata, sizeof(pdata));
}

static void ipoib_cm_take_pdata(struct ipoib_cm_chan *chan,
				const struct ipoib_cm_pdata *pd)
{
	chan->mtu = min_t(u32, pd->mtu, IPOIB_CM_BUF_SIZE) - IPOIB_ENCAP_LEN;
	chan->csum_pending = pd->caps & IPOIB_CM_CAP_CSUM;
}

/* ib_cm computes the attributes (cm.mutex held: the id stays ours). */
int ipoib_cm_modify(struct ipoib_cm_chan *chan, enum ib_qp_state state,
		    u32 rq_psn)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	lockdep_assert_held(&chan->priv->cm.mutex);
	ret = ib_cm_init_qp_attr(chan->cm_id, &attr, &mask);
	if (ret)
		return ret;
	/* RTR's rq_psn must be our REP's PSN (verbs-on-rxe notes) */
	if (state == IB_QPS_RTR && !chan->active)
		attr.rq_psn = rq_psn;
	return ib_modify_qp(chan->qp, &attr, mask);
}

/*
 * The QP's asynchronous events (any context). COMM_EST: data arrived
 * before the RTU, which may be lost; ib_cm_notify() stands in for it.
 */
static void ipoib_cm_qp_event(struct ib_event *ev, void *ctx)
{
	struct ipoib_cm_chan *chan = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		ipoib_cm_async(chan, IPOIB_CM_ASYNC_COMM_EST);
		break;
	case IB_EVENT_QP_LAST_WQE_REACHED:
		set_bit(IPOIB_CM_ASYNC_LAST_WQE, &chan->events);
		ipoib_cm_unhold(chan, IPOIB_CM_HOLD_LAST_WQE);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		ipoib_cm_async(chan, IPOIB_CM_ASYNC_FAIL);
		break;
	default:
		break;
	}
}

/* A QP receive completions may name, from its creation to its end. */
static void ipoib_cm_qp_add(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;

	spin_lock_bh(&priv->cm.lock);
	hash_add_rcu(priv->cm.by_qp, &chan->qp_node, (unsigned long)chan->qp);
	spin_unlock_bh(&priv->cm.lock);
}

/*
 * The set-up work's part, outside cm.mutex (it holds IPOIB_CM_HOLD_SETUP,
 * so nothing tears the channel down meanwhile): send ring, QP in INIT,
 * and without an SRQ a receive ring of its own, posted.
 */
static int ipoib_cm_prepare(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;
	struct ib_qp_init_attr attr = {
		.event_handler = ipoib_cm_qp_event,
		.qp_context = chan,
		.send_cq = priv->cm.send_cq,
		.recv_cq = priv->cm.recv_cq,
		.srq = priv->cm.srq,
		.cap = {
			.max_send_wr = chan->send_room ? priv->sendq_size : 1,
			.max_send_sge = priv->cm.tx_sge,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = chan->uc ? IB_QPT_UC : IB_QPT_RC,
	};
	struct ib_qp_attr qp_attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = priv->pkey_index,
		.port_num = priv->port,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE,
	};
	struct ib_qp *qp;
	int ret;

	if (chan->send_room) {
		chan->tx_ring = kvcalloc(priv->sendq_size,
					 sizeof(*chan->tx_ring), GFP_KERNEL);
		if (!chan->tx_ring)
			return -ENOMEM;
	}
	if (!priv->cm.use_srq) {
		attr.cap.max_recv_wr = priv->recvq_size;
		attr.cap.max_recv_sge = IPOIB_CM_RX_PAGES;
	}
	qp = ib_create_qp(priv->pd, &attr);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	ret = ib_modify_qp(qp, &qp_attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret) {
		/* in RESET nothing was posted, and it cannot enter ERR */
		ib_destroy_qp(qp);
		return ret;
	}
	WRITE_ONCE(chan->qp, qp);	/* ipoib_trace_cm_qpn() reads it */
	ipoib_cm_qp_add(chan);
	if (!priv->cm.use_srq)
		ret = ipoib_cm_rx_chan_open(chan);
	return ret;
}

/* Our REQ (cm.mutex held), to the service ID the peer last accepted. */
static int ipoib_cm_send_req(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;
	u32 peer_qpn = ipoib_cm_addr_qpn(chan->peer->addr);
	u8 pdata[IPOIB_CM_PDATA_EXT_LEN];
	struct ib_cm_req_param req = {
		.primary_path = &chan->path_rec,
		.ppath_sgid_attr = chan->sgid_attr,
		.service_id = cpu_to_be64(chan->peer->sid_rfc ?
					  ipoib_sid_rfc(peer_qpn) :
					  ipoib_sid_linux(peer_qpn)),
		.qp_num = chan->qp->qp_num,
		.qp_type = chan->qp->qp_type,
		.starting_psn = get_random_u32() & 0xffffff,
		.private_data = pdata,
		.private_data_len = sizeof(pdata),
		.remote_cm_response_timeout = IPOIB_CM_RESPONSE,
		.local_cm_response_timeout = IPOIB_CM_RESPONSE,
		.retry_count = IPOIB_CM_RETRY,
		.rnr_retry_count = IPOIB_CM_RNR_RETRY,
		.max_cm_retries = IPOIB_CM_MAX_CM_RETRIES,
		.srq = priv->cm.use_srq,
	};

	chan->sid_rfc = chan->peer->sid_rfc;
	chan->path_rec.packet_life_time = IPOIB_CM_ACK_TIMEOUT - 1;
	ipoib_cm_pdata(priv, pdata);
	return ib_send_cm_req(chan->cm_id, &req);
}

/*
 * Whether @attr, an entry of GID 0, is no longer GID 0's (cm.mutex held).
 * A set-up that took GID 0 before it went but joins cm.chans only after
 * ipoib_cm_gid_gone() ran was not closed there: it must send nothing from
 * the old entry either (a MAD from a gone slot breaks soft-RoCE's QP1, see
 * there), and let it go. An entry being deleted is no longer valid, so a
 * GID event not yet handled counts as gone too. By entry, not by value:
 * a MAC that went and came back gives GID 0 its old value in a new entry.
 * Only where the core keeps entries (RoCE): on InfiniBand it rewrites
 * them at port events, and a MAD from an old one costs nothing. (Index 0
 * only: the default GID soft-RoCE moves with the MAC.)
 */
static bool ipoib_cm_gid_stale(struct ipoib_dev *priv,
			       const struct ib_gid_attr *attr)
{
	const struct ib_gid_attr *cur;
	bool stale;

	lockdep_assert_held(&priv->cm.mutex);
	if (!attr || attr->index || !priv->fabric->gid_entries_kept)
		return false;
	cur = rdma_get_gid_attr(priv->ca, priv->port, 0);
	stale = IS_ERR(cur) || cur != attr;
	if (!IS_ERR(cur))
		rdma_put_gid_attr(cur);
	if (stale)
		atomic_long_inc(&priv->counters.cm_gid_stale);
	return stale;
}

/* Set-up work of ours: QP, cm_id, then the REQ if still wanted. */
void ipoib_cm_connect_work(struct work_struct *work)
{
	struct ipoib_cm_chan *chan = container_of(work, struct ipoib_cm_chan,
						  setup_work);
	struct ipoib_dev *priv = chan->priv;
	struct ib_cm_id *id = NULL;
	int ret;

	chan->sgid_attr = rdma_get_gid_attr(priv->ca, priv->port, 0);
	if (IS_ERR(chan->sgid_attr)) {
		ret = PTR_ERR(chan->sgid_attr);
		chan->sgid_attr = NULL;
	} else {
		ret = ipoib_cm_prepare(chan);
	}
	if (!ret) {
		id = ib_create_cm_id(priv->ca, ipoib_cm_handler, chan);
		ret = PTR_ERR_OR_ZERO(id);
	}
	ipoib_test_cm_gid_delay();

	mutex_lock(&priv->cm.mutex);
	list_add_tail(&chan->node, &priv->cm.chans);
	if (!ret)
		chan->cm_id = id;
	/* closed before its REQ, the id goes without a MAD */
	if (!ret && (!test_bit(IPOIB_FLAG_CM_UP, &priv->flags) ||
		     rcu_access_pointer(chan->peer->tx) != chan ||
		     ipoib_cm_gid_stale(priv, chan->sgid_attr))) {
		ipoib_cm_step(chan, IPOIB_CM_EV_CLOSE, NULL);
	} else if (!ret) {
		ret = ipoib_cm_send_req(chan);
		if (!ret)
			ipoib_dbg(priv, 1, "CM %pI6c qpn 0x%06x: REQ sent (%s service ID)\n",
				  chan->peer->addr + 4,
				  ipoib_cm_addr_qpn(chan->peer->addr),
				  chan->sid_rfc ? "RFC 4755" : "Linux");
	}
	if (ret) {
		ipoib_warn_rl(priv, "CM: cannot send a REQ: %d\n", ret);
		ipoib_cm_step(chan, IPOIB_CM_EV_FAIL, NULL);
	}
	ipoib_cm_setup_done(chan);
	mutex_unlock(&priv->cm.mutex);
}

static int ipoib_cm_send_rep(struct ipoib_cm_chan *chan, u32 psn)
{
	u8 pdata[IPOIB_CM_PDATA_EXT_LEN];
	struct ib_cm_rep_param rep = {
		.private_data = pdata,
		.private_data_len = sizeof(pdata),
		.qp_num = chan->qp->qp_num,
		.starting_psn = psn,
		.rnr_retry_count = IPOIB_CM_RNR_RETRY,
		.srq = chan->priv->cm.use_srq,
	};

	ipoib_cm_pdata(chan->priv, pdata);
	return ib_send_cm_rep(chan->cm_id, &rep);
}

/* Set-up work of the peer's: QP, then RTR and the REP if still wanted. */
void ipoib_cm_accept_work(struct work_struct *work)
{
	struct ipoib_cm_chan *chan = container_of(work, struct ipoib_cm_chan,
						  setup_work);
	struct ipoib_dev *priv = chan->priv;
	u32 psn = get_random_u32() & 0xffffff;
	int ret;

	ret = ipoib_cm_prepare(chan);
	mutex_lock(&priv->cm.mutex);
	if (chan->state == IPOIB_CM_ACCEPTING) {
		if (!ret)
			ret = ipoib_cm_modify(chan, IB_QPS_RTR, psn);
		if (!ret)
			ret = ipoib_cm_send_rep(chan, psn);
		if (ret) {
			ipoib_warn_rl(priv, "CM: cannot accept a connection: %d\n",
				      ret);
			ipoib_cm_step(chan, IPOIB_CM_EV_FAIL, NULL);
		}
	}
	ipoib_cm_setup_done(chan);
	mutex_unlock(&priv->cm.mutex);
}

/* REP to our REQ (cm.mutex held): RTR, RTS, RTU; else REJ and an error. */
int ipoib_cm_rep_received(struct ipoib_cm_chan *chan,
			  const struct ib_cm_event *cm_ev)
{
	struct ipoib_dev *priv = chan->priv;
	u8 pdata[IPOIB_CM_PDATA_EXT_LEN];
	struct ipoib_cm_pdata pd;
	int ret;

	if (ipoib_cm_parse_pdata(cm_ev->private_data, &pd)) {
		atomic_long_inc(&priv->counters.cm_bad_pdata);
		ipoib_warn_rl(priv, "CM: REP without valid private data, rejected\n");
		ipoib_cm_reject(priv, chan->cm_id, IB_CM_REJ_CONSUMER_DEFINED);
		return -EINVAL;
	}
	ipoib_cm_take_pdata(chan, &pd);
	ret = ipoib_cm_modify(chan, IB_QPS_RTR, 0);
	if (!ret)
		ret = ipoib_cm_modify(chan, IB_QPS_RTS, 0);
	if (!ret) {
		ipoib_cm_pdata(priv, pdata);
		ret = ib_send_cm_rtu(chan->cm_id, pdata, sizeof(pdata));
	}
	if (ret) {
		ipoib_warn_rl(priv, "CM: cannot complete the connection: %d\n",
			      ret);
		ipoib_cm_reject(priv, chan->cm_id, IB_CM_REJ_CONSUMER_DEFINED);
	}
	return ret;
}

/*
 * Whether to take a REQ from @addr (cm.mutex and cm.lock held): a channel
 * for it, or NULL and the reason to reject it in @reason. @lost: our
 * channel to the peer whose REQ went unanswered, which the new one
 * replaces (the caller closes it, after cm.lock).
 */
static struct ipoib_cm_chan *ipoib_cm_admit(struct ipoib_dev *priv,
					    const u8 *addr, bool rx_only,
					    enum ib_cm_rej_reason *reason,
					    struct ipoib_cm_chan **lost)
{
	struct ipoib_cm_peer *peer;
	struct ipoib_cm_chan *ours, *chan;

	*reason = IB_CM_REJ_CONSUMER_DEFINED;
	if (!test_bit(IPOIB_FLAG_CM_UP, &priv->flags))
		return NULL;
	*reason = IB_CM_REJ_NO_RESOURCES;
	peer = ipoib_cm_peer_get(priv, addr, GFP_ATOMIC);
	/* a few channels per peer (REQs claiming it may be forged) */
	if (!peer || kref_read(&peer->ref) > IPOIB_CM_PEER_CHANS)
		return NULL;
	/*
	 * s3.3: REQs crossed. The interface with the smaller address (flags
	 * zeroed, most significant octet first) accepts, the other rejects
	 * with Consumer Reject; our own REQ then meets the same fate there.
	 * Towards an in-tree model peer two connections are the design, so
	 * the rule does not apply (nor does that peer apply it).
	 */
	ours = rcu_dereference_protected(peer->tx,
					 lockdep_is_held(&priv->cm.lock));
	if (!rx_only && ours && ours->state == IPOIB_CM_CONNECTING &&
	    !test_bit(IPOIB_CM_HOLD_SETUP, &ours->holding) &&
	    time_after(jiffies, ours->sent_at + IPOIB_CM_CROSS_WINDOW)) {
		*lost = ours;
		ours = NULL;
	}
	if (!rx_only && ours && ours->state == IPOIB_CM_CONNECTING) {
		atomic_long_inc(&priv->counters.cm_crossed);
		if (ipoib_cm_addr_order(peer) > 0) {
			ipoib_dbg(priv, 1, "CM: REQs crossed, rejecting the peer's\n");
			*reason = IB_CM_REJ_CONSUMER_DEFINED;
			return NULL;
		}
	}
	chan = ipoib_cm_chan_new(peer, false, !rx_only, GFP_ATOMIC);
	if (!chan) {
		*lost = NULL;
		return NULL;
	}
	chan->rx_only = rx_only;
	if (!rx_only && ours && ours->state == IPOIB_CM_CONNECTING)
		chan->crossed = ours;
	/* what waits for ours waits for the peer's instead */
	if (*lost)
		rcu_assign_pointer(peer->tx, chan);
	return chan;
}

/* Passive side: a REQ on one of our two service IDs. */
static int ipoib_cm_req(struct ipoib_dev *priv, struct ib_cm_id *id,
			const struct ib_cm_event *ev)
{
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	struct ipoib_cm_chan *chan, *lost = NULL;
	enum ib_cm_rej_reason reason;
	struct ipoib_cm_pdata pd;
	u8 addr[IPOIB_ADDR_LEN];
	bool rx_only;

	ipoib_test_cm_gid_delay();
	mutex_lock(&priv->cm.mutex);
	/*
	 * A REQ that came to a GID 0 since gone (ipoib_cm_gid_stale()) gets
	 * no answer, not even a REJ: for a handler's -ENOMEM, and only for
	 * that, cm_destroy_id() lets a REQ go unanswered (as one to be
	 * retried; a retry to the old GID finds no one). Any other error
	 * would REJ from the old entry.
	 */
	if (ipoib_cm_gid_stale(priv, req->ppath_sgid_attr)) {
		mutex_unlock(&priv->cm.mutex);
		ipoib_dbg(priv, 1, "CM: REQ to a GID 0 since gone, dropped\n");
		return -ENOMEM;
	}
	if (ipoib_cm_parse_pdata(ev->private_data, &pd)) {
		mutex_unlock(&priv->cm.mutex);
		atomic_long_inc(&priv->counters.cm_bad_pdata);
		ipoib_warn_rl(priv, "CM: REQ without valid private data, rejected\n");
		ipoib_cm_reject(priv, id, IB_CM_REJ_CONSUMER_DEFINED);
		return 1;
	}
	if (req->qp_type != IB_QPT_RC && req->qp_type != IB_QPT_UC) {
		mutex_unlock(&priv->cm.mutex);
		ipoib_warn_rl(priv, "CM: REQ for QP type %d, rejected\n",
			      req->qp_type);
		ipoib_cm_reject(priv, id, IB_CM_REJ_INVALID_TRANSPORT_TYPE);
		return 1;
	}
	/* s3.3: the peer is its UD QPN and the GID it sent from */
	ipoib_cm_peer_addr(addr, pd.qpn, &req->primary_path->dgid);
	/*
	 * We send on it as well if the peer does the same with ours: it said
	 * so, or it came to the RFC's service ID, whose s3.3 wants one
	 * connection per pair. Else it is the in-tree model (see the top).
	 */
	rx_only = !ipoib_cm_bidir ||
		  !((pd.caps & IPOIB_CM_CAP_BIDIR) ||
		    req->listen_id == priv->cm.listen[1]);

	spin_lock_bh(&priv->cm.lock);
	chan = ipoib_cm_admit(priv, addr, rx_only, &reason, &lost);
	spin_unlock_bh(&priv->cm.lock);
	if (lost) {
		ipoib_dbg(priv, 1, "CM %pI6c qpn 0x%06x: our REQ unanswered for %u ms, taking the peer's\n",
			  addr + 4, pd.qpn,
			  jiffies_to_msecs(jiffies - lost->sent_at));
		ipoib_cm_step(lost, IPOIB_CM_EV_CLOSE, NULL);
	}
	ipoib_dbg(priv, 1, "CM %pI6c qpn 0x%06x: REQ%s, %s\n",
		  addr + 4, pd.qpn, rx_only ? " (in-tree model)" : "",
		  chan ? "accepting" : ibcm_reject_msg(reason));
	if (!chan) {
		mutex_unlock(&priv->cm.mutex);
		ipoib_cm_reject(priv, id, reason);
		return 1;
	}
	chan->uc = req->qp_type == IB_QPT_UC;
	ipoib_cm_take_pdata(chan, &pd);
	chan->cm_id = id;
	id->context = chan;
	list_add_tail(&chan->node, &priv->cm.chans);
	queue_work(priv->cm.wq, &chan->setup_work);
	mutex_unlock(&priv->cm.mutex);
	return 0;
}

static int ipoib_cm_event_of(const struct ib_cm_event *ev)
{
	switch (ev->event) {
	case IB_CM_REP_RECEIVED:
		return IPOIB_CM_EV_REP;
	case IB_CM_RTU_RECEIVED:
	case IB_CM_USER_ESTABLISHED:
		return IPOIB_CM_EV_RTU;
	case IB_CM_REJ_RECEIVED:
	case IB_CM_REQ_ERROR:
	case IB_CM_REP_ERROR:
		return IPOIB_CM_EV_REJ;
	case IB_CM_DREQ_RECEIVED:
		return IPOIB_CM_EV_DREQ;
	case IB_CM_DREQ_ERROR:
	case IB_CM_DREP_RECEIVED:
	case IB_CM_TIMEWAIT_EXIT:
		return IPOIB_CM_EV_CLOSE;
	default:
		return -1;
	}
}

int ipoib_cm_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct ipoib_cm_chan *chan;
	struct ipoib_dev *priv;
	bool destroy;
	int what;

	if (ev->event == IB_CM_REQ_RECEIVED)
		return ipoib_cm_req(id->context, id, ev);
	what = ipoib_cm_event_of(ev);
	if (what < 0)
		return 0;
	chan = id->context;
	priv = chan->priv;
	mutex_lock(&priv->cm.mutex);
	/* the release work took the id and waits for us to return */
	if (chan->cm_id != id) {
		mutex_unlock(&priv->cm.mutex);
		return 0;
	}
	destroy = ipoib_cm_step(chan, what, ev);
	mutex_unlock(&priv->cm.mutex);
	return destroy;
}

/* What the QP event handler and NAPI asked for, with cm.mutex. */
void ipoib_cm_event_work(struct work_struct *work)
{
	struct ipoib_cm_chan *chan = container_of(work, struct ipoib_cm_chan,
						  event_work);
	struct ipoib_dev *priv = chan->priv;

	mutex_lock(&priv->cm.mutex);
	/* s3 leaves lost RTUs to the CM: established once data flows */
	if (test_and_clear_bit(IPOIB_CM_ASYNC_COMM_EST, &chan->events) &&
	    chan->cm_id && chan->state == IPOIB_CM_ACCEPTING)
		ib_cm_notify(chan->cm_id, IB_EVENT_COMM_EST);
	if (test_and_clear_bit(IPOIB_CM_ASYNC_FAIL, &chan->events))
		ipoib_cm_step(chan, IPOIB_CM_EV_FAIL, NULL);
	mutex_unlock(&priv->cm.mutex);
}
