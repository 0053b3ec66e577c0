/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of connected mode share among themselves: ipoib_cm.c
 * (peers and the channel life cycle), ipoib_cm_setup.c (ib_cm messages,
 * QP set-up), ipoib_cm_tx.c (transmit), ipoib_cm_rx.c (receive queues).
 * The rest of the driver sees only ipoib.h.
 *
 * A peer is a remote interface (GID and UD QPN). A channel is one
 * connection attempt to or from it: one cm_id and one RC/UC QP. A peer
 * has at most one channel it sends on (peer->tx); other channels of the
 * peer only receive: the in-tree model's own connection (rx_only), a
 * second connection the peer opened while ours lives, or our attempt
 * that lost a crossing and waits for the peer's REJ. peer->tx may be a
 * channel not yet live (ours connecting, or the peer's that won a
 * crossing, or whose REQ came after one of ours went unanswered for a
 * second, waiting for its RTU): packets too big for UD wait for it,
 * and nothing is sent on it before it is live.
 */
#ifndef _IPOIB_CM_H
#define _IPOIB_CM_H

#include <rdma/ib_cm.h>

#include "ipoib.h"

/*
 * A channel's life (ipoib_cm_step() makes every transition but the
 * release work's last, to DEAD; ipoib_cm_set_state() writes each and
 * traces it, events/ib_ipoib/ipoib_cm_state):
 *
 *   CONNECTING --REP--> LIVE       (ours: set-up work, REQ, REP, RTU)
 *   ACCEPTING --RTU--> LIVE        (the peer's REQ: set-up work, REP)
 *   any --REJ/DREQ/error/close--> DRAINING --completions--> DEAD
 *
 * DRAINING: unpublished from its peer, QP in the error state; it ends
 * when every send and receive it posted has completed (and, with an SRQ,
 * LAST_WQE_REACHED came). The release work then destroys the cm_id and
 * QP and, after a grace period, frees the channel.
 */
enum ipoib_cm_state {
	IPOIB_CM_CONNECTING,
	IPOIB_CM_ACCEPTING,
	IPOIB_CM_LIVE,
	IPOIB_CM_DRAINING,
	IPOIB_CM_DEAD,
};

enum ipoib_cm_event {
	IPOIB_CM_EV_REP,	/* REP received (ours) */
	IPOIB_CM_EV_RTU,	/* RTU, or COMM_EST through ib_cm_notify() */
	IPOIB_CM_EV_REJ,	/* REJ, or a REQ/REP timed out */
	IPOIB_CM_EV_FAIL,	/* a local failure or a send error */
	IPOIB_CM_EV_DREQ,	/* the peer disconnects */
	IPOIB_CM_EV_CLOSE,	/* we close: idle, down, superseded */
};

/*
 * What still keeps a channel from its release: bits of chan->holding,
 * each counted once in chan->holds; the last one dropped queues it.
 */
enum ipoib_cm_hold {
	IPOIB_CM_HOLD_OPEN,	/* not draining yet */
	IPOIB_CM_HOLD_SETUP,	/* its set-up work owns the QP */
	IPOIB_CM_HOLD_TX,	/* sends posted, not completed */
	IPOIB_CM_HOLD_RX,	/* its own ring's receives not completed */
	IPOIB_CM_HOLD_LAST_WQE,	/* on the SRQ: LAST_WQE_REACHED not seen */
};

/* chan->events: what the QP event handler and NAPI ask of event_work */
enum ipoib_cm_async {
	IPOIB_CM_ASYNC_COMM_EST,	/* data before the RTU */
	IPOIB_CM_ASYNC_FAIL,		/* a send or receive error */
	IPOIB_CM_ASYNC_LAST_WQE,	/* LAST_WQE_REACHED seen (not a work) */
};

struct ipoib_cm_peer {
	struct hlist_node node;		/* priv->cm.peers */
	struct rcu_head rcu;
	struct kref ref;		/* the table's, and one per channel */
	struct ipoib_dev *priv;
	u8 addr[IPOIB_ADDR_LEN];	/* its link-layer address, flags 0 */
	struct ipoib_cm_chan __rcu *tx;	/* the channel we send on */
	struct sk_buff_head queue;	/* too big for UD: wait for tx */
	unsigned long last_used;	/* jiffies of the last transmit */
	unsigned long retry_at;		/* no new channel before */
	unsigned long backoff;		/* cm.mutex */
	/* cm.mutex, the neighbour sweep's (ipoib_cm_close_unnamed) */
	unsigned long unnamed_since;	/* jiffies, 0: a neighbour names it */
	unsigned long unnamed_seen;	/* the sweep's last look finding it so */
	bool busy;			/* a live channel of it moved data */
	bool moved;			/* unnamed and idle long enough */
	bool sid_rfc;			/* cm.mutex: the service ID to try */
	/* cm.mutex: jiffies of the first REJ of ours for a crossing with
	 * no REQ of the peer's to take, since the last live channel; 0: none
	 */
	unsigned long cross_since;
};

