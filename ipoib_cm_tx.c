// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode's transmit side: which packets may take a connection
 * (RFC 4755 s7), sending on a live one, what waits for one, and "too
 * big" answers so that path MTU discovery adapts (s7.2).
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ipv6.h>
#include <net/ndisc.h>

#include "ipoib.h"
#include "ipoib_cm.h"

/* packets too big for UD that may wait for a connection, per peer */
#define IPOIB_CM_QUEUE_LEN	8
/* a full connection with no completion for this long is stuck */
#define IPOIB_CM_STALL		(HZ / 5)

/*
 * A checksum the stack left to us (CHECKSUM_PARTIAL): towards a peer that
 * takes checksum-pending packets, say where it goes in the immediate data
 * (ipoib_wire.h) and leave it; else complete it here, as the stack would
 * have. 0, or an error if it could not be completed.
 */
static int ipoib_cm_tx_csum(struct ipoib_cm_chan *chan, struct sk_buff *skb,
			    struct ib_send_wr *wr)
{
	struct ipoib_dev *priv = chan->priv;
	int start;

	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return 0;
	/* from the IP header, behind the encapsulation header */
	start = skb_checksum_start_offset(skb) - IPOIB_ENCAP_LEN;
	if (chan->csum_pending && start >= 0 &&
	    !ipoib_cm_csum_imm_pack((u8 *)&wr->ex.imm_data, start,
				    skb->csum_offset)) {
		wr->opcode = IB_WR_SEND_WITH_IMM;
		atomic_long_inc(&priv->counters.cm_tx_csum_pending);
		return 0;
	}
	return ipoib_csum_complete(priv, skb);
}

/*
 * A connection has room again and took back its stop: wake the queue,
 * never during a restart, and only with slack in the UD ring behind the
 * same queue (ipoib_ud_tx_slack() says who wakes otherwise).
 */
static void ipoib_cm_wake(struct ipoib_dev *priv)
{
	if (test_bit(IPOIB_FLAG_DATAPATH, &priv->flags) &&
	    ipoib_ud_tx_slack(priv))
		netif_wake_queue(priv->dev);
}

/*
 * Stop the queue for a full connection and take a stop token; a waker
 * that takes the token must see the queue stopped.
 */
static void ipoib_cm_stop_queue(struct ipoib_dev *priv)
{
	netif_stop_queue(priv->dev);
	smp_mb__after_atomic(); /* the stop before the token */
	atomic_inc(&priv->cm.tx_stopped);
	smp_mb(); /* the token before re-reading tx_tail */
}

/*
 * Send one skb (pseudo header still in front) over a live connection.
 * cm_lock held: it also guards the gather list. Not counted for byte
 * queue limits: an RC send completes only when the peer acknowledges it,
 * so one peer that takes nothing (RNR NAKs) would hold the queue every
 * peer shares for seconds; the channel's ring and its stall rule
 * (ipoib_cm_tx_stuck()) bound what waits here instead.
 */
