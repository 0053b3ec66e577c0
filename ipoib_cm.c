// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode (RFC 4755): peers, and the life cycle of the channels
 * (RC or UC connections through ib_cm) to and from them. Channels receive
 * into one SRQ shared by all, or into a queue each without one
 * (ipoib_cm_rx.c); ipoib_cm_tx.c sends on them; ipoib_cm_setup.c speaks
 * to ib_cm and sets up their QPs. Multicast, broadcast and ARP/ND stay on
 * the UD QP (s2.1, s7); a peer without a live channel is reached over UD.
 *
 * Between two of us (our private data extension says "bidirectional") and
 * towards peers on the RFC's service ID, one connection per pair of
 * interfaces carries both directions, crossed REQs resolved as s3.3 says.
 * The in-tree driver instead sends only on connections it opened and
 * cannot take data on them, so a peer that did not say "bidirectional"
 * gets the in-tree model: we only receive on its channel (rx_only) and
 * open our own.
 *
 * Lifetime (ipoib_cm.h draws the states): a peer is kref'd, in
 * priv->cm.peers; each channel holds a reference on it. The one a peer
 * sends on is published in peer->tx. (Both are RCU-managed, freed after a
 * grace period; today's readers take cm.lock, which sends need anyway.) Teardown: ipoib_cm_step()
 * marks the channel DRAINING and unpublishes it, the QP goes to the error
 * state, and the channel waits for the completions of everything it
 * posted; the last one queues it for the release work, which destroys its
 * cm_id and QP and frees it after a grace period. No timer frees memory
 * the HCA may still write.
 */
#include <linux/bsearch.h>
#include <linux/jhash.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>

#include "ipoib.h"
#include "ipoib_cm.h"
#include "ipoib_trace.h"

#define IPOIB_CM_BACKOFF_MAX	(16 * HZ)
#define IPOIB_CM_MAX_PEERS	4096
/* An HCA that never reports LAST_WQE_REACHED (rxe before 6.6) */
#define IPOIB_CM_LAST_WQE_WAIT	HZ
/*
 * A channel not live this long after its REQ or REP went out is closed:
 * the REQ, REP or RTU was lost (a peer whose port was down, or whose
 * address was still tentative, when it came), and ib_cm would retry it
 * only after its response timeout (4.3 s), up to 8 times, while what
 * waits for it waits and, ours outstanding, every REQ of the peer's is
 * rejected as crossing it (s3.3). A remote peer's REQ holds resources no
 * longer either.
 */
#define IPOIB_CM_SETUP_LIMIT	(2 * HZ)
/*
 * How long REJs of ours for a crossing (with no REQ of the peer's to
 * take) are retried at once: the peer gives way once its own REQ is a
 * second old (ipoib_cm_admit()); after that they count as failing.
 */
#define IPOIB_CM_CROSS_RETRY	(2 * HZ)
/* ndo_stop: how long channels may take to drain before they are leaked */
#define IPOIB_CM_DRAIN_LIMIT	(30 * HZ)

static const char *const ipoib_cm_state_names[] = {
	[IPOIB_CM_CONNECTING]	= "connecting",
	[IPOIB_CM_ACCEPTING]	= "accepting",
	[IPOIB_CM_LIVE]		= "live",
	[IPOIB_CM_DRAINING]	= "draining",
	[IPOIB_CM_DEAD]		= "dead",
};

static const char *const ipoib_cm_event_names[] = {
	[IPOIB_CM_EV_REP]	= "REP",
	[IPOIB_CM_EV_RTU]	= "RTU",
	[IPOIB_CM_EV_REJ]	= "REJ or time-out",
	[IPOIB_CM_EV_FAIL]	= "failure",
	[IPOIB_CM_EV_DREQ]	= "DREQ",
	[IPOIB_CM_EV_CLOSE]	= "close",
};

void ipoib_cm_peer_addr(u8 *buf, u32 qpn, const union ib_gid *gid)
{
	struct ipoib_lladdr ll = { .qpn = qpn };

	memcpy(ll.gid, gid->raw, sizeof(ll.gid));
	ipoib_lladdr_pack(buf, &ll);
}

/* --- peers ---------------------------------------------------------------- */

static struct hlist_head *ipoib_cm_bucket(struct ipoib_dev *priv,
					  const u8 *addr)
{
	return &priv->cm.peers[hash_min(jhash(addr, IPOIB_ADDR_LEN, 0),
					HASH_BITS(priv->cm.peers))];
}

/*
 * The peer at @addr (flags octet zero), made if need be (cm.lock held).
 * The reference is the table's: take one of your own to keep it.
 */
struct ipoib_cm_peer *ipoib_cm_peer_get(struct ipoib_dev *priv,
					const u8 *addr, gfp_t gfp)
{
	struct hlist_head *head = ipoib_cm_bucket(priv, addr);
	struct ipoib_cm_peer *peer;

	lockdep_assert_held(&priv->cm.lock);
	hlist_for_each_entry(peer, head, node)
		if (!memcmp(peer->addr, addr, IPOIB_ADDR_LEN))
			return peer;
	if (priv->cm.npeers >= IPOIB_CM_MAX_PEERS)
		return NULL;
	peer = kzalloc(sizeof(*peer), gfp);
	if (!peer)
		return NULL;
	kref_init(&peer->ref);
	peer->priv = priv;
	memcpy(peer->addr, addr, IPOIB_ADDR_LEN);
	skb_queue_head_init(&peer->queue);
	peer->last_used = jiffies;
	peer->retry_at = jiffies;
	hlist_add_head_rcu(&peer->node, head);
	priv->cm.npeers++;
	return peer;
}

static void ipoib_cm_peer_free(struct kref *ref)
{
	struct ipoib_cm_peer *peer = container_of(ref, struct ipoib_cm_peer,
						  ref);

	skb_queue_purge(&peer->queue);
	kfree_rcu(peer, rcu);
}

static void ipoib_cm_peer_put(struct ipoib_cm_peer *peer)
{
	kref_put(&peer->ref, ipoib_cm_peer_free);
}

/* Out of the table (cm.lock held); channels keep it alive meanwhile. */
static void ipoib_cm_peer_unhash(struct ipoib_cm_peer *peer)
{
	struct ipoib_dev *priv = peer->priv;

	lockdep_assert_held(&priv->cm.lock);
	if (hlist_unhashed(&peer->node))
		return;
	hlist_del_init_rcu(&peer->node);
	priv->cm.npeers--;
	DEV_STATS_ADD(priv->dev, tx_dropped, skb_queue_len(&peer->queue));
	__skb_queue_purge(&peer->queue);
	ipoib_cm_peer_put(peer);
}

/* --- channels ------------------------------------------------------------- */

/*
 * The one writer of chan->state (cm.lock held: transmit reads it under
 * that lock), which traces the change; @old is IPOIB_TRACE_NONE for a
 * new channel. Use ipoib_cm_set_state() and ipoib_cm_init_state().
 */
static void __ipoib_cm_set_state(struct ipoib_cm_chan *chan, unsigned int old,
				 enum ipoib_cm_state new)
{
	lockdep_assert_held(&chan->priv->cm.lock);
	chan->state = new;
	trace_ipoib_cm_state(chan, old, new);
}

static void ipoib_cm_set_state(struct ipoib_cm_chan *chan,
			       enum ipoib_cm_state new)
{
	__ipoib_cm_set_state(chan, chan->state, new);
}

static void ipoib_cm_init_state(struct ipoib_cm_chan *chan,
				enum ipoib_cm_state first)
{
	__ipoib_cm_set_state(chan, IPOIB_TRACE_NONE, first);
}

static void ipoib_cm_last_wqe_late(struct work_struct *work);
static void ipoib_cm_setup_late(struct work_struct *work);

/*
 * A new channel of @peer (cm.lock held; CONNECTING if @active, else
 * ACCEPTING), held open and by its set-up work, which the caller queues.
 * @sends: it may carry our traffic, so it reserves a full send queue of
 * send CQ entries; when they are all taken the channel is refused, so
 * the send CQ cannot overrun.
 */
struct ipoib_cm_chan *ipoib_cm_chan_new(struct ipoib_cm_peer *peer,
					bool active, bool sends, gfp_t gfp)
{
	struct ipoib_dev *priv = peer->priv;
	unsigned int room = sends ? priv->sendq_size : 0;
	struct ipoib_cm_chan *chan;

	lockdep_assert_held(&priv->cm.lock);
	if (!test_bit(IPOIB_FLAG_CM_UP, &priv->flags))
		return NULL;
	if (atomic_sub_return(room, &priv->cm.send_room) < 0) {
		atomic_add(room, &priv->cm.send_room);
		atomic_long_inc(&priv->counters.cm_no_room);
		ipoib_warn_rl(priv, "CM: %u connections that send, refusing another\n",
			      priv->cm.max_conns);
		return NULL;
	}
	chan = kzalloc(sizeof(*chan), gfp);
	if (!chan) {
		atomic_add(room, &priv->cm.send_room);
		return NULL;
	}
	chan->priv = priv;
	chan->peer = peer;
	kref_get(&peer->ref);
	chan->active = active;
	ipoib_cm_init_state(chan, active ? IPOIB_CM_CONNECTING :
			    IPOIB_CM_ACCEPTING);
	chan->send_room = room;
	chan->last_used = jiffies;
	chan->last_rx = jiffies;
	INIT_LIST_HEAD(&chan->node);
	INIT_HLIST_NODE(&chan->qp_node);
	INIT_WORK(&chan->setup_work, active ? ipoib_cm_connect_work :
		  ipoib_cm_accept_work);
	INIT_WORK(&chan->event_work, ipoib_cm_event_work);
	INIT_DELAYED_WORK(&chan->last_wqe_work, ipoib_cm_last_wqe_late);
	INIT_DELAYED_WORK(&chan->setup_limit_work, ipoib_cm_setup_late);
	chan->holding = BIT(IPOIB_CM_HOLD_OPEN) | BIT(IPOIB_CM_HOLD_SETUP);
	atomic_set(&chan->holds, 2);
	atomic_inc(&priv->cm.nchans);
	return chan;
}

/* Counted before the bit shows: NAPI drops a hold on the bit alone. */
void ipoib_cm_hold(struct ipoib_cm_chan *chan, enum ipoib_cm_hold what)
{
	atomic_inc(&chan->holds);
	if (test_and_set_bit(what, &chan->holding))
		atomic_dec(&chan->holds);
}

/* Any context. Dropping the last hold queues the channel's release. */
void ipoib_cm_unhold(struct ipoib_cm_chan *chan, enum ipoib_cm_hold what)
{
	struct ipoib_dev *priv = chan->priv;
	unsigned long flags;

	if (!test_and_clear_bit(what, &chan->holding) ||
	    !atomic_dec_and_test(&chan->holds))
		return;
	spin_lock_irqsave(&priv->cm.release_lock, flags);
	list_add_tail(&chan->release_node, &priv->cm.release_list);
	spin_unlock_irqrestore(&priv->cm.release_lock, flags);
	queue_work(priv->cm.wq, &priv->cm.release_work);
}

/* NAPI or the QP event handler: what needs cm.mutex goes to event_work. */
void ipoib_cm_async(struct ipoib_cm_chan *chan, enum ipoib_cm_async what)
{
	set_bit(what, &chan->events);
	queue_work(chan->priv->cm.wq, &chan->event_work);
}

static void ipoib_cm_last_wqe_late(struct work_struct *work)
{
	struct ipoib_cm_chan *chan = container_of(to_delayed_work(work),
						  struct ipoib_cm_chan,
						  last_wqe_work);

	if (!test_bit(IPOIB_CM_HOLD_LAST_WQE, &chan->holding))
		return;
	/* its receives were the SRQ's: nothing of the channel's is written */
	atomic_long_inc(&chan->priv->counters.cm_no_last_wqe);
	netdev_info_once(chan->priv->dev,
			 "CM: the HCA does not report LAST_WQE_REACHED; SRQ QPs are destroyed %u ms after their error transition\n",
			 jiffies_to_msecs(IPOIB_CM_LAST_WQE_WAIT));
	ipoib_cm_unhold(chan, IPOIB_CM_HOLD_LAST_WQE);
}

static void ipoib_cm_setup_late(struct work_struct *work)
{
	struct ipoib_cm_chan *chan = container_of(to_delayed_work(work),
						  struct ipoib_cm_chan,
						  setup_limit_work);
	struct ipoib_dev *priv = chan->priv;

	mutex_lock(&priv->cm.mutex);
	if (chan->state == IPOIB_CM_CONNECTING ||
	    chan->state == IPOIB_CM_ACCEPTING) {
		atomic_long_inc(&priv->counters.cm_setup_expired);
		ipoib_dbg(priv, 1, "CM %pI6c qpn 0x%06x: %s channel not live after %u ms\n",
			  chan->peer->addr + 4,
			  ipoib_cm_addr_qpn(chan->peer->addr),
			  chan->active ? "our" : "the peer's",
			  jiffies_to_msecs(IPOIB_CM_SETUP_LIMIT));
		ipoib_cm_step(chan, IPOIB_CM_EV_FAIL, NULL);
	}
	mutex_unlock(&priv->cm.mutex);
}

/*
 * Start draining a channel whose set-up work is done (cm.mutex held): its
 * QP goes to the error state, which completes every posted work request
 * with a flush error; NAPI drops the TX and RX holds when the last one is
 * reaped, the QP event handler the LAST_WQE hold (SRQ).
 */
static void ipoib_cm_drain(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int ret;

	lockdep_assert_held(&priv->cm.mutex);
	if (!chan->qp)
		return;
	ipoib_cm_hold(chan, IPOIB_CM_HOLD_TX);
	if (chan->rx) {
		ipoib_cm_hold(chan, IPOIB_CM_HOLD_RX);
		ipoib_cm_rx_chan_drain(chan);
	} else if (priv->cm.use_srq) {
		ipoib_cm_hold(chan, IPOIB_CM_HOLD_LAST_WQE);
		/* a QP that failed by itself may have reported it already */
		if (test_bit(IPOIB_CM_ASYNC_LAST_WQE, &chan->events))
			ipoib_cm_unhold(chan, IPOIB_CM_HOLD_LAST_WQE);
		else
			queue_delayed_work(priv->cm.wq, &chan->last_wqe_work,
					   IPOIB_CM_LAST_WQE_WAIT);
	}
	ret = ib_modify_qp(chan->qp, &attr, IB_QP_STATE);
	if (ret) {
		/* nothing will flush it: better leaked than freed under DMA */
		netdev_err(priv->dev, "CM: QP 0x%06x cannot enter the error state (%d): leaking it\n",
			   chan->qp->qp_num, ret);
		return;
	}
	ipoib_cm_tx_drain(chan);
}

/* A LIVE channel of @peer other than @gone that may carry our traffic */
static struct ipoib_cm_chan *ipoib_cm_successor(struct ipoib_cm_peer *peer,
						struct ipoib_cm_chan *gone)
{
	struct ipoib_cm_chan *chan;

	lockdep_assert_held(&peer->priv->cm.mutex);
	list_for_each_entry(chan, &peer->priv->cm.chans, node)
		if (chan->peer == peer && chan != gone && !chan->rx_only &&
		    chan->state == IPOIB_CM_LIVE)
			return chan;
	return NULL;
}

/*
 * s3.3: our address against @peer's (flags zeroed, first octet first),
 * as memcmp(); the smaller one accepts a crossing REQ.
 */
int ipoib_cm_addr_order(const struct ipoib_cm_peer *peer)
{
	struct ipoib_dev *priv = peer->priv;
	u8 local[IPOIB_ADDR_LEN];
	union ib_gid gid;

	ipoib_local_gid(priv, &gid);
	ipoib_cm_peer_addr(local, priv->qp->qp_num, &gid);
	return ipoib_lladdr_cmp(local, peer->addr);
}

/*
 * The peer's channel whose REQ crossed @ours (s3.3), still waiting for
 * its RTU: the one that will carry our traffic now that the peer rejected
 * our REQ. Either it came while ours was connecting (we have the smaller
 * address, so we took it), or we had accepted it before ours began and
 * ours overtook our REP (crossed is unset: the peer, still connecting,
 * rejected ours). None if more than one REQ claiming that peer qualifies:
 * one is forged, and which one cannot be told. Asked only where we have
 * the smaller address: only then may the peer reject ours for a crossing
 * (any other Consumer Reject hands nothing to a REQ that claims its
 * identity).
 */
static struct ipoib_cm_chan *ipoib_cm_crossing_winner(struct ipoib_cm_peer *peer,
						      struct ipoib_cm_chan *ours)
{
	struct ipoib_dev *priv = peer->priv;
	struct ipoib_cm_chan *chan, *found = NULL;

	lockdep_assert_held(&priv->cm.mutex);
	list_for_each_entry(chan, &priv->cm.chans, node) {
		if (chan->peer != peer || chan->rx_only ||
		    (chan->crossed && chan->crossed != ours) ||
		    chan->state != IPOIB_CM_ACCEPTING)
			continue;
		if (found)
			return NULL;
		found = chan;
	}
	return found;
}

/*
 * -> DRAINING. The channel leaves its peer (a live channel the peer
 * opened while this one carried its traffic takes over: only a live
 * connection is never taken over); what waited for it goes over UD.
 * Returns true if the caller, a CM handler of chan->cm_id, must have
 * ib_cm destroy that id.
 */
static bool ipoib_cm_go_drain(struct ipoib_cm_chan *chan, bool failed,
			      const struct ib_cm_event *cm_ev)
{
	struct ipoib_dev *priv = chan->priv;
	struct ipoib_cm_peer *peer = chan->peer;
	struct ipoib_cm_chan *next = NULL, *other;
	struct sk_buff_head list;
	bool destroy_id = false;

	__skb_queue_head_init(&list);
	/* pending at most (not sync: it waits for cm.mutex when running) */
	cancel_delayed_work(&chan->setup_limit_work);
	/* its memory may be a later channel's: no stale match */
	list_for_each_entry(other, &priv->cm.chans, node)
		if (other->crossed == chan)
			other->crossed = NULL;
	if (failed) {
		atomic_long_inc(&priv->counters.cm_failures);
		if (chan->active)
			peer->backoff = peer->backoff ?
				min_t(unsigned long, peer->backoff * 2,
				      IPOIB_CM_BACKOFF_MAX) : HZ;
	}
	if (rcu_access_pointer(peer->tx) == chan)
		next = ipoib_cm_successor(peer, chan);
	spin_lock_bh(&priv->cm.lock);
	/* transmit reads retry_at under cm.lock */
	if (failed && chan->active)
		peer->retry_at = jiffies + peer->backoff;
	ipoib_cm_set_state(chan, IPOIB_CM_DRAINING);
	if (rcu_access_pointer(peer->tx) == chan) {
		rcu_assign_pointer(peer->tx, next);
		if (!next)
			skb_queue_splice_init(&peer->queue, &list);
	}
	spin_unlock_bh(&priv->cm.lock);
	if (next)
		ipoib_cm_send_queued(next);
	if (cm_ev && chan->cm_id) {
		chan->cm_id = NULL;
		destroy_id = true;
	}
	if (!test_bit(IPOIB_CM_HOLD_SETUP, &chan->holding))
		ipoib_cm_drain(chan);
	ipoib_cm_unhold(chan, IPOIB_CM_HOLD_OPEN);
	ipoib_cm_flush_to_ud(priv, &list);
	return destroy_id;
}

/*
 * -> LIVE. Ours carries our traffic if it is still the peer's; the
 * peer's (bidirectional) does if the peer has no live one: a REQ that
 * claims to come from a peer we are connected to never takes its traffic
 * away (anyone on the partition can claim any GID and QPN).
 */
static void ipoib_cm_go_live(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;
	struct ipoib_cm_peer *peer = chan->peer;
	struct ipoib_cm_chan *cur;
	bool ours;

	atomic_long_inc(&priv->counters.cm_connections);
	cancel_delayed_work(&chan->setup_limit_work);
	spin_lock_bh(&priv->cm.lock);
	/* a peer that just failed may still take nothing: see xmit_live */
	chan->probation = peer->backoff != 0;
	ipoib_cm_set_state(chan, IPOIB_CM_LIVE);
	cur = rcu_dereference_protected(peer->tx,
					lockdep_is_held(&priv->cm.lock));
	if (!chan->rx_only && cur != chan &&
	    (!cur || cur->state != IPOIB_CM_LIVE))
		rcu_assign_pointer(peer->tx, chan);
	ours = rcu_access_pointer(peer->tx) == chan;
	spin_unlock_bh(&priv->cm.lock);
	ipoib_dbg(priv, 1, "CM %pI6c qpn 0x%06x: %s %s connection live, MTU %u%s\n",
		  peer->addr + 4, ipoib_cm_addr_qpn(peer->addr),
		  chan->active ? "our" : "the peer's", chan->uc ? "UC" : "RC",
		  chan->mtu, ours ? ", carrying our traffic" : "");
	if (ours) {
		peer->backoff = 0;
		peer->cross_since = 0;
		/* the neighbour sweep's record is of the channels before */
		peer->unnamed_since = 0;
		peer->moved = false;
		ipoib_cm_send_queued(chan);
	}
}

/*
 * The one transition function (cm.mutex held), from CM handlers, the
 * set-up works, event_work, the idle collector and ndo_stop. Returns true
 * if the caller, a CM handler of chan->cm_id, must return non-zero so
 * that ib_cm destroys that id.
 */
bool ipoib_cm_step(struct ipoib_cm_chan *chan, enum ipoib_cm_event ev,
		   const struct ib_cm_event *cm_ev)
{
	struct ipoib_dev *priv = chan->priv;
	struct ipoib_cm_peer *peer = chan->peer;

	lockdep_assert_held(&priv->cm.mutex);
	ipoib_dbg(priv, 1, "CM %pI6c qpn 0x%06x: %s, %s channel %s\n",
		  peer->addr + 4, ipoib_cm_addr_qpn(peer->addr),
		  ipoib_cm_event_names[ev], chan->active ? "our" : "the peer's",
		  ipoib_cm_state_names[chan->state]);
	if (cm_ev && cm_ev->event == IB_CM_REJ_RECEIVED)
		ipoib_dbg(priv, 1, "CM %pI6c qpn 0x%06x: rejected: %s\n",
			  peer->addr + 4, ipoib_cm_addr_qpn(peer->addr),
			  ibcm_reject_msg(cm_ev->param.rej_rcvd.reason));
	if (chan->state >= IPOIB_CM_DRAINING)
		return false;
	switch (ev) {
	case IPOIB_CM_EV_REP:
		if (chan->state != IPOIB_CM_CONNECTING)
			return false;
		/* s3.3: it lost a crossing, yet the peer accepted it */
		if (rcu_access_pointer(peer->tx) != chan) {
			ipoib_cm_reject(priv, chan->cm_id,
					IB_CM_REJ_CONSUMER_DEFINED);
			return ipoib_cm_go_drain(chan, false, cm_ev);
		}
		if (ipoib_cm_rep_received(chan, cm_ev))
			return ipoib_cm_go_drain(chan, true, cm_ev);
		ipoib_cm_go_live(chan);
		return false;
	case IPOIB_CM_EV_RTU:
		if (chan->state != IPOIB_CM_ACCEPTING ||
		    test_bit(IPOIB_CM_HOLD_SETUP, &chan->holding))
			return false;
		if (ipoib_cm_modify(chan, IB_QPS_RTS, 0)) {
			ipoib_warn_rl(priv, "CM: QP to RTS failed\n");
			return ipoib_cm_go_drain(chan, true, cm_ev);
		}
		ipoib_cm_go_live(chan);
		return false;
	case IPOIB_CM_EV_REJ:
		/* s3.3: it lost a crossing, as it should */
		if (chan->state == IPOIB_CM_CONNECTING &&
		    rcu_access_pointer(peer->tx) != chan)
			return ipoib_cm_go_drain(chan, false, cm_ev);
		/*
		 * s3.3, the other order: the peer's REJ of ours (Consumer
		 * Reject) came before the RTU of the REQ of its that crossed
		 * ours and that we accepted. Nothing failed: what waits for a
		 * channel (too big for UD) waits for that one, and nothing is
		 * sent on it until it is live.
		 */
		if (chan->state == IPOIB_CM_CONNECTING && cm_ev &&
		    cm_ev->event == IB_CM_REJ_RECEIVED &&
		    cm_ev->param.rej_rcvd.reason == IB_CM_REJ_CONSUMER_DEFINED &&
		    ipoib_cm_addr_order(peer) < 0) {
			struct ipoib_cm_chan *next;

			next = ipoib_cm_crossing_winner(peer, chan);
			/*
			 * None: the peer's REQ is still on its way, or was
			 * lost, and the peer lives. What waits keeps
			 * waiting, and the next packet tries again at once
			 * (for IPOIB_CM_CROSS_RETRY: a peer may reject for
			 * other causes); a big packet meeting a backoff
			 * would be answered "too big" and lower the route's
			 * MTU for minutes.
			 */
			if (!next && !peer->cross_since)
				peer->cross_since = jiffies ?: 1;
			if (next || time_before(jiffies, peer->cross_since +
						IPOIB_CM_CROSS_RETRY)) {
				spin_lock_bh(&priv->cm.lock);
				rcu_assign_pointer(peer->tx, next);
				if (!next)
					peer->retry_at = jiffies;
				spin_unlock_bh(&priv->cm.lock);
				return ipoib_cm_go_drain(chan, false, cm_ev);
			}
		}
		/*
		 * No listener on the service ID it asked for: the other one
		 * goes next, at once after the Linux one, with the backoff
		 * after the RFC one (the peer may just be down).
		 */
		if (chan->state == IPOIB_CM_CONNECTING && cm_ev &&
		    cm_ev->event == IB_CM_REJ_RECEIVED &&
		    cm_ev->param.rej_rcvd.reason == IB_CM_REJ_INVALID_SERVICE_ID) {
			peer->sid_rfc = !chan->sid_rfc;
			if (peer->sid_rfc) {
				spin_lock_bh(&priv->cm.lock);
				peer->retry_at = jiffies;
				spin_unlock_bh(&priv->cm.lock);
				return ipoib_cm_go_drain(chan, false, cm_ev);
			}
		}
		return ipoib_cm_go_drain(chan, true, cm_ev);
	case IPOIB_CM_EV_FAIL:
		return ipoib_cm_go_drain(chan, true, cm_ev);
	case IPOIB_CM_EV_DREQ:
	case IPOIB_CM_EV_CLOSE:
		return ipoib_cm_go_drain(chan, false, cm_ev);
	}
	return false;
}

/*
 * The end of a channel's set-up work (cm.mutex held). If it still
 * connects or accepts, its REQ or REP has gone out and the wait for the
 * peer's answer begins.
 */
void ipoib_cm_setup_done(struct ipoib_cm_chan *chan)
{
	lockdep_assert_held(&chan->priv->cm.mutex);
	if (chan->state == IPOIB_CM_DRAINING)
		ipoib_cm_drain(chan);
	if (chan->state == IPOIB_CM_CONNECTING ||
	    chan->state == IPOIB_CM_ACCEPTING) {
		chan->sent_at = jiffies;
		queue_delayed_work(chan->priv->cm.wq, &chan->setup_limit_work,
				   IPOIB_CM_SETUP_LIMIT);
	}
	ipoib_cm_unhold(chan, IPOIB_CM_HOLD_SETUP);
}

/* --- release ------------------------------------------------------------- */

/* A drained channel: its cm_id and QP go; nothing can complete on it. */
static void ipoib_cm_release_one(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;
	struct ib_cm_id *id;

	mutex_lock(&priv->cm.mutex);
	id = chan->cm_id;
	chan->cm_id = NULL;
	list_del_init(&chan->node);
	mutex_unlock(&priv->cm.mutex);
	/*
	 * A REQ or REP of the peer's not answered yet: our REJ carries our
	 * UD QPN (RFC 4755 s3.2). Anything else the destroy ends itself:
	 * it cancels a REQ or REP of ours still being retried (a REJ of
	 * ours would leave that MAD to run out its retries, with destroy
	 * waiting for it), and sends the DREQ of an established one.
	 */
	if (id && (id->state == IB_CM_REQ_RCVD ||
		   id->state == IB_CM_MRA_REQ_SENT ||
		   id->state == IB_CM_REP_RCVD ||
		   id->state == IB_CM_MRA_REP_SENT))
		ipoib_cm_reject(priv, id, IB_CM_REJ_CONSUMER_DEFINED);
	if (id)
		ib_destroy_cm_id(id);
	spin_lock_bh(&priv->cm.lock);
	ipoib_cm_set_state(chan, IPOIB_CM_DEAD);
	if (!hlist_unhashed(&chan->qp_node))
		hlist_del_init_rcu(&chan->qp_node);
	spin_unlock_bh(&priv->cm.lock);
	if (chan->qp) {
		ib_destroy_qp(chan->qp);
		WRITE_ONCE(chan->qp, NULL);
	}
	/* same ordered workqueue: pending at most, never running */
	cancel_work_sync(&chan->event_work);
	cancel_delayed_work_sync(&chan->last_wqe_work);
	cancel_delayed_work_sync(&chan->setup_limit_work);
	if (chan->rx)
		ipoib_cm_rx_chan_unpublish(chan);
}

static void ipoib_cm_chan_free(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;

	if (chan->rx)
		ipoib_cm_rx_chan_free(chan);
	kvfree(chan->tx_ring);
	if (chan->sgid_attr)
		rdma_put_gid_attr(chan->sgid_attr);
	atomic_add(chan->send_room, &priv->cm.send_room);
	ipoib_cm_peer_put(chan->peer);
	kfree(chan);
	if (atomic_dec_and_test(&priv->cm.nchans))
		wake_up_var(&priv->cm.nchans);
}

/* Parked channels to the release work (the port is back, or we stop). */
static void ipoib_cm_unpark(struct ipoib_dev *priv)
{
	spin_lock_irq(&priv->cm.release_lock);
	list_splice_tail_init(&priv->cm.parked, &priv->cm.release_list);
	spin_unlock_irq(&priv->cm.release_lock);
	queue_work(priv->cm.wq, &priv->cm.release_work);
}

/*
 * Whether a drained channel's cm_id must wait (be parked) before it is
 * destroyed: destroying it sends a MAD (a DREQ, a REJ), and soft HCAs
 * (6.1's and 6.12's soft-RoCE at least) take the port's QP1 to the error
 * state for good when one cannot be sent: no CM message is received
 * again, and no connection made, until the driver is reloaded. Hardware
 * only loses such a MAD. They wait for the carrier (ipoib_cm_link_up()):
 * sent earlier, while the underlay's address is still tentative, they
 * leave the peer's neighbour entry unresolved for a second. Not once GID
 * 0 is gone: its old entry is held by the ids themselves, so it never
 * comes back while they wait, and their MADs cannot go anyway
 * (ipoib_cm_gid_gone()).
 */
static bool ipoib_cm_must_park(struct ipoib_dev *priv)
{
	union ib_gid gid;

	return ib_uses_virt_dma(priv->ca) &&
	       test_bit(IPOIB_FLAG_PORT_DOWN, &priv->flags) &&
	       !rdma_query_gid(priv->ca, priv->port, 0, &gid);
}

/*
 * Every drained channel, one grace period for the lot (NAPI, xmit); the
 * parked ones wait (ipoib_cm_must_park()) until ipoib_cm_link_up(),
 * ipoib_cm_gid_gone() or ipoib_cm_close_all() sends them on. The flags and
 * GID 0 are looked at under release_lock; what ends parking (PORT_DOWN and
 * CM_UP cleared, GID 0 gone) comes before its unpark takes the lock.
 */
static void ipoib_cm_release_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      cm.release_work);
	struct ipoib_cm_chan *chan, *tmp;
	LIST_HEAD(list);

	spin_lock_irq(&priv->cm.release_lock);
	list_splice_init(&priv->cm.release_list, &list);
	if (!list_empty(&list) && test_bit(IPOIB_FLAG_CM_UP, &priv->flags) &&
	    ipoib_cm_must_park(priv))
		list_for_each_entry_safe(chan, tmp, &list, release_node)
			if (READ_ONCE(chan->cm_id))
				list_move_tail(&chan->release_node,
					       &priv->cm.parked);
	spin_unlock_irq(&priv->cm.release_lock);
	if (list_empty(&list))
		return;
	list_for_each_entry(chan, &list, release_node)
		ipoib_cm_release_one(chan);
	synchronize_net();
	list_for_each_entry_safe(chan, tmp, &list, release_node)
		ipoib_cm_chan_free(chan);
}

