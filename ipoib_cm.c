// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode (RFC 4755): the life cycle of RC (or UC) connections set
 * up through ib_cm. They receive into one SRQ shared by all, or into a
 * queue each without one (ipoib_cm_rx.c); ipoib_cm_tx.c sends on them.
 * Multicast, broadcast and ARP/ND stay on the UD QP (s2.1, s7); a peer
 * without a connection is reached over UD meanwhile.
 *
 * Between two of us (our private data extension says "bidirectional") and
 * towards peers on the RFC's service ID, one connection per pair of
 * interfaces carries both directions, crossed REQs resolved as s3.3 says.
 * The in-tree driver instead sends only on connections it opened and
 * cannot take data on them (its receive path treats their QP as one it
 * accepted), so a peer that did not say "bidirectional" gets the in-tree
 * model: we only receive on its connection (rx_only) and open our own.
 *
 * A connection's life is one explicit state machine, ipoib_cm_step():
 *
 *   (none) --xmit--> REQ_SENT --REP--> LIVE
 *   (none) --REQ---> REP_SENT --RTU/first data--> LIVE
 *   any --REJ/timeout/error/DREQ/close--> CLOSED (resources released by
 *         the reaper; a failed one stays as a marker until its retry time)
 *
 * Every attempt gets a fresh cm_id and QP (a failed cm_id cannot be
 * reused). Whoever clears conn->cm_id under cm_mutex destroys it: a CM
 * handler by returning non-zero, the reaper with ib_destroy_cm_id(),
 * never while holding cm_mutex (destroy waits for running handlers).
 */
#include <linux/jhash.h>
#include <linux/random.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>

#include "ipoib.h"
#include "ipoib_cm.h"

/*
 * RFC 4755 s7.1: RC retransmission must give up well before TCP's first
 * retransmission timeout (200 ms at least). ACK timeout 2^14 * 4.096 us =
 * 67 ms, 3 retries: about 270 ms, then the connection fails and the peer
 * is reached over UD. A receiver out of SRQ buffers answers RNR NAK; 7
 * means the sender keeps retrying (the SRQ is refilled from NAPI).
 */
#define IPOIB_CM_ACK_TIMEOUT	14
#define IPOIB_CM_RETRY		3
#define IPOIB_CM_RNR_RETRY	7
#define IPOIB_CM_RESPONSE	20	/* CM response timeout, 4.096 us * 2^n */
#define IPOIB_CM_MAX_CM_RETRIES	8
#define IPOIB_CM_BACKOFF_MAX	(16 * HZ)
#define IPOIB_CM_DRAIN_TIMEOUT	(5 * HZ)

static const char *const ipoib_cm_state_names[] = {
	[IPOIB_CM_REQ_SENT]	= "req-sent",
	[IPOIB_CM_REP_SENT]	= "rep-sent",
	[IPOIB_CM_LIVE]		= "live",
	[IPOIB_CM_CLOSED]	= "closed",
};

/* @peer's bucket in the table we send from, or in the receive-only one */
static struct hlist_head *ipoib_cm_bucket(struct ipoib_dev *priv,
					  const u8 *peer, bool rx_only)
{
	u32 b = hash_min(jhash(peer, IPOIB_ADDR_LEN, 0),
			 HASH_BITS(priv->cm.conns));

	BUILD_BUG_ON(HASH_SIZE(priv->cm.conns) != HASH_SIZE(priv->cm.rx_only));
	return rx_only ? &priv->cm.rx_only[b] : &priv->cm.conns[b];
}

/* under rcu_read_lock() or cm_lock; @peer has its flags octet zeroed */
struct ipoib_cm_conn *ipoib_cm_find(struct ipoib_dev *priv, const u8 *peer,
				    bool rx_only)
{
	struct ipoib_cm_conn *conn;

	hlist_for_each_entry_rcu(conn, ipoib_cm_bucket(priv, peer, rx_only),
				 node)
		if (!memcmp(conn->peer, peer, IPOIB_ADDR_LEN))
			return conn;
	return NULL;
}

/* A QP receive completions may name, from its creation to its end. */
static void ipoib_cm_qp_add(struct ipoib_cm_conn *conn)
{
	struct ipoib_dev *priv = conn->priv;

	spin_lock_bh(&priv->cm.lock);
	hash_add_rcu(priv->cm.by_qp, &conn->qp_node, (unsigned long)conn->qp);
	spin_unlock_bh(&priv->cm.lock);
}

static void ipoib_cm_qp_del(struct ipoib_cm_conn *conn)
{
	struct ipoib_dev *priv = conn->priv;

	spin_lock_bh(&priv->cm.lock);
	if (!hlist_unhashed(&conn->qp_node))
		hlist_del_init_rcu(&conn->qp_node);
	spin_unlock_bh(&priv->cm.lock);
}

/* cm_mutex and cm_lock held */
static void ipoib_cm_hash_add(struct ipoib_dev *priv,
			      struct ipoib_cm_conn *conn)
{
	hlist_add_head_rcu(&conn->node,
			   ipoib_cm_bucket(priv, conn->peer, conn->rx_only));
	priv->cm.nconns++;
}

void ipoib_cm_peer_addr(u8 *buf, u32 qpn, const union ib_gid *gid)
{
	struct ipoib_lladdr ll = { .qpn = qpn };

	memcpy(ll.gid, gid->raw, sizeof(ll.gid));
	ipoib_lladdr_pack(buf, &ll);
}

/* @buf: IPOIB_CM_PDATA_EXT_LEN octets */
static void ipoib_cm_pdata(struct ipoib_dev *priv, u8 *buf)
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
static int ipoib_cm_parse_pdata(const void *data, struct ipoib_cm_pdata *pd)
{
	if (!data || ipoib_cm_pdata_parse(data, IPOIB_CM_PDATA_EXT_LEN, pd))
		return -EINVAL;
	/* QPs 0 and 1 are special; an MTU must carry at least IPv4's */
	if (pd->qpn < 2 || pd->mtu < IPV4_MIN_MTU + IPOIB_ENCAP_LEN)
		return -EINVAL;
	return 0;
}