struct ipoib_cm_chan {
	struct list_head node;		/* priv->cm.chans */
	struct hlist_node qp_node;	/* priv->cm.by_qp while qp lives */
	struct list_head release_node;	/* priv->cm.release_list */
	struct ipoib_dev *priv;
	struct ipoib_cm_peer *peer;	/* holds a reference */
	enum ipoib_cm_state state;	/* cm.mutex and cm.lock */
	bool active;			/* we sent the REQ */
	bool uc;			/* UC, not RC */
	bool rx_only;			/* in-tree model: we never send on it */
	bool sid_rfc;			/* its REQ went to the RFC service ID */
	bool csum_pending;		/* peer takes checksum-pending packets */
	bool probation;			/* the peer's last channel failed and
					 * this one has completed no send yet
					 */
	/* ours, CONNECTING when this one's REQ crossed it (s3.3); only
	 * compared, never followed (cm.mutex)
	 */
	const struct ipoib_cm_chan *crossed;
	struct ib_cm_id *cm_id;		/* cm.mutex; NULL once given back */
	struct ib_qp *qp;		/* set-up work, then cm.mutex */
	struct ipoib_cm_rx_ring *rx;	/* its own receive ring, no SRQ */
	const struct ib_gid_attr *sgid_attr;
	struct sa_path_rec path_rec;	/* ours: the REQ's primary path */
	u32 mtu;			/* IPoIB MTU of this connection */
	struct ipoib_cm_tx_buf *tx_ring; /* sendq_size entries */
	unsigned int tx_head;		/* cm.lock */
	unsigned int tx_tail;		/* NAPI */
	unsigned int send_room;		/* send CQ entries it reserved */
	unsigned long last_used;	/* jiffies of the last send */
	unsigned long last_rx;		/* jiffies of the last receive */
	unsigned long last_done;	/* jiffies: last send completed */
	unsigned long sent_at;		/* jiffies: its REQ or REP went out */
	atomic_t holds;			/* bits set in holding */
	unsigned long holding;		/* enum ipoib_cm_hold */
	unsigned long events;		/* enum ipoib_cm_async */
	struct work_struct setup_work;	/* connect or accept */
	struct work_struct event_work;
	struct delayed_work last_wqe_work; /* HCAs that never send it */
	struct delayed_work setup_limit_work; /* not live in time: close */
};

static inline unsigned int ipoib_cm_tx_inflight(struct ipoib_cm_chan *chan)
{
	/* acquire pairs with the completion's release of tx_tail */
	return READ_ONCE(chan->tx_head) - smp_load_acquire(&chan->tx_tail);
}

static inline bool ipoib_cm_tx_full(struct ipoib_cm_chan *chan)
{
	return ipoib_cm_tx_inflight(chan) >= chan->priv->sendq_size;
}

/* IP length of a packet still carrying its hard header */
static inline unsigned int ipoib_cm_ip_len(const struct sk_buff *skb)
{
	return skb->len - IPOIB_HARD_LEN;
}

static inline u32 ipoib_cm_addr_qpn(const u8 *addr)
{
	return (addr[1] << 16) | (addr[2] << 8) | addr[3];
}

/* ipoib_cm.c */
struct ipoib_cm_peer *ipoib_cm_peer_get(struct ipoib_dev *priv,
					const u8 *addr, gfp_t gfp);
struct ipoib_cm_chan *ipoib_cm_chan_new(struct ipoib_cm_peer *peer,
					bool active, bool sends, gfp_t gfp);
void ipoib_cm_hold(struct ipoib_cm_chan *chan, enum ipoib_cm_hold what);
void ipoib_cm_unhold(struct ipoib_cm_chan *chan, enum ipoib_cm_hold what);
bool ipoib_cm_step(struct ipoib_cm_chan *chan, enum ipoib_cm_event ev,
		   const struct ib_cm_event *cm_ev);
void ipoib_cm_setup_done(struct ipoib_cm_chan *chan);
void ipoib_cm_async(struct ipoib_cm_chan *chan, enum ipoib_cm_async what);
void ipoib_cm_peer_addr(u8 *buf, u32 qpn, const union ib_gid *gid);
int ipoib_cm_addr_order(const struct ipoib_cm_peer *peer);

/* ipoib_cm_setup.c */
int ipoib_cm_handler(struct ib_cm_id *id, const struct ib_cm_event *ev);
void ipoib_cm_connect_work(struct work_struct *work);
void ipoib_cm_accept_work(struct work_struct *work);
void ipoib_cm_event_work(struct work_struct *work);
void ipoib_cm_reject(struct ipoib_dev *priv, struct ib_cm_id *id,
		     enum ib_cm_rej_reason reason);
void ipoib_cm_pdata(struct ipoib_dev *priv, u8 *buf);
int ipoib_cm_parse_pdata(const void *data, struct ipoib_cm_pdata *pd);
int ipoib_cm_modify(struct ipoib_cm_chan *chan, enum ib_qp_state state,
		    u32 rq_psn);
int ipoib_cm_rep_received(struct ipoib_cm_chan *chan,
			  const struct ib_cm_event *cm_ev);

/* ipoib_cm_rx.c */
int ipoib_cm_rx_open(struct ipoib_dev *priv);
void ipoib_cm_rx_close(struct ipoib_dev *priv);
void ipoib_cm_rx_forget(struct ipoib_dev *priv);
int ipoib_cm_rx_chan_open(struct ipoib_cm_chan *chan);
void ipoib_cm_rx_chan_drain(struct ipoib_cm_chan *chan);
void ipoib_cm_rx_chan_unpublish(struct ipoib_cm_chan *chan);
void ipoib_cm_rx_chan_free(struct ipoib_cm_chan *chan);

/* ipoib_cm_tx.c */
void ipoib_cm_send(struct ipoib_cm_chan *chan, struct sk_buff *skb);
void ipoib_cm_tx_drain(struct ipoib_cm_chan *chan);
void ipoib_cm_send_queued(struct ipoib_cm_chan *chan);
void ipoib_cm_flush_to_ud(struct ipoib_dev *priv, struct sk_buff_head *list);
void ipoib_cm_stall_work(struct work_struct *work);

#endif