/*
 * NAPI: a message came in on @qp (wc->qp). It may be a QP destroyed
 * since, its completion still queued: only its value is compared, never
 * dereferenced, and only the channel's receive time is kept.
 */
void ipoib_cm_rx_seen(struct ipoib_dev *priv, const struct ib_qp *qp)
{
	unsigned long now = jiffies;
	struct ipoib_cm_chan *chan;

	rcu_read_lock();
	hash_for_each_possible_rcu(priv->cm.by_qp, chan, qp_node,
				   (unsigned long)qp) {
		if (READ_ONCE(chan->qp) != qp)
			continue;
		/* one store per tick: the line stays shared between CPUs */
		if (READ_ONCE(chan->last_rx) != now)
			WRITE_ONCE(chan->last_rx, now);
		/* we told the peer we would not take data on ours */
		if (unlikely(chan->active && !ipoib_cm_bidir))
			atomic_long_inc(&priv->counters.cm_rx_misdirected);
		break;
	}
	rcu_read_unlock();
}

/* --- idle collection ------------------------------------------------------ */

/* jiffies of the last send or receive on a channel */
static unsigned long ipoib_cm_last_active(const struct ipoib_cm_chan *chan)
{
	unsigned long last = READ_ONCE(chan->last_used);

	if (time_after(READ_ONCE(chan->last_rx), last))
		last = READ_ONCE(chan->last_rx);
	return last;
}