static void ipoib_cm_reject(struct ipoib_dev *priv, struct ib_cm_id *id,
			    enum ib_cm_rej_reason reason)
{
	u8 pdata[IPOIB_CM_PDATA_EXT_LEN];

	/* s3.2: our UD QPN goes in every CM message, REJ included */
	ipoib_cm_pdata(priv, pdata);
	ib_send_cm_rej(id, reason, NULL, 0, pdata, sizeof(pdata));
}

static struct ib_qp *ipoib_cm_create_qp(struct ipoib_dev *priv,
					struct ipoib_cm_conn *conn,
					enum ib_qp_type type)
{
	struct ib_qp_init_attr attr = {
		.event_handler = NULL,
		.qp_context = conn,
		.send_cq = priv->cm.send_cq,
		.recv_cq = priv->cm.recv_cq,
		.srq = priv->cm.srq,
		.cap = {
			.max_send_wr = priv->sendq_size,
			.max_send_sge = priv->cm.tx_sge,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = type,
	};

	/* in process context, where a ring of this size can be had */
	if (!conn->tx_ring && !conn->rx_only) {
		conn->tx_ring = kvcalloc(priv->sendq_size,
					 sizeof(*conn->tx_ring), GFP_KERNEL);
		if (!conn->tx_ring)
			return ERR_PTR(-ENOMEM);
	}

	if (!priv->cm.use_srq) {
		attr.cap.max_recv_wr = priv->recvq_size;
		attr.cap.max_recv_sge = IPOIB_CM_RX_PAGES + 1;
	}
	return ib_create_qp(priv->pd, &attr);
}

/* ib_cm computes the attributes; RTR's rq_psn must be our REP's PSN */
static int ipoib_cm_modify(struct ipoib_cm_conn *conn, struct ib_cm_id *id,
			   enum ib_qp_state state, u32 rq_psn)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	ret = ib_cm_init_qp_attr(id, &attr, &mask);
	if (ret)
		return ret;
	if (state == IB_QPS_RTR && !conn->active)
		attr.rq_psn = rq_psn;
	return ib_modify_qp(conn->qp, &attr, mask);
}

struct ipoib_cm_conn *ipoib_cm_conn_new(struct ipoib_dev *priv,
					const u8 *peer, bool active, gfp_t gfp)
{
	struct ipoib_cm_conn *conn;

	conn = kzalloc(sizeof(*conn), gfp);
	if (!conn)
		return NULL;
	conn->priv = priv;
	memcpy(conn->peer, peer, IPOIB_ADDR_LEN);
	conn->active = active;
	conn->last_used = jiffies;
	conn->last_rx = jiffies;
	skb_queue_head_init(&conn->queue);
	INIT_LIST_HEAD(&conn->fail_node);
	return conn;
}

static void ipoib_cm_conn_free(struct ipoib_cm_conn *conn)
{
	kvfree(conn->tx_ring);
	kfree(conn);
}

static void ipoib_cm_conn_free_rcu(struct rcu_head *head)
{
	ipoib_cm_conn_free(container_of(head, struct ipoib_cm_conn, rcu));
}

static void ipoib_cm_set_state(struct ipoib_cm_conn *conn,
			       enum ipoib_cm_state state)
{
	struct ipoib_dev *priv = conn->priv;

	ipoib_dbg(priv, 1, "CM %pI6 qpn 0x%06x: %s -> %s\n", conn->peer + 4,
		  (conn->peer[1] << 16) | (conn->peer[2] << 8) | conn->peer[3],
		  ipoib_cm_state_names[conn->state], ipoib_cm_state_names[state]);
	spin_lock_bh(&priv->cm.lock);
	conn->state = state;
	spin_unlock_bh(&priv->cm.lock);
}

static void ipoib_cm_reap(struct ipoib_cm_conn *conn);
static void ipoib_cm_unhash(struct ipoib_cm_conn *conn);
static int ipoib_cm_handler(struct ib_cm_id *id, const struct ib_cm_event *ev);

/*
 * Free once nothing can reach it (cm_mutex held): out of the table, its
 * resources released, and no fresh attempt pointing at it (->old).
 */
static void ipoib_cm_maybe_free(struct ipoib_cm_conn *conn)
{
	lockdep_assert_held(&conn->priv->cm.mutex);
	if (conn->unhashed && conn->released && !conn->replacing &&
	    !conn->freed) {
		conn->freed = true;
		call_rcu(&conn->rcu, ipoib_cm_conn_free_rcu);
	}
}

/*
 * The one transition function. Called with cm_mutex held, from CM
 * handlers, the connect work or the reaper. @ev says what happened;
 * returns true if the caller (a CM handler for conn->cm_id) must have
 * ib_cm destroy that cm_id, i.e. return non-zero.
 */