void ipoib_cm_send(struct ipoib_cm_chan *chan, struct sk_buff *skb)
{
	struct ipoib_dev *priv = chan->priv;
	struct net_device *dev = priv->dev;
	struct ib_sge *sge = priv->cm.tx_sg_list;
	struct ipoib_cm_tx_buf *tx;
	struct ib_send_wr wr = {
		.sg_list = sge,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	unsigned int id, len;
	int nsge;

	skb_pull(skb, IPOIB_PSEUDO_LEN);
	if (unlikely(ipoib_cm_tx_csum(chan, skb, &wr)))
		goto drop;
	if (unlikely(ipoib_tx_gatherable(skb, priv->cm.tx_sge)))
		goto drop;
	/* an idle connection's progress clock starts with this send */
	if (!ipoib_cm_tx_inflight(chan))
		WRITE_ONCE(chan->last_done, jiffies);
	id = chan->tx_head & (priv->sendq_size - 1);
	tx = &chan->tx_ring[id];
	tx->skb = skb;
	nsge = ipoib_dma_map_skb(priv, skb, tx->mapping, sge);
	if (unlikely(nsge < 0)) {
		tx->skb = NULL;
		goto drop;
	}
	wr.num_sge = nsge;
	wr.wr_id = id | IPOIB_OP_CM;
	/* the completion may free the skb before ib_post_send() returns */
	len = skb->len;
	ipoib_tx_release_route(skb);
	/*
	 * An RC send completes only once the peer has acknowledged it,
	 * which can take long: TCP's small-queue limit would hold the
	 * socket to a couple of 64 KiB skbs meanwhile (measured on
	 * soft-RoCE: connected TCP 17% slower), so the socket lets go now,
	 * as with the in-tree driver; the channel's ring bounds what waits
	 * here.
	 */
	skb_orphan(skb);
	if (unlikely(ib_post_send(chan->qp, &wr, NULL))) {
		ipoib_warn_rl(priv, "CM post send failed\n");
		ipoib_dma_unmap_skb(priv, skb, tx->mapping, nsge - 1);
		tx->skb = NULL;
		DEV_STATS_INC(dev, tx_errors);
		dev_kfree_skb_any(skb);
		return;
	}
	dev_sw_netstats_tx_add(dev, 1, len);
	WRITE_ONCE(chan->tx_head, chan->tx_head + 1);
	WRITE_ONCE(chan->last_used, jiffies);
	if (ipoib_cm_tx_full(chan)) {
		ipoib_cm_stop_queue(priv);
		if (!ipoib_cm_tx_full(chan)) {
			if (atomic_dec_if_positive(&priv->cm.tx_stopped) >= 0)
				ipoib_cm_wake(priv);
		} else {
			/* if it turns out stuck, the others go on */
			queue_delayed_work(priv->cm.wq, &priv->cm.stall_work,
					   IPOIB_CM_STALL + 1);
		}
	}
	return;
drop:
	DEV_STATS_INC(dev, tx_dropped);
	dev_kfree_skb_any(skb);
}

/*
 * @chan now carries its peer's traffic: what waited for a channel goes
 * first, in order; what is larger than its MTU gets a "too big".
 */
void ipoib_cm_send_queued(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;
	struct sk_buff_head too_big;
	struct sk_buff *skb;

	__skb_queue_head_init(&too_big);
	spin_lock_bh(&priv->cm.lock);
	while ((skb = __skb_dequeue(&chan->peer->queue))) {
		if (ipoib_cm_ip_len(skb) > chan->mtu) {
			__skb_queue_tail(&too_big, skb);
		} else if (ipoib_cm_tx_full(chan)) {
			/* only with a send queue shorter than this queue */
			DEV_STATS_INC(priv->dev, tx_dropped);
			dev_kfree_skb_any(skb);
		} else {
			ipoib_cm_send(chan, skb);
		}
	}
	spin_unlock_bh(&priv->cm.lock);
	while ((skb = __skb_dequeue(&too_big)))
		ipoib_tx_too_big(priv, skb, chan->mtu);
}

/* A channel went without carrying them: what waited goes over UD. */
void ipoib_cm_flush_to_ud(struct ipoib_dev *priv, struct sk_buff_head *list)
{
	unsigned int ud_mtu = IPOIB_UD_MTU(READ_ONCE(priv->mcast_mtu));
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(list))) {
		if (ipoib_cm_ip_len(skb) > priv->dev->mtu ||
		    ipoib_cm_ip_len(skb) > ud_mtu) {
			ipoib_tx_too_big(priv, skb, ud_mtu);
			continue;
		}
		local_bh_disable();
		dev_queue_xmit(skb);
		local_bh_enable();
	}
}

/*
 * RFC 4755 s7: address resolution always goes UD, so ARP and the IPv6
 * neighbour discovery messages (ICMPv6 133..137) never take a connection.
 */
static bool ipoib_cm_carries(struct sk_buff *skb)
{
	const struct ipv6hdr *ip6;
	struct ipv6hdr ip6buf;
	u8 type, *tp;

	if (skb->protocol == htons(ETH_P_IP))
		return true;
	if (skb->protocol != htons(ETH_P_IPV6))
		return false;
	ip6 = skb_header_pointer(skb, IPOIB_HARD_LEN, sizeof(ip6buf), &ip6buf);
	if (!ip6)
		return false;
	if (ip6->nexthdr != IPPROTO_ICMPV6)
		return true;
	tp = skb_header_pointer(skb, IPOIB_HARD_LEN + sizeof(*ip6),
				sizeof(type), &type);
	return tp && (*tp < NDISC_ROUTER_SOLICITATION ||
		      *tp > NDISC_REDIRECT);
}

/*
 * One transmit queue serves every peer: a connection whose send queue is
 * full stops it until its completions come. One that has completed
 * nothing for IPOIB_CM_STALL (its peer takes no data: RNR NAKs) must not
 * hold up the others meanwhile, until RNR retries end it: its packets are
 * dropped instead (cm_tx_stalled), and stall_work wakes a queue it
 * stopped before it looked stuck. A channel to a peer whose last one
 * failed gets no such grace: until one of its sends completes, it drops
 * as soon as it is full, so a peer that keeps taking nothing stops the
 * queue once, not once per reconnect.
 */