/*
 * Idle channels are closed (RFC 4755 s3.4 leaves the policy to us):
 * nothing sent or received on it for IPOIB_CM_IDLE; then idle peers go.
 */
static void ipoib_cm_gc_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      cm.gc_work.work);
	struct ipoib_cm_chan *chan, *tmp;
	struct ipoib_cm_peer *peer;
	struct hlist_node *n;
	unsigned long last;
	unsigned int bkt;

	mutex_lock(&priv->cm.mutex);
	list_for_each_entry_safe(chan, tmp, &priv->cm.chans, node) {
		last = ipoib_cm_last_active(chan);
		if (chan->state == IPOIB_CM_LIVE &&
		    time_after(jiffies, last + IPOIB_CM_IDLE))
			ipoib_cm_step(chan, IPOIB_CM_EV_CLOSE, NULL);
	}
	mutex_unlock(&priv->cm.mutex);
	spin_lock_bh(&priv->cm.lock);
	hash_for_each_safe(priv->cm.peers, bkt, n, peer, node)
		/* the table's reference only: no channel points at it */
		if (kref_read(&peer->ref) == 1 &&
		    time_after(jiffies, READ_ONCE(peer->last_used) +
			       IPOIB_CM_IDLE) &&
		    time_after(jiffies, peer->retry_at))
			ipoib_cm_peer_unhash(peer);
	spin_unlock_bh(&priv->cm.lock);
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
	       priv->ca->attrs.max_srq_sge >= IPOIB_CM_RX_PAGES &&
	       priv->ca->attrs.max_srq_wr >= priv->recvq_size;
}