static bool ipoib_cm_step(struct ipoib_cm_conn *conn, enum ipoib_cm_event ev,
			  const struct ib_cm_event *cm_ev)
{
	struct ipoib_dev *priv = conn->priv;
	struct ipoib_cm_pdata pd;
	struct sk_buff_head too_big;
	struct sk_buff *skb;
	u8 pdata[IPOIB_CM_PDATA_EXT_LEN];
	bool destroy_id = false;
	int ret;

	lockdep_assert_held(&priv->cm.mutex);
	switch (ev) {
	case IPOIB_CM_EV_REP:
		if (conn->state != IPOIB_CM_REQ_SENT)
			return false;
		ret = ipoib_cm_parse_pdata(cm_ev->private_data, &pd);
		if (ret) {
			atomic_long_inc(&priv->counters.cm_bad_pdata);
			ipoib_warn_rl(priv, "CM: REP without valid private data, rejected\n");
			ipoib_cm_reject(priv, conn->cm_id,
					IB_CM_REJ_CONSUMER_DEFINED);
			goto fail;
		}
		conn->mtu = min_t(u32, pd.mtu, IPOIB_CM_BUF_SIZE) -
			    IPOIB_ENCAP_LEN;
		conn->csum_pending = pd.caps & IPOIB_CM_CAP_CSUM;
		ret = ipoib_cm_modify(conn, conn->cm_id, IB_QPS_RTR, 0);
		if (!ret)
			ret = ipoib_cm_modify(conn, conn->cm_id, IB_QPS_RTS, 0);
		if (!ret) {
			ipoib_cm_pdata(priv, pdata);
			ret = ib_send_cm_rtu(conn->cm_id, pdata, sizeof(pdata));
		}
		if (ret) {
			ipoib_warn_rl(priv, "CM: cannot complete the connection: %d\n",
				      ret);
			ipoib_cm_reject(priv, conn->cm_id,
					IB_CM_REJ_CONSUMER_DEFINED);
			goto fail;
		}
		goto live;
	case IPOIB_CM_EV_RTU:
		if (conn->state != IPOIB_CM_REP_SENT)
			return false;
		ret = ipoib_cm_modify(conn, conn->cm_id, IB_QPS_RTS, 0);
		if (ret) {
			ipoib_warn_rl(priv, "CM: QP to RTS failed: %d\n", ret);
			goto fail;
		}
		goto live;
	case IPOIB_CM_EV_REJ:
		/* a REQ to the Linux service ID refused: try the RFC one */
		if (conn->state == IPOIB_CM_REQ_SENT && cm_ev &&
		    cm_ev->event == IB_CM_REJ_RECEIVED &&
		    cm_ev->param.rej_rcvd.reason == IB_CM_REJ_INVALID_SERVICE_ID &&
		    !conn->sid_rfc) {
			conn->retry_sid_rfc = true;
			conn->retry_at = jiffies;
			goto close;
		}
		goto fail;
	case IPOIB_CM_EV_FAIL:
		goto fail;
	case IPOIB_CM_EV_DREQ:
	case IPOIB_CM_EV_CLOSE:
		conn->retry_at = jiffies;
		goto close;
	}
	return false;

live:
	atomic_long_inc(&priv->counters.cm_connections);
	conn->backoff = 0;
	conn->was_live = true;
	ipoib_cm_set_state(conn, IPOIB_CM_LIVE);
	/* what waited for the connection goes first, in order */
	__skb_queue_head_init(&too_big);
	spin_lock_bh(&priv->cm.lock);
	while ((skb = __skb_dequeue(&conn->queue))) {
		if (ipoib_cm_ip_len(skb) > conn->mtu) {
			__skb_queue_tail(&too_big, skb);
		} else if (ipoib_cm_tx_full(conn)) {
			/* only with a send queue shorter than this queue */
			DEV_STATS_INC(priv->dev, tx_dropped);
			dev_kfree_skb_any(skb);
		} else {
			ipoib_cm_send(conn, skb);
		}
	}
	spin_unlock_bh(&priv->cm.lock);
	while ((skb = __skb_dequeue(&too_big)))
		ipoib_tx_too_big(priv, skb, conn->mtu);
	return false;

fail:
	atomic_long_inc(&priv->counters.cm_failures);
	conn->backoff = conn->backoff ? min_t(unsigned long, conn->backoff * 2,
					      IPOIB_CM_BACKOFF_MAX) : HZ;
	conn->retry_at = jiffies + conn->backoff;
close:
	if (conn->state == IPOIB_CM_CLOSED)
		return false;
	ipoib_cm_set_state(conn, IPOIB_CM_CLOSED);
	/* only our own attempts leave a marker (for the retry backoff) */
	if (!conn->active)
		ipoib_cm_unhash(conn);
	if (cm_ev && conn->cm_id) {
		/* the handler's id: ib_cm destroys it when we return */
		conn->cm_id = NULL;
		destroy_id = true;
	}
	ipoib_cm_reap(conn);
	return destroy_id;
}

/*
 * Release a closed connection's resources in process context (cm_wq):
 * its cm_id unless a handler gave it back, its QP once every send
 * completed, then the connection itself if it left the table.
 */
static void ipoib_cm_reap(struct ipoib_cm_conn *conn)
{
	struct ipoib_dev *priv = conn->priv;

	spin_lock_bh(&priv->cm.reap_lock);
	list_add_tail(&conn->reap_node, &priv->cm.reap_list);
	spin_unlock_bh(&priv->cm.reap_lock);
	queue_work(priv->cm.wq, &priv->cm.reap_work);
}

/*
 * A connection's QP goes: to the error state, which flushes the sends
 * and receives in flight; NAPI reaps them; then it is destroyed and its
 * own receive ring (no SRQ) freed. Process context.
 */
static void ipoib_cm_destroy_qp(struct ipoib_cm_conn *conn)
{
	struct ipoib_dev *priv = conn->priv;
	unsigned long deadline = jiffies + IPOIB_CM_DRAIN_TIMEOUT;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	bool drained = true;

	ipoib_cm_qp_del(conn);
	/* before the flush: NAPI must not repost into a QP in error */
	if (conn->rx)
		WRITE_ONCE(conn->rx->closing, true);
	ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
	while (ipoib_cm_tx_inflight(conn)) {
		if (time_after(jiffies, deadline)) {
			netdev_warn(priv->dev, "CM: %u sends not flushed\n",
				    ipoib_cm_tx_inflight(conn));
			break;
		}
		usleep_range(1000, 2000);
	}
	if (conn->rx)
		drained = ipoib_cm_rx_conn_drain(conn);
	ib_destroy_qp(conn->qp);
	conn->qp = NULL;
	if (conn->rx)
		ipoib_cm_rx_conn_close(conn, drained);
}

static void ipoib_cm_release(struct ipoib_cm_conn *conn)
{
	struct ipoib_dev *priv = conn->priv;
	struct ib_cm_id *id;

	mutex_lock(&priv->cm.mutex);
	id = conn->cm_id;
	conn->cm_id = NULL;
	mutex_unlock(&priv->cm.mutex);
	/*
	 * Never established: REJ it ourselves, so that the peer gets our UD
	 * QPN (RFC 4755 s3.2) and the id is idle, with no MAD retries left
	 * for ib_destroy_cm_id() to wait out.
	 */
	if (id && !conn->was_live)
		ipoib_cm_reject(priv, id, IB_CM_REJ_CONSUMER_DEFINED);
	if (id)
		ib_destroy_cm_id(id);

	if (conn->qp)
		ipoib_cm_destroy_qp(conn);
	ipoib_cm_flush_to_ud(conn);
	if (conn->sgid_attr) {
		rdma_put_gid_attr(conn->sgid_attr);
		conn->sgid_attr = NULL;
	}
}