static bool ipoib_cm_tx_stuck(struct ipoib_cm_chan *chan)
{
	return time_after(jiffies, READ_ONCE(chan->last_done) + IPOIB_CM_STALL);
}

void ipoib_cm_stall_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(to_delayed_work(work),
					      struct ipoib_dev,
					      cm.stall_work);

	/* BH off: a restart's synchronize_net() waits for this wake */
	local_bh_disable();
	if (atomic_xchg(&priv->cm.tx_stopped, 0))
		ipoib_cm_wake(priv);
	local_bh_enable();
}

/*
 * Send over a live channel (cm.lock held): 1 if sent, -EBUSY if the queue
 * had to stop, -EMSGSIZE if above its MTU, -ENOBUFS if it is stuck; the
 * caller answers the last two after the lock.
 */
static int ipoib_cm_xmit_live(struct ipoib_cm_chan *chan, struct sk_buff *skb)
{
	struct ipoib_dev *priv = chan->priv;

	lockdep_assert_held(&priv->cm.lock);
	if (ipoib_cm_ip_len(skb) > chan->mtu)
		return -EMSGSIZE;
	if (unlikely(ipoib_cm_tx_full(chan))) {
		if (ipoib_cm_tx_stuck(chan) || READ_ONCE(chan->probation))
			return -ENOBUFS;
		ipoib_cm_stop_queue(priv);
		if (ipoib_cm_tx_full(chan)) {
			queue_delayed_work(priv->cm.wq, &priv->cm.stall_work,
					   IPOIB_CM_STALL + 1);
			return -EBUSY;
		}
		if (atomic_dec_if_positive(&priv->cm.tx_stopped) >= 0)
			ipoib_cm_wake(priv);
	}
	ipoib_cm_send(chan, skb);
	return 1;
}

/* A channel to @peer (cm.lock held), published before its set-up runs. */
static struct ipoib_cm_chan *ipoib_cm_start(struct ipoib_cm_peer *peer,
					    struct ipoib_path *path, bool uc)
{
	struct ipoib_dev *priv = peer->priv;
	struct ipoib_cm_chan *chan;

	chan = ipoib_cm_chan_new(peer, true, true, GFP_ATOMIC);
	if (!chan) {
		/* no room (or memory): not again for every packet */
		peer->retry_at = jiffies + HZ;
		return NULL;
	}
	chan->uc = uc;
	priv->fabric->cm_path(priv, path, &chan->path_rec);
	rcu_assign_pointer(peer->tx, chan);
	queue_work(priv->cm.wq, &chan->setup_work);
	return chan;
}

/* A datagram-only peer, or no channel: s7.2, its MTU is the UD MTU. */
static int ipoib_cm_ud_or_too_big(struct ipoib_dev *priv, struct sk_buff *skb)
{
	unsigned int ud_mtu = IPOIB_UD_MTU(READ_ONCE(priv->mcast_mtu));

	if (ipoib_cm_ip_len(skb) > ud_mtu &&
	    (skb->protocol == htons(ETH_P_IP) ||
	     skb->protocol == htons(ETH_P_IPV6))) {
		ipoib_tx_too_big(priv, skb, ud_mtu);
		return 1;
	}
	return 0;
}

/*
 * Transmit of a unicast IP packet to @dst in connected mode: over a live
 * channel, or UD while there is none. Returns 0 if the caller must send
 * it over UD, 1 if it was taken, -EBUSY if the channel's send queue is
 * full (the netdev queue is stopped; try again). Runs with the path to
 * the peer resolved.
 */
int ipoib_cm_xmit(struct ipoib_dev *priv, struct sk_buff *skb,
		  struct ipoib_path *path, const struct ipoib_lladdr *dst)
{
	unsigned int ud_mtu = IPOIB_UD_MTU(READ_ONCE(priv->mcast_mtu));
	struct ipoib_cm_peer *peer = NULL;
	struct ipoib_cm_chan *chan;
	u8 addr[IPOIB_ADDR_LEN];
	bool uc;

	/* UC when we are set to and the peer takes it, else RC */
	uc = ipoib_cm_uc && (dst->flags & IPOIB_FLAG_UC);
	if (!(uc || (dst->flags & IPOIB_FLAG_RC)) || !ipoib_cm_carries(skb))
		return ipoib_cm_ud_or_too_big(priv, skb);
	ipoib_cm_peer_addr(addr, dst->qpn, (const union ib_gid *)dst->gid);