/* An SRQ, or a receive queue per connection (at least one allowed). */
bool ipoib_cm_capable(struct ipoib_dev *priv)
{
	return (ipoib_cm_srq && ipoib_cm_srq_capable(priv)) ||
	       (ipoib_max_nonsrq_conn_qp &&
		priv->ca->attrs.max_recv_sge >= IPOIB_CM_RX_PAGES &&
		priv->ca->attrs.max_qp_wr >= priv->recvq_size);
}

/*
 * Every posted receive must fit in the receive CQ: the SRQ's ring, or the
 * rings of as many channels as the CQ the HCA allows can take.
 */
static int ipoib_cm_create_recv_cq(struct ipoib_dev *priv)
{
	struct ib_cq_init_attr attr = { .cqe = priv->recvq_size };

	if (!priv->cm.use_srq) {
		attr.cqe = min_t(u64, (u64)priv->recvq_size *
				 ipoib_max_nonsrq_conn_qp,
				 priv->ca->attrs.max_cqe);
		priv->cm.nonsrq_max = attr.cqe / priv->recvq_size;
		if (!priv->cm.nonsrq_max)
			return -EINVAL;
		priv->cm.nonsrq = kcalloc(priv->cm.nonsrq_max,
					  sizeof(*priv->cm.nonsrq), GFP_KERNEL);
		if (!priv->cm.nonsrq)
			return -ENOMEM;
	}
	priv->cm.recv_cq = ib_create_cq(priv->ca, ipoib_cm_cq_event, NULL,
					priv, &attr);
	if (IS_ERR(priv->cm.recv_cq)) {
		kfree(priv->cm.nonsrq);
		priv->cm.nonsrq = NULL;
		return PTR_ERR(priv->cm.recv_cq);
	}
	if (!priv->cm.use_srq)
		ibdev_info(priv->ca, "port %u: connected mode without a shared receive queue: at most %u connections, %u receive buffers each\n",
			   priv->port, priv->cm.nonsrq_max, priv->recvq_size);
	return 0;
}