static void ipoib_cm_reap_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      cm.reap_work);
	struct ipoib_cm_conn *conn;

	for (;;) {
		spin_lock_bh(&priv->cm.reap_lock);
		conn = list_first_entry_or_null(&priv->cm.reap_list,
						struct ipoib_cm_conn, reap_node);
		if (conn)
			list_del(&conn->reap_node);
		spin_unlock_bh(&priv->cm.reap_lock);
		if (!conn)
			return;
		ipoib_cm_release(conn);
		mutex_lock(&priv->cm.mutex);
		conn->released = true;
		/* a send error queued it before its sends drained */
		spin_lock_bh(&priv->cm.reap_lock);
		if (!list_empty(&conn->fail_node))
			list_del_init(&conn->fail_node);
		spin_unlock_bh(&priv->cm.reap_lock);
		ipoib_cm_maybe_free(conn);
		mutex_unlock(&priv->cm.mutex);
	}
}

/* Take a connection out of the table (cm_mutex held). */
static void ipoib_cm_unhash(struct ipoib_cm_conn *conn)
{
	struct ipoib_dev *priv = conn->priv;

	lockdep_assert_held(&priv->cm.mutex);
	if (conn->unhashed)
		return;
	spin_lock_bh(&priv->cm.lock);
	hash_del_rcu(&conn->node);
	priv->cm.nconns--;
	spin_unlock_bh(&priv->cm.lock);
	conn->unhashed = true;
	ipoib_cm_maybe_free(conn);
}

/* Active side: QP, fresh cm_id, REQ (connect work, process context). */
static int ipoib_cm_send_req(struct ipoib_cm_conn *conn)
{
	struct ipoib_dev *priv = conn->priv;
	struct ib_qp_attr qp_attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = priv->pkey_index,
		.port_num = priv->port,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE,
	};
	struct ib_cm_req_param req = {
		.primary_path = &conn->path_rec,
		.qp_type = conn->uc ? IB_QPT_UC : IB_QPT_RC,
		.responder_resources = 0,
		.initiator_depth = 0,
		.remote_cm_response_timeout = IPOIB_CM_RESPONSE,
		.local_cm_response_timeout = IPOIB_CM_RESPONSE,
		.retry_count = IPOIB_CM_RETRY,
		.rnr_retry_count = IPOIB_CM_RNR_RETRY,
		.max_cm_retries = IPOIB_CM_MAX_CM_RETRIES,
		.srq = priv->cm.use_srq,
		.private_data_len = IPOIB_CM_PDATA_EXT_LEN,
	};
	struct ib_cm_id *id;
	u8 pdata[IPOIB_CM_PDATA_EXT_LEN];
	u32 peer_qpn;
	int ret;

	conn->qp = ipoib_cm_create_qp(priv, conn, req.qp_type);
	if (IS_ERR(conn->qp)) {
		ret = PTR_ERR(conn->qp);
		conn->qp = NULL;
		return ret;
	}
	ipoib_cm_qp_add(conn);
	ret = ib_modify_qp(conn->qp, &qp_attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (!ret && !priv->cm.use_srq)
		ret = ipoib_cm_rx_conn_open(conn);
	if (ret)
		return ret;
	id = ib_create_cm_id(priv->ca, ipoib_cm_handler, conn);
	if (IS_ERR(id))
		return PTR_ERR(id);
	conn->cm_id = id;
	conn->path_rec.packet_life_time = IPOIB_CM_ACK_TIMEOUT - 1;
	ipoib_cm_pdata(priv, pdata);
	peer_qpn = (conn->peer[1] << 16) | (conn->peer[2] << 8) | conn->peer[3];
	req.service_id = cpu_to_be64(conn->sid_rfc ? ipoib_sid_rfc(peer_qpn) :
				     ipoib_sid_linux(peer_qpn));
	req.ppath_sgid_attr = conn->sgid_attr;
	req.qp_num = conn->qp->qp_num;
	req.starting_psn = get_random_u32() & 0xffffff;
	req.private_data = pdata;
	return ib_send_cm_req(id, &req);
}