	spin_lock_bh(&priv->cm.lock);
	if (test_bit(IPOIB_FLAG_CM_UP, &priv->flags))
		peer = ipoib_cm_peer_get(priv, addr, GFP_ATOMIC);
	if (!peer) {
		spin_unlock_bh(&priv->cm.lock);
		return ipoib_cm_ud_or_too_big(priv, skb);
	}
	WRITE_ONCE(peer->last_used, jiffies);
	chan = rcu_dereference_protected(peer->tx,
					 lockdep_is_held(&priv->cm.lock));
	if (chan && chan->state == IPOIB_CM_LIVE) {
		u32 mtu = chan->mtu;
		int ret = ipoib_cm_xmit_live(chan, skb);

		spin_unlock_bh(&priv->cm.lock);
		if (ret == -EMSGSIZE) {
			ipoib_tx_too_big(priv, skb, mtu);
			return 1;
		}
		if (ret == -ENOBUFS) {
			atomic_long_inc(&priv->counters.cm_tx_stalled);
			DEV_STATS_INC(priv->dev, tx_dropped);
			dev_kfree_skb_any(skb);
			return 1;
		}
		return ret;
	}
	if (!chan && time_after_eq(jiffies, peer->retry_at))
		chan = ipoib_cm_start(peer, path, uc);
	/* bigger than UD can carry: wait for the channel, a few */
	if (ipoib_cm_ip_len(skb) > ud_mtu && chan &&
	    skb_queue_len(&peer->queue) < IPOIB_CM_QUEUE_LEN) {
		__skb_queue_tail(&peer->queue, skb);
		spin_unlock_bh(&priv->cm.lock);
		return 1;
	}
	spin_unlock_bh(&priv->cm.lock);
	return ipoib_cm_ud_or_too_big(priv, skb);
}

/* Draining (no send follows): done once nothing is in flight. */
void ipoib_cm_tx_drain(struct ipoib_cm_chan *chan)
{
	smp_mb(); /* the TX hold before reading tx_tail; pairs with NAPI's */
	if (!ipoib_cm_tx_inflight(chan))
		ipoib_cm_unhold(chan, IPOIB_CM_HOLD_TX);
}

void ipoib_cm_handle_tx(struct ipoib_dev *priv, struct ib_wc *wc)
{
	struct ipoib_cm_chan *chan = wc->qp->qp_context;
	unsigned int id = wc->wr_id & ~IPOIB_OP_CM;
	struct ipoib_cm_tx_buf *tx;
	unsigned long now;

	if (unlikely(id >= priv->sendq_size || !chan->tx_ring)) {
		ipoib_warn_rl(priv, "CM send completion for bad id %u\n", id);
		return;
	}
	tx = &chan->tx_ring[id];
	ipoib_dma_unmap_skb(priv, tx->skb, tx->mapping,
			    skb_shinfo(tx->skb)->nr_frags);
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status == IB_WC_RNR_RETRY_EXC_ERR)
			atomic_long_inc(&priv->counters.cm_rnr_failures);
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			ipoib_warn_rl(priv, "CM send error %d (vendor 0x%x), closing\n",
				      wc->status, wc->vendor_err);
			ipoib_cm_async(chan, IPOIB_CM_ASYNC_FAIL);
		}
		DEV_STATS_INC(priv->dev, tx_errors);
		dev_kfree_skb_any(tx->skb);
	} else {
		dev_consume_skb_any(tx->skb);
		if (unlikely(READ_ONCE(chan->probation)))
			WRITE_ONCE(chan->probation, false);
	}
	tx->skb = NULL;
	/* one store per tick: the line stays shared between CPUs */
	now = jiffies;
	if (READ_ONCE(chan->last_done) != now)
		WRITE_ONCE(chan->last_done, now);
	/* pairs with the acquire in ipoib_cm_tx_full() */
	smp_store_release(&chan->tx_tail, chan->tx_tail + 1);
	/* tx_tail before tx_stopped and the TX hold; pairs with xmit's, drain's */
	smp_mb();
	if (atomic_read(&priv->cm.tx_stopped) &&
	    chan->tx_head - chan->tx_tail <= priv->sendq_size / 2 &&
	    atomic_dec_if_positive(&priv->cm.tx_stopped) >= 0)
		ipoib_cm_wake(priv);
	/* the last touch: the channel may be released right after */
	if (test_bit_acquire(IPOIB_CM_HOLD_TX, &chan->holding) &&
	    !ipoib_cm_tx_inflight(chan))
		ipoib_cm_unhold(chan, IPOIB_CM_HOLD_TX);
}