/* ndo_init: CQs; the SRQ and listening come with ndo_open. */
int ipoib_cm_init(struct ipoib_dev *priv)
{
	struct ib_cq_init_attr attr = {};

	mutex_init(&priv->cm.mutex);
	spin_lock_init(&priv->cm.lock);
	spin_lock_init(&priv->cm.release_lock);
	hash_init(priv->cm.peers);
	hash_init(priv->cm.by_qp);
	INIT_LIST_HEAD(&priv->cm.chans);
	INIT_LIST_HEAD(&priv->cm.release_list);
	INIT_LIST_HEAD(&priv->cm.parked);
	INIT_WORK(&priv->cm.release_work, ipoib_cm_release_work);
	INIT_DELAYED_WORK(&priv->cm.gc_work, ipoib_cm_gc_work);
	INIT_DELAYED_WORK(&priv->cm.stall_work, ipoib_cm_stall_work);
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
	/* what channels that send may reserve (ipoib_cm_chan_new()) */
	priv->cm.max_conns = attr.cqe / priv->sendq_size;
	atomic_set(&priv->cm.send_room, priv->cm.max_conns * priv->sendq_size);
	/* a send gathers the skb's head and fragments where it can */
	priv->cm.tx_sge = clamp_t(u32, priv->ca->attrs.max_send_sge, 1,
				  IPOIB_CM_TX_SGE);
	priv->cm.send_cq = ib_create_cq(priv->ca, ipoib_cm_cq_event, NULL,
					priv, &attr);
	if (IS_ERR(priv->cm.send_cq))
		goto fail;
	if (ipoib_cm_create_recv_cq(priv))
		goto fail_send_cq;
	return 0;
fail_send_cq:
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

static bool ipoib_cm_close_all(struct ipoib_dev *priv);

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

static void ipoib_cm_unlisten(struct ipoib_dev *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(priv->cm.listen); i++) {
		if (priv->cm.listen[i])
			ib_destroy_cm_id(priv->cm.listen[i]);
		priv->cm.listen[i] = NULL;
	}
}