/* Passive side: a REQ on one of our two service IDs. */
static int ipoib_cm_req(struct ipoib_dev *priv, struct ib_cm_id *id,
			const struct ib_cm_event *ev)
{
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	struct ipoib_cm_conn *conn, *old, *ours;
	struct ib_cm_rep_param rep = {};
	struct ipoib_cm_pdata pd;
	bool rx_only;
	u8 pdata[IPOIB_CM_PDATA_EXT_LEN];
	u8 local[IPOIB_ADDR_LEN];
	u8 peer[IPOIB_ADDR_LEN];
	u32 psn;
	int ret;

	if (ipoib_cm_parse_pdata(ev->private_data, &pd)) {
		atomic_long_inc(&priv->counters.cm_bad_pdata);
		ipoib_warn_rl(priv, "CM: REQ without valid private data, rejected\n");
		ipoib_cm_reject(priv, id, IB_CM_REJ_CONSUMER_DEFINED);
		return 1;
	}
	if (req->qp_type != IB_QPT_RC && req->qp_type != IB_QPT_UC) {
		ipoib_warn_rl(priv, "CM: REQ for QP type %d, rejected\n",
			      req->qp_type);
		ipoib_cm_reject(priv, id, IB_CM_REJ_INVALID_TRANSPORT_TYPE);
		return 1;
	}
	/* s3.3: the peer is its UD QPN and the GID it sent from */
	ipoib_cm_peer_addr(peer, pd.qpn, &req->primary_path->dgid);
	ipoib_cm_peer_addr(local, priv->qp->qp_num, &priv->local_gid);
	/*
	 * We send on it as well if the peer does the same with ours: it said
	 * so, or it came to the RFC's service ID, whose s3.3 wants one
	 * connection per pair. Else it is the in-tree model (see the top).
	 */
	rx_only = !ipoib_cm_bidir ||
		  !((pd.caps & IPOIB_CM_CAP_BIDIR) ||
		    req->listen_id == priv->cm.listen[1]);

	mutex_lock(&priv->cm.mutex);
	if (!test_bit(IPOIB_FLAG_CM_UP, &priv->flags)) {
		mutex_unlock(&priv->cm.mutex);
		ipoib_cm_reject(priv, id, IB_CM_REJ_STALE_CONN);
		return 1;
	}
	/*
	 * s3.3: REQs crossed. The interface with the smaller address (flags
	 * zeroed, most significant octet first) accepts, the other rejects
	 * with Consumer Reject; our own REQ then meets the same fate there.
	 * The rule keeps two connections from being made; towards an
	 * in-tree model peer two connections are the design, so it does
	 * not apply (nor does that peer apply it).
	 */
	ours = rx_only ? NULL : ipoib_cm_find(priv, peer, false);
	if (ours && ours->state == IPOIB_CM_REQ_SENT &&
	    ipoib_lladdr_cmp(local, peer) > 0) {
		mutex_unlock(&priv->cm.mutex);
		atomic_long_inc(&priv->counters.cm_crossed);
		ipoib_dbg(priv, 1, "CM: REQs crossed, rejecting the peer's\n");
		ipoib_cm_reject(priv, id, IB_CM_REJ_CONSUMER_DEFINED);
		return 1;
	}
	if (ours && ours->state == IPOIB_CM_REQ_SENT)
		atomic_long_inc(&priv->counters.cm_crossed);
	/* the one this replaces: an rx_only one never replaces ours */
	old = ipoib_cm_find(priv, peer, rx_only);
	if (!old && priv->cm.nconns >= priv->cm.max_conns) {
		mutex_unlock(&priv->cm.mutex);
		ipoib_warn_rl(priv, "CM: %u connections, rejecting another\n",
			      priv->cm.max_conns);
		ipoib_cm_reject(priv, id, IB_CM_REJ_NO_RESOURCES);
		return 1;
	}
	conn = ipoib_cm_conn_new(priv, peer, false, GFP_KERNEL);
	if (!conn)
		goto reject;
	conn->state = IPOIB_CM_REP_SENT;
	conn->rx_only = rx_only;
	conn->uc = req->qp_type == IB_QPT_UC;
	conn->cm_id = id;
	conn->mtu = min_t(u32, pd.mtu, IPOIB_CM_BUF_SIZE) - IPOIB_ENCAP_LEN;
	conn->csum_pending = pd.caps & IPOIB_CM_CAP_CSUM;
	conn->qp = ipoib_cm_create_qp(priv, conn, req->qp_type);
	if (IS_ERR(conn->qp)) {
		conn->qp = NULL;
		goto free;
	}
	ipoib_cm_qp_add(conn);
	psn = get_random_u32() & 0xffffff;
	ret = ipoib_cm_modify(conn, id, IB_QPS_INIT, 0);
	if (!ret && !priv->cm.use_srq)
		ret = ipoib_cm_rx_conn_open(conn);
	if (!ret)
		ret = ipoib_cm_modify(conn, id, IB_QPS_RTR, psn);
	if (ret)
		goto destroy_qp;
	ipoib_cm_pdata(priv, pdata);
	rep.private_data = pdata;
	rep.private_data_len = sizeof(pdata);
	rep.qp_num = conn->qp->qp_num;
	rep.starting_psn = psn;
	rep.rnr_retry_count = IPOIB_CM_RNR_RETRY;
	rep.srq = priv->cm.use_srq;
	ret = ib_send_cm_rep(id, &rep);
	if (ret)
		goto destroy_qp;
	id->context = conn;

	/*
	 * A connection we had to this peer is over: it made a new one. Our
	 * own REQ of a crossing stays until the peer's REJ (or the CM's
	 * timeout) ends it: destroying a cm_id with a REQ out can block
	 * for a minute while the MAD layer retries.
	 */
	if (old) {
		ipoib_cm_unhash(old);
		if (old->state == IPOIB_CM_REQ_SENT && old->cm_id) {
			ipoib_cm_set_state(old, IPOIB_CM_CLOSED);
			list_add_tail(&old->super_node, &priv->cm.superseded);
			old->superseded = true;
		} else {
			ipoib_cm_step(old, IPOIB_CM_EV_CLOSE, NULL);
		}
	}
	spin_lock_bh(&priv->cm.lock);
	ipoib_cm_hash_add(priv, conn);
	spin_unlock_bh(&priv->cm.lock);
	mutex_unlock(&priv->cm.mutex);
	return 0;

destroy_qp:
	ipoib_cm_destroy_qp(conn);
	/* its own receive ring may have asked fail_work for it meanwhile */
	spin_lock_bh(&priv->cm.reap_lock);
	list_del_init(&conn->fail_node);
	spin_unlock_bh(&priv->cm.reap_lock);
free:
	/* a stale completion of a QP at the same address may have found it */
	call_rcu(&conn->rcu, ipoib_cm_conn_free_rcu);
reject:
	mutex_unlock(&priv->cm.mutex);
	ipoib_warn_rl(priv, "CM: cannot accept a connection\n");
	ipoib_cm_reject(priv, id, IB_CM_REJ_NO_RESOURCES);
	return 1;
}

static int ipoib_cm_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct ipoib_cm_conn *conn;
	enum ipoib_cm_event what;
	struct ipoib_dev *priv;
	bool destroy;

	if (ev->event == IB_CM_REQ_RECEIVED)
		return ipoib_cm_req(id->context, id, ev);

	conn = id->context;
	priv = conn->priv;
	switch (ev->event) {
	case IB_CM_REP_RECEIVED:
		what = IPOIB_CM_EV_REP;
		break;
	case IB_CM_RTU_RECEIVED:
	case IB_CM_USER_ESTABLISHED:
		what = IPOIB_CM_EV_RTU;
		break;
	case IB_CM_REJ_RECEIVED:
	case IB_CM_REQ_ERROR:
	case IB_CM_REP_ERROR:
		what = IPOIB_CM_EV_REJ;
		break;
	case IB_CM_DREQ_RECEIVED:
		what = IPOIB_CM_EV_DREQ;
		break;
	case IB_CM_DREQ_ERROR:
	case IB_CM_DREP_RECEIVED:
	case IB_CM_TIMEWAIT_EXIT:
		what = IPOIB_CM_EV_CLOSE;
		break;
	default:
		return 0;
	}
	mutex_lock(&priv->cm.mutex);
	/* the reaper took the id and waits for us to return */
	if (conn->cm_id != id) {
		mutex_unlock(&priv->cm.mutex);
		return 0;
	}
	/* our side of crossed REQs: whatever comes now ends it */
	if (conn->superseded) {
		list_del(&conn->super_node);
		conn->superseded = false;
		if (what == IPOIB_CM_EV_REP)
			ipoib_cm_reject(priv, id, IB_CM_REJ_CONSUMER_DEFINED);
		conn->cm_id = NULL;
		ipoib_cm_reap(conn);
		mutex_unlock(&priv->cm.mutex);
		return 1;
	}
	destroy = ipoib_cm_step(conn, what, ev);
	mutex_unlock(&priv->cm.mutex);
	return destroy;
}

/*
 * Connections xmit asked for: hash them (replacing a closed one) and
 * send their REQs. Process context, so that ib_cm may sleep.
 */
static void ipoib_cm_start_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      cm.start_work);
	struct ipoib_cm_conn *conn, *old;
	int ret;

	for (;;) {
		mutex_lock(&priv->cm.mutex);
		spin_lock_bh(&priv->cm.lock);
		conn = list_first_entry_or_null(&priv->cm.start_list,
						struct ipoib_cm_conn, start_node);
		if (conn) {
			list_del_init(&conn->start_node);
			old = conn->old;
			conn->old = NULL;
			/* a REQ of the peer's may have been accepted meanwhile */
			if (ipoib_cm_find(priv, conn->peer, false) != old ||
			    !test_bit(IPOIB_FLAG_CM_UP, &priv->flags)) {
				spin_unlock_bh(&priv->cm.lock);
				if (old) {
					old->replacing = false;
					ipoib_cm_maybe_free(old);
				}
				mutex_unlock(&priv->cm.mutex);
				ipoib_cm_flush_to_ud(conn);
				ipoib_cm_conn_free(conn);
				continue;
			}
			if (old) {
				hash_del_rcu(&old->node);
				priv->cm.nconns--;
			}
			ipoib_cm_hash_add(priv, conn);
		}
		spin_unlock_bh(&priv->cm.lock);
		if (!conn) {
			mutex_unlock(&priv->cm.mutex);
			return;
		}
		if (old) {
			old->unhashed = true;
			old->replacing = false;
			ipoib_cm_maybe_free(old);
		}
		conn->sgid_attr = rdma_get_gid_attr(priv->ca, priv->port, 0);
		if (IS_ERR(conn->sgid_attr)) {
			ret = PTR_ERR(conn->sgid_attr);
			conn->sgid_attr = NULL;
		} else {
			ret = ipoib_cm_send_req(conn);
		}
		if (ret) {
			ipoib_warn_rl(priv, "CM: cannot send a REQ: %d\n", ret);
			ipoib_cm_step(conn, IPOIB_CM_EV_FAIL, NULL);
		}
		mutex_unlock(&priv->cm.mutex);
	}
}

/* A send failed on a connection (NAPI): fail_work closes it. */
void ipoib_cm_fail_later(struct ipoib_cm_conn *conn)
{
	struct ipoib_dev *priv = conn->priv;

	if (test_and_set_bit(0, &conn->failing))
		return;
	spin_lock_bh(&priv->cm.reap_lock);
	list_add_tail(&conn->fail_node, &priv->cm.fail_list);
	spin_unlock_bh(&priv->cm.reap_lock);
	queue_work(priv->cm.wq, &priv->cm.fail_work);
}

/* A send failed on a connection (from NAPI): close it, UD takes over. */
static void ipoib_cm_fail_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      cm.fail_work);
	struct ipoib_cm_conn *conn;

	for (;;) {
		/* under cm_mutex: the reaper cannot free it meanwhile */
		mutex_lock(&priv->cm.mutex);
		spin_lock_bh(&priv->cm.reap_lock);
		conn = list_first_entry_or_null(&priv->cm.fail_list,
						struct ipoib_cm_conn, fail_node);
		if (conn)
			list_del_init(&conn->fail_node);
		spin_unlock_bh(&priv->cm.reap_lock);
		if (conn)
			ipoib_cm_step(conn, IPOIB_CM_EV_FAIL, NULL);
		mutex_unlock(&priv->cm.mutex);
		if (!conn)
			return;
	}
}

/*
 * NAPI: a message came in on @qp (wc->qp). It may be a QP destroyed
 * since, its completion still queued: only its value is compared, never
 * dereferenced, and only the connection's receive time is kept.
 */
void ipoib_cm_rx_seen(struct ipoib_dev *priv, const struct ib_qp *qp)
{
	unsigned long now = jiffies;
	struct ipoib_cm_conn *conn;

	rcu_read_lock();
	hash_for_each_possible_rcu(priv->cm.by_qp, conn, qp_node,
				   (unsigned long)qp) {
		if (READ_ONCE(conn->qp) != qp)
			continue;
		/* one store per tick: the line stays shared between CPUs */
		if (READ_ONCE(conn->last_rx) != now)
			WRITE_ONCE(conn->last_rx, now);
		/* we told the peer we would not take data on ours */
		if (unlikely(conn->active && !ipoib_cm_bidir))
			atomic_long_inc(&priv->counters.cm_rx_misdirected);
		break;
	}
	rcu_read_unlock();
}

/*
 * Idle connections are closed (RFC 4755 s3.4 leaves the policy to us):
 * nothing sent or received on it for IPOIB_CM_IDLE.
 */
static void ipoib_cm_gc_one(struct ipoib_cm_conn *conn)
{
	unsigned long last = READ_ONCE(conn->last_used);

	if (conn->state == IPOIB_CM_CLOSED) {
		/* a marker whose retry time is long past */
		if (time_after(jiffies, conn->retry_at + IPOIB_CM_IDLE))
			ipoib_cm_unhash(conn);
		return;
	}
	if (time_after(READ_ONCE(conn->last_rx), last))
		last = READ_ONCE(conn->last_rx);
	if (conn->state == IPOIB_CM_LIVE &&
	    time_after(jiffies, last + IPOIB_CM_IDLE)) {
		ipoib_cm_unhash(conn);
		ipoib_cm_step(conn, IPOIB_CM_EV_CLOSE, NULL);
	}
}