/*
 * ndo_open: the SRQ and its buffers, then listen on both service IDs
 * (RFC 4755 s3.5 and the Linux/OFED form), so every deployed peer can
 * connect to us, whatever mode we send in.
 */
int ipoib_cm_open(struct ipoib_dev *priv)
{
	u32 qpn = priv->qp->qp_num;
	int ret;

	if (!ipoib_cm_available(priv))
		return 0;
	ret = ipoib_cm_rx_open(priv);
	if (ret)
		goto fail;
	set_bit(IPOIB_FLAG_CM_UP, &priv->flags);
	ret = ipoib_cm_listen(priv, 0, ipoib_sid_linux(qpn));
	if (!ret)
		ret = ipoib_cm_listen(priv, 1, ipoib_sid_rfc(qpn));
	if (ret)
		goto fail_listen;
	ipoib_arm_cq(priv, priv->cm.recv_cq);
	ipoib_arm_cq(priv, priv->cm.send_cq);
	queue_delayed_work(priv->cm.wq, &priv->cm.gc_work, IPOIB_CM_IDLE / 4);
	return 0;

fail_listen:
	clear_bit(IPOIB_FLAG_CM_UP, &priv->flags);
	ipoib_cm_unlisten(priv);
	/* REQs accepted meanwhile */
	flush_workqueue(priv->cm.wq);
	if (ipoib_cm_close_all(priv)) {
		napi_disable(&priv->napi);
		ipoib_cm_rx_close(priv);
		napi_enable(&priv->napi);
	}
fail:
	netdev_err(priv->dev, "CM: cannot set up the receive side: %d\n", ret);
	return ret;
}

/*
 * ndo_stop: close every channel and wait until each has drained. False
 * if some did not: their QPs may still use the SRQ and its buffers.
 */
static bool ipoib_cm_close_all(struct ipoib_dev *priv)
{
	bool drained = true;

	struct ipoib_cm_chan *chan, *tmp;
	struct ipoib_cm_peer *peer;
	struct hlist_node *n;
	unsigned int bkt;

	mutex_lock(&priv->cm.mutex);
	list_for_each_entry_safe(chan, tmp, &priv->cm.chans, node)
		ipoib_cm_step(chan, IPOIB_CM_EV_CLOSE, NULL);
	mutex_unlock(&priv->cm.mutex);
	/* CM_UP is clear: nothing is parked again */
	ipoib_cm_unpark(priv);
	if (!wait_var_event_timeout(&priv->cm.nchans,
				    !atomic_read(&priv->cm.nchans),
				    IPOIB_CM_DRAIN_LIMIT)) {
		netdev_err(priv->dev, "CM: %d connections not drained in %u s: leaking them and the SRQ\n",
			   atomic_read(&priv->cm.nchans),
			   IPOIB_CM_DRAIN_LIMIT / HZ);
		drained = false;
	}
	/* the release work's last steps */
	flush_workqueue(priv->cm.wq);
	spin_lock_bh(&priv->cm.lock);
	hash_for_each_safe(priv->cm.peers, bkt, n, peer, node)
		ipoib_cm_peer_unhash(peer);
	spin_unlock_bh(&priv->cm.lock);
	return drained;
}