static void ipoib_cm_close_one(struct ipoib_cm_conn *conn)
{
	ipoib_cm_unhash(conn);
	ipoib_cm_step(conn, IPOIB_CM_EV_CLOSE, NULL);
}

/* @fn on every connection of both tables, cm_mutex held */
static void ipoib_cm_for_each(struct ipoib_dev *priv,
			      void (*fn)(struct ipoib_cm_conn *conn))
{
	struct ipoib_cm_conn *conn;
	struct hlist_node *n;
	unsigned int bkt;

	lockdep_assert_held(&priv->cm.mutex);
	for (bkt = 0; bkt < HASH_SIZE(priv->cm.conns); bkt++) {
		hlist_for_each_entry_safe(conn, n, &priv->cm.conns[bkt], node)
			fn(conn);
		hlist_for_each_entry_safe(conn, n, &priv->cm.rx_only[bkt], node)
			fn(conn);
	}
}

static void ipoib_cm_gc_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      cm.gc_work.work);

	mutex_lock(&priv->cm.mutex);
	ipoib_cm_for_each(priv, ipoib_cm_gc_one);
	mutex_unlock(&priv->cm.mutex);
	queue_delayed_work(priv->cm.wq, &priv->cm.gc_work, IPOIB_CM_IDLE / 4);
}

/* --- set-up and teardown of the interface's CM side ---------------------- */

static void ipoib_cm_cq_event(struct ib_cq *cq, void *ctx)
{
	struct ipoib_dev *priv = ctx;

	napi_schedule(&priv->napi);
}

static bool ipoib_cm_srq_capable(struct ipoib_dev *priv)
{
	return priv->ca->attrs.max_srq > 0 &&
	       priv->ca->attrs.max_srq_sge > IPOIB_CM_RX_PAGES &&
	       priv->ca->attrs.max_srq_wr >= priv->recvq_size;
}

/* An SRQ, or a receive queue per connection (at least one allowed). */
bool ipoib_cm_capable(struct ipoib_dev *priv)
{
	return (ipoib_cm_srq && ipoib_cm_srq_capable(priv)) ||
	       (ipoib_max_nonsrq_conn_qp &&
		priv->ca->attrs.max_recv_sge > IPOIB_CM_RX_PAGES &&
		priv->ca->attrs.max_qp_wr >= priv->recvq_size);
}

/* ndo_init: CQs; the SRQ and listening come with ndo_open. */
int ipoib_cm_init(struct ipoib_dev *priv)
{
	struct ib_cq_init_attr attr = {};

	mutex_init(&priv->cm.mutex);
	spin_lock_init(&priv->cm.lock);
	spin_lock_init(&priv->cm.reap_lock);
	hash_init(priv->cm.conns);
	hash_init(priv->cm.rx_only);
	hash_init(priv->cm.by_qp);
	INIT_LIST_HEAD(&priv->cm.reap_list);
	INIT_LIST_HEAD(&priv->cm.fail_list);
	INIT_LIST_HEAD(&priv->cm.start_list);
	INIT_LIST_HEAD(&priv->cm.superseded);
	INIT_WORK(&priv->cm.reap_work, ipoib_cm_reap_work);
	INIT_WORK(&priv->cm.fail_work, ipoib_cm_fail_work);
	INIT_WORK(&priv->cm.start_work, ipoib_cm_start_work);
	INIT_DELAYED_WORK(&priv->cm.gc_work, ipoib_cm_gc_work);
	ida_init(&priv->cm.nonsrq_ida);
	if (!ipoib_cm_capable(priv))
		return 0;
	priv->cm.use_srq = ipoib_cm_srq && ipoib_cm_srq_capable(priv);

	priv->cm.wq = alloc_ordered_workqueue("%s_cm", WQ_MEM_RECLAIM,
					      priv->dev->name);
	if (!priv->cm.wq)
		return -ENOMEM;
	attr.cqe = min_t(int, priv->sendq_size * IPOIB_CM_MAX_CONNS,
			 priv->ca->attrs.max_cqe);
	/* every connection's full send ring must fit in the send CQ */
	priv->cm.max_conns = attr.cqe / priv->sendq_size;
	/* a send gathers the skb's head and fragments where it can */
	priv->cm.tx_sge = clamp_t(u32, priv->ca->attrs.max_send_sge, 1,
				  IPOIB_CM_TX_SGE);
	priv->cm.send_cq = ib_create_cq(priv->ca, ipoib_cm_cq_event, NULL,
					priv, &attr);
	if (IS_ERR(priv->cm.send_cq))
		goto fail;
	/*
	 * Every posted receive must fit in the CQ: the SRQ's ring, or the
	 * rings of as many connections as the CQ the HCA allows can take.
	 */
	attr.cqe = priv->recvq_size;
	if (!priv->cm.use_srq) {
		attr.cqe = min_t(u64, (u64)priv->recvq_size *
				 ipoib_max_nonsrq_conn_qp,
				 priv->ca->attrs.max_cqe);
		priv->cm.nonsrq_max = attr.cqe / priv->recvq_size;
		if (!priv->cm.nonsrq_max)
			goto fail_send_cq;
		priv->cm.nonsrq = kcalloc(priv->cm.nonsrq_max,
					  sizeof(*priv->cm.nonsrq), GFP_KERNEL);
		if (!priv->cm.nonsrq)
			goto fail_send_cq;
	}
	priv->cm.recv_cq = ib_create_cq(priv->ca, ipoib_cm_cq_event, NULL,
					priv, &attr);
	if (IS_ERR(priv->cm.recv_cq))
		goto fail_send_cq;
	if (!priv->cm.use_srq)
		ibdev_info(priv->ca, "port %u: connected mode without a shared receive queue: at most %u connections, %u receive buffers each\n",
			   priv->port, priv->cm.nonsrq_max, priv->recvq_size);
	return 0;
fail_send_cq:
	kfree(priv->cm.nonsrq);
	priv->cm.nonsrq = NULL;
	ib_destroy_cq(priv->cm.send_cq);
fail:
	netdev_warn(priv->dev, "CM: cannot create CQs: connected mode unavailable\n");
	destroy_workqueue(priv->cm.wq);
	priv->cm.wq = NULL;
	priv->cm.send_cq = NULL;
	priv->cm.recv_cq = NULL;
	return 0;
}