/*
 * ndo_stop, before the UD side (NAPI must still reap the flushes): stop
 * listening, close every channel, free the SRQ.
 */
void ipoib_cm_stop(struct ipoib_dev *priv)
{
	bool drained;

	if (!test_and_clear_bit(IPOIB_FLAG_CM_UP, &priv->flags))
		return;
	/* xmit tests CM_UP under cm.lock: no channel starts after this */
	spin_lock_bh(&priv->cm.lock);
	spin_unlock_bh(&priv->cm.lock);
	ipoib_cm_unlisten(priv);
	cancel_delayed_work_sync(&priv->cm.gc_work);
	/* set-up works end, seeing CM_UP cleared */
	flush_workqueue(priv->cm.wq);
	drained = ipoib_cm_close_all(priv);
	/* no receive completion may meet the ring while it goes */
	napi_disable(&priv->napi);
	if (drained)
		ipoib_cm_rx_close(priv);
	else
		ipoib_cm_rx_forget(priv);
	napi_enable(&priv->napi);
	cancel_delayed_work_sync(&priv->cm.stall_work);
	atomic_set(&priv->cm.tx_stopped, 0);
}

static void ipoib_cm_show_one(struct seq_file *m, struct ipoib_cm_chan *chan)
{
	const u8 *addr = chan->peer->addr;

	seq_printf(m, "GID: %pI6c QPN: 0x%06x %s %s %s MTU: %u RQ: %s TX-CSUM: %s\n",
		   addr + 4, ipoib_cm_addr_qpn(addr),
		   chan->uc ? "UC" : "RC",
		   chan->active ? "active" :
		   chan->rx_only ? "rx-only" : "passive",
		   ipoib_cm_state_names[chan->state], chan->mtu,
		   chan->priv->cm.use_srq ? "srq" : "own",
		   chan->csum_pending ? "pending" : "complete");
}

/*
 * Close the live channels (cm.mutex held), those that carry nothing of
 * ours first: closing the one that does hands our traffic to another live
 * one, which must not be one about to close. The DREQ goes now, not from
 * the release after the drain (up to IPOIB_CM_LAST_WQE_WAIT later), so
 * that the peer stops sending on its end at once.
 */
static void ipoib_cm_close_live(struct ipoib_dev *priv)
{
	struct ipoib_cm_chan *chan, *tmp;
	int carrying;

	for (carrying = 0; carrying < 2; carrying++)
		list_for_each_entry_safe(chan, tmp, &priv->cm.chans, node) {
			if (chan->state != IPOIB_CM_LIVE ||
			    (rcu_access_pointer(chan->peer->tx) == chan) !=
			    carrying)
				continue;
			if (chan->cm_id)
				ib_send_cm_dreq(chan->cm_id, NULL, 0);
			ipoib_cm_step(chan, IPOIB_CM_EV_CLOSE, NULL);
		}
}

/*
 * A bond made us its backup (under RTNL): what peers send to our address
 * now goes nowhere (the bond drops it), so every live channel closes with
 * a DREQ, and each peer, told at once, sends to the new active port as
 * soon as its gratuitous ARP or unsolicited NA arrives. Not while the
 * port is down: a MAD sent then breaks rxe's QP1, and ipoib_cm_link_up()
 * closes them when the port is back.
 */
void ipoib_cm_lag_backup(struct ipoib_dev *priv)
{
	if (!priv->cm.wq || test_bit(IPOIB_FLAG_PORT_DOWN, &priv->flags) ||
	    !netif_carrier_ok(priv->dev))
		return;
	mutex_lock(&priv->cm.mutex);
	ipoib_cm_close_live(priv);
	mutex_unlock(&priv->cm.mutex);
}

/* peer->addr is a link-layer address with its flags octet cleared */
static void ipoib_cm_key(u8 *key, const u8 *ha)
{
	memcpy(key, ha, IPOIB_ADDR_LEN);
	key[0] = 0;
}

static bool ipoib_cm_sends_on(const struct ipoib_cm_peer *peer)
{
	const struct ipoib_cm_chan *chan = rcu_dereference(peer->tx);

	return chan && READ_ONCE(chan->state) == IPOIB_CM_LIVE;
}

/* Whether a live channel we send on goes to @ha (any context) */
bool ipoib_cm_sends_to(struct ipoib_dev *priv, const u8 *ha)
{
	struct ipoib_cm_peer *peer;
	u8 key[IPOIB_ADDR_LEN];
	bool ret = false;

	ipoib_cm_key(key, ha);
	rcu_read_lock();
	hlist_for_each_entry_rcu(peer, ipoib_cm_bucket(priv, key), node)
		if (!memcmp(peer->addr, key, IPOIB_ADDR_LEN)) {
			ret = ipoib_cm_sends_on(peer);
			break;
		}
	rcu_read_unlock();
	return ret;
}

/*
 * The addresses (flags octet 0) of the peers we send to over a live
 * channel: how many there are, and the first @max of them in @addrs
 * (IPOIB_ADDR_LEN octets each).
 */
unsigned int ipoib_cm_tx_addrs(struct ipoib_dev *priv, u8 *addrs,
			       unsigned int max)
{
	struct ipoib_cm_chan *chan;
	unsigned int n = 0;

	if (!priv->cm.wq)
		return 0;
	mutex_lock(&priv->cm.mutex);
	list_for_each_entry(chan, &priv->cm.chans, node) {
		if (chan->state != IPOIB_CM_LIVE ||
		    rcu_access_pointer(chan->peer->tx) != chan)
			continue;
		if (n < max)
			memcpy(addrs + n * IPOIB_ADDR_LEN, chan->peer->addr,
			       IPOIB_ADDR_LEN);
		n++;
	}
	mutex_unlock(&priv->cm.mutex);
	return n;
}

int ipoib_cm_addr_cmp(const void *a, const void *b)
{
	return memcmp(a, b, IPOIB_ADDR_LEN);
}

/*
 * The peers at @unnamed (sorted, flags octet 0) are those of our live
 * channels that no neighbour entry holds now. The peer may have moved
 * (its bond failed over), or its entry is being resolved again, or it
 * only sends to us and we keep no entry for it. A peer unnamed for
 * IPOIB_NEIGH_RECHECK whose channels all carried nothing either way for
 * as long has moved: its live channels close, those that carry nothing
 * of ours first (see ipoib_cm_close_live). Left alone, they would idle
 * out; closed, they free their QPs now and the peer's side learns it
 * from the DREQ. True if a peer is still a suspect: sweep again later,
 * for IPOIB_NEIGH_GIVEUP at most from when it was first seen unnamed. The
 * record stands while sweeps come each second, so that two busy peers
 * cannot keep them going between them; a later sweep starts a new look.
 * Not on a port that is down: a MAD sent then breaks rxe's QP1, and
 * ipoib_cm_link_up() closes them when the port is back. Process context.
 */
bool ipoib_cm_close_unnamed(struct ipoib_dev *priv, const u8 *unnamed,
			    unsigned int n)
{
	unsigned long now = jiffies, since;
	struct ipoib_cm_chan *chan, *tmp;
	bool again = false;
	int carrying;

	if (!priv->cm.wq || test_bit(IPOIB_FLAG_PORT_DOWN, &priv->flags) ||
	    !netif_carrier_ok(priv->dev))
		return false;
	mutex_lock(&priv->cm.mutex);
	list_for_each_entry(chan, &priv->cm.chans, node)
		chan->peer->busy = false;
	list_for_each_entry(chan, &priv->cm.chans, node)
		if (chan->state == IPOIB_CM_LIVE &&
		    time_before(now, ipoib_cm_last_active(chan) +
				IPOIB_NEIGH_RECHECK))
			chan->peer->busy = true;
	list_for_each_entry(chan, &priv->cm.chans, node) {
		struct ipoib_cm_peer *peer = chan->peer;

		if (chan->state != IPOIB_CM_LIVE ||
		    rcu_access_pointer(peer->tx) != chan)
			continue;
		if (!bsearch(peer->addr, unnamed, n, IPOIB_ADDR_LEN,
			     ipoib_cm_addr_cmp)) {
			peer->unnamed_since = 0;
			continue;
		}
		/* a record no sweep has kept up is stale: a new look */
		if (!peer->unnamed_since ||
		    time_after(now, peer->unnamed_seen +
			       2 * IPOIB_NEIGH_RECHECK))
			peer->unnamed_since = now | 1;
		peer->unnamed_seen = now;
		since = peer->unnamed_since;
		if (!peer->busy &&
		    !time_before(now, since + IPOIB_NEIGH_RECHECK))
			peer->moved = true;
		else if (time_before(now, since + IPOIB_NEIGH_GIVEUP))
			again = true;
	}
	for (carrying = 0; carrying < 2; carrying++)
		list_for_each_entry_safe(chan, tmp, &priv->cm.chans, node) {
			struct ipoib_cm_peer *peer = chan->peer;
			bool tx = rcu_access_pointer(peer->tx) == chan;

			if (chan->state != IPOIB_CM_LIVE || !peer->moved ||
			    tx != carrying)
				continue;
			if (tx) {
				ipoib_dbg(priv, 1, "CM: %pI6c moved: closing its connection\n",
					  peer->addr + 4);
				atomic_long_inc(&priv->counters.cm_peer_moved);
				peer->moved = false;
				peer->unnamed_since = 0;
			}
			if (chan->cm_id)
				ib_send_cm_dreq(chan->cm_id, NULL, 0);
			ipoib_cm_step(chan, IPOIB_CM_EV_CLOSE, NULL);
		}
	mutex_unlock(&priv->cm.mutex);
	return again;
}

/*
 * GID 0 is gone (under RTNL): every channel names it (its QP's and its
 * cm_id's address vectors, chan->sgid_attr), and the core places the new
 * one only in a slot nobody holds. The peers reach us at the new address
 * on new channels; the old ones close (those that carry nothing of ours
 * first, as in ipoib_cm_close_live()), and their ids go at once, parked
 * or not.
 */
void ipoib_cm_gid_gone(struct ipoib_dev *priv)
{
	struct ipoib_cm_chan *chan, *tmp;
	unsigned int ids = 0;
	int carrying;

	if (!priv->cm.wq)
		return;
	mutex_lock(&priv->cm.mutex);
	list_for_each_entry(chan, &priv->cm.chans, node)
		if (chan->cm_id)
			ids++;
	for (carrying = 0; carrying < 2; carrying++)
		list_for_each_entry_safe(chan, tmp, &priv->cm.chans, node)
			if ((rcu_access_pointer(chan->peer->tx) == chan) ==
			    carrying)
				ipoib_cm_step(chan, IPOIB_CM_EV_CLOSE, NULL);
	mutex_unlock(&priv->cm.mutex);
	ipoib_cm_unpark(priv);
	/*
	 * Each id's last MAD (DREQ, REJ) goes from GID 0's slot, which it
	 * holds: soft-RoCE finds the source GID by index, cannot send it,
	 * and takes the device's QP1 to the error state for good (seen on
	 * 6.12 and 6.1). Kept, the ids would keep GID 0 from coming back.
	 * Said once until GID 0 is back (the event comes more than once).
	 */
	if (ids && ib_uses_virt_dma(priv->ca) &&
	    !test_and_set_bit(IPOIB_FLAG_GID_GONE_SAID, &priv->flags))
		netdev_warn(priv->dev, "CM: GID 0 went while connection ids were open (%u): closing them breaks %s's CM for every user of it until its driver is reloaded; take %s down before its underlay to change the underlay's MAC\n",
			    ids, dev_name(&priv->ca->dev), netdev_name(priv->dev));
}

/*
 * The carrier came back (under RTNL). Channels that failed while the link
 * was down said nothing about their peers: their backoff ends, and the
 * next packet too big for UD connects at once. If the port itself went
 * down (@port_down), live ones may have lost what they sent meanwhile
 * without their QP noticing (rxe has left such an RC QP silent for a
 * minute): they close, and new ones are made on demand, and the channels
 * parked while it was down are released.
 */
void ipoib_cm_link_up(struct ipoib_dev *priv)
{
	bool port_down = test_bit(IPOIB_FLAG_PORT_DOWN, &priv->flags);
	struct ipoib_cm_peer *peer;
	unsigned int bkt;

	/*
	 * A carrier from before a port error, reported after it: still
	 * down. The flag clears only once the port is seen active, so that
	 * no release (ipoib_cm_release_work()) sees it clear before.
	 */
	if (port_down && !ipoib_port_active(priv))
		return;
	clear_bit(IPOIB_FLAG_PORT_DOWN, &priv->flags);
	if (!priv->cm.wq)
		return;
	mutex_lock(&priv->cm.mutex);
	if (port_down) {
		ipoib_cm_close_live(priv);
		/* what waited for the port may say so now (DREQ, REJ) */
		ipoib_cm_unpark(priv);
	}
	spin_lock_bh(&priv->cm.lock);
	hash_for_each(priv->cm.peers, bkt, peer, node) {
		peer->backoff = 0;
		peer->cross_since = 0;
		peer->retry_at = jiffies;
	}
	spin_unlock_bh(&priv->cm.lock);
	mutex_unlock(&priv->cm.mutex);
}

void ipoib_cm_show(struct ipoib_dev *priv, struct seq_file *m)
{
	struct ipoib_cm_chan *chan;

	mutex_lock(&priv->cm.mutex);
	list_for_each_entry(chan, &priv->cm.chans, node)
		ipoib_cm_show_one(m, chan);
	mutex_unlock(&priv->cm.mutex);
}