void ipoib_cm_cleanup(struct ipoib_dev *priv)
{
	WARN_ON_ONCE(!hash_empty(priv->cm.by_qp));
	ida_destroy(&priv->cm.nonsrq_ida);
	if (!priv->cm.wq)
		return;
	destroy_workqueue(priv->cm.wq);
	ib_destroy_cq(priv->cm.recv_cq);
	ib_destroy_cq(priv->cm.send_cq);
	kfree(priv->cm.nonsrq);
	priv->cm.nonsrq = NULL;
	priv->cm.wq = NULL;
}

/* Whether this interface has what connected mode needs. */
bool ipoib_cm_available(struct ipoib_dev *priv)
{
	return priv->cm.wq;
}

static int ipoib_cm_listen(struct ipoib_dev *priv, unsigned int i, u64 sid)
{
	struct ib_cm_id *id;
	int ret;

	id = ib_create_cm_id(priv->ca, ipoib_cm_handler, priv);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = ib_cm_listen(id, cpu_to_be64(sid));
	if (ret) {
		ib_destroy_cm_id(id);
		return ret;
	}
	priv->cm.listen[i] = id;
	return 0;
}

/*
 * ndo_open: the SRQ and its buffers, then listen on both service IDs
 * (RFC 4755 s3.5 and the Linux/OFED form), so every deployed peer can
 * connect to us, whatever mode we send in.
 */
int ipoib_cm_open(struct ipoib_dev *priv)
{
	u32 qpn = priv->qp->qp_num;
	unsigned int i;
	int ret;

	if (!ipoib_cm_available(priv))
		return 0;
	ret = ipoib_cm_rx_open(priv);
	if (ret)
		goto fail;
	ret = ipoib_cm_listen(priv, 0, ipoib_sid_linux(qpn));
	if (!ret)
		ret = ipoib_cm_listen(priv, 1, ipoib_sid_rfc(qpn));
	if (ret)
		goto fail_listen;
	ipoib_arm_cq(priv, priv->cm.recv_cq);
	ipoib_arm_cq(priv, priv->cm.send_cq);
	set_bit(IPOIB_FLAG_CM_UP, &priv->flags);
	queue_delayed_work(priv->cm.wq, &priv->cm.gc_work, IPOIB_CM_IDLE / 4);
	return 0;

fail_listen:
	for (i = 0; i < ARRAY_SIZE(priv->cm.listen); i++) {
		if (priv->cm.listen[i])
			ib_destroy_cm_id(priv->cm.listen[i]);
		priv->cm.listen[i] = NULL;
	}
	ipoib_cm_rx_close(priv);
fail:
	netdev_err(priv->dev, "CM: cannot set up the receive side: %d\n", ret);
	return ret;
}

/*
 * ndo_stop, before the UD side (NAPI must still reap the flushed sends):
 * stop listening, close every connection, free the SRQ.
 */
void ipoib_cm_stop(struct ipoib_dev *priv)
{
	struct ipoib_cm_conn *conn, *tmp;
	unsigned int i;

	if (!test_and_clear_bit(IPOIB_FLAG_CM_UP, &priv->flags))
		return;
	for (i = 0; i < ARRAY_SIZE(priv->cm.listen); i++) {
		ib_destroy_cm_id(priv->cm.listen[i]);
		priv->cm.listen[i] = NULL;
	}
	cancel_delayed_work_sync(&priv->cm.gc_work);
	flush_workqueue(priv->cm.wq);

	mutex_lock(&priv->cm.mutex);
	spin_lock_bh(&priv->cm.lock);
	list_for_each_entry_safe(conn, tmp, &priv->cm.start_list, start_node) {
		list_del_init(&conn->start_node);
		if (conn->old) {
			conn->old->replacing = false;
			ipoib_cm_maybe_free(conn->old);
		}
		__skb_queue_purge(&conn->queue);
		ipoib_cm_conn_free(conn);
	}
	spin_unlock_bh(&priv->cm.lock);
	ipoib_cm_for_each(priv, ipoib_cm_close_one);
	list_for_each_entry_safe(conn, tmp, &priv->cm.superseded, super_node) {
		list_del(&conn->super_node);
		conn->superseded = false;
		ipoib_cm_reap(conn);
	}
	mutex_unlock(&priv->cm.mutex);
	/* the reaper destroys cm_ids and QPs and waits for their sends */
	flush_workqueue(priv->cm.wq);
	rcu_barrier();
	/* no receive completion may meet the ring while it goes */
	napi_disable(&priv->napi);
	ipoib_cm_rx_close(priv);
	napi_enable(&priv->napi);
	atomic_set(&priv->cm.tx_stopped, 0);
}

static void ipoib_cm_show_one(struct seq_file *m, struct ipoib_cm_conn *conn)
{
	seq_printf(m, "GID: %pI6c QPN: 0x%06x %s %s %s MTU: %u RQ: %s TX-CSUM: %s\n",
		   conn->peer + 4, (conn->peer[1] << 16) |
		   (conn->peer[2] << 8) | conn->peer[3],
		   conn->uc ? "UC" : "RC",
		   conn->active ? "active" :
		   conn->rx_only ? "rx-only" : "passive",
		   ipoib_cm_state_names[conn->state], conn->mtu,
		   conn->priv->cm.use_srq ? "srq" : "own",
		   conn->csum_pending ? "pending" : "complete");
}

void ipoib_cm_show(struct ipoib_dev *priv, struct seq_file *m)
{
	struct ipoib_cm_conn *conn;
	unsigned int bkt;

	rcu_read_lock();
	hash_for_each_rcu(priv->cm.conns, bkt, conn, node)
		ipoib_cm_show_one(m, conn);
	hash_for_each_rcu(priv->cm.rx_only, bkt, conn, node)
		ipoib_cm_show_one(m, conn);
	rcu_read_unlock();
}
