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

static void ipoib_cm_unmap_tx(struct ipoib_dev *priv,
			      struct ipoib_cm_tx_buf *tx, unsigned int nfrags)
{
	struct sk_buff *skb = tx->skb;
	unsigned int i;

	ib_dma_unmap_single(priv->ca, tx->mapping[0], skb_headlen(skb),
			    DMA_TO_DEVICE);
	for (i = 0; i < nfrags; i++)
		ib_dma_unmap_page(priv->ca, tx->mapping[i + 1],
				  skb_frag_size(&skb_shinfo(skb)->frags[i]),
				  DMA_TO_DEVICE);
}

/* Map the head and each fragment into @sge; on failure nothing stays mapped. */
static int ipoib_cm_map_tx(struct ipoib_dev *priv, struct ipoib_cm_tx_buf *tx,
			   struct ib_sge *sge)
{
	struct sk_buff *skb = tx->skb;
	unsigned int i, nfrags = skb_shinfo(skb)->nr_frags;
	u64 *map = tx->mapping;

	map[0] = ib_dma_map_single(priv->ca, skb->data, skb_headlen(skb),
				   DMA_TO_DEVICE);
	if (unlikely(ib_dma_mapping_error(priv->ca, map[0])))
		return -EIO;
	sge[0].addr = map[0];
	sge[0].length = skb_headlen(skb);
	for (i = 0; i < nfrags; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

		map[i + 1] = ib_dma_map_page(priv->ca, skb_frag_page(frag),
					     skb_frag_off(frag),
					     skb_frag_size(frag),
					     DMA_TO_DEVICE);
		if (unlikely(ib_dma_mapping_error(priv->ca, map[i + 1]))) {
			ipoib_cm_unmap_tx(priv, tx, i);
			return -EIO;
		}
		sge[i + 1].addr = map[i + 1];
		sge[i + 1].length = skb_frag_size(frag);
	}
	for (i = 0; i <= nfrags; i++)
		sge[i].lkey = priv->pd->local_dma_lkey;
	return nfrags + 1;
}

/*
 * A checksum the stack left to us (CHECKSUM_PARTIAL): towards a peer that
 * takes checksum-pending packets, say where it goes in the immediate data
 * (ipoib_wire.h) and leave it; else complete it here, as the stack would
 * have. 0, or an error if it could not be completed.
 */
static int ipoib_cm_tx_csum(struct ipoib_cm_conn *conn, struct sk_buff *skb,
			    struct ib_send_wr *wr)
{
	struct ipoib_dev *priv = conn->priv;
	int start;

	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return 0;
	/* from the IP header, behind the encapsulation header */
	start = skb_checksum_start_offset(skb) - IPOIB_ENCAP_LEN;
	if (conn->csum_pending && start >= 0 &&
	    !ipoib_cm_csum_imm_pack((u8 *)&wr->ex.imm_data, start,
				    skb->csum_offset)) {
		wr->opcode = IB_WR_SEND_WITH_IMM;
		atomic_long_inc(&priv->counters.cm_tx_csum_pending);
		return 0;
	}
	return ipoib_csum_complete(priv, skb);
}

/*
 * Send one skb (pseudo header still in front) over a live connection.
 * cm_lock held: it also guards the gather list.
 */
void ipoib_cm_send(struct ipoib_cm_conn *conn, struct sk_buff *skb)
{
	struct ipoib_dev *priv = conn->priv;
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
	if (unlikely(ipoib_cm_tx_csum(conn, skb, &wr)))
		goto drop;
	/* more fragments than the QP gathers, or a chain of skbs: one copy */
	if (unlikely((skb_shinfo(skb)->nr_frags >= priv->cm.tx_sge ||
		      skb_has_frag_list(skb)) && skb_linearize(skb)))
		goto drop;
	id = conn->tx_head & (priv->sendq_size - 1);
	tx = &conn->tx_ring[id];
	tx->skb = skb;
	nsge = ipoib_cm_map_tx(priv, tx, sge);
	if (unlikely(nsge < 0)) {
		tx->skb = NULL;
		goto drop;
	}
	wr.num_sge = nsge;
	wr.wr_id = id | IPOIB_OP_CM;
	/* the completion may free the skb before ib_post_send() returns */
	len = skb->len;
	ipoib_tx_release_owner(skb);
	if (unlikely(ib_post_send(conn->qp, &wr, NULL))) {
		ipoib_warn_rl(priv, "CM post send failed\n");
		ipoib_cm_unmap_tx(priv, tx, nsge - 1);
		tx->skb = NULL;
		DEV_STATS_INC(dev, tx_errors);
		dev_kfree_skb_any(skb);
		return;
	}
	DEV_STATS_INC(dev, tx_packets);
	DEV_STATS_ADD(dev, tx_bytes, len);
	WRITE_ONCE(conn->tx_head, conn->tx_head + 1);
	WRITE_ONCE(conn->last_used, jiffies);
	if (ipoib_cm_tx_full(conn)) {
		netif_stop_queue(dev);
		atomic_inc(&priv->cm.tx_stopped);
		smp_mb(); /* queue state before re-reading tx_tail */
		if (!ipoib_cm_tx_full(conn) &&
		    atomic_dec_if_positive(&priv->cm.tx_stopped) >= 0)
			netif_wake_queue(dev);
	}
	return;
drop:
	DEV_STATS_INC(dev, tx_dropped);
	dev_kfree_skb_any(skb);
}

/* A connection ended: what waited for it goes over UD or is refused. */
void ipoib_cm_flush_to_ud(struct ipoib_cm_conn *conn)
{
	struct ipoib_dev *priv = conn->priv;
	struct sk_buff_head list;
	struct sk_buff *skb;

	__skb_queue_head_init(&list);
	spin_lock_bh(&priv->cm.lock);
	skb_queue_splice_init(&conn->queue, &list);
	spin_unlock_bh(&priv->cm.lock);
	while ((skb = __skb_dequeue(&list))) {
		if (ipoib_cm_ip_len(skb) > priv->dev->mtu ||
		    ipoib_cm_ip_len(skb) > IPOIB_UD_MTU(priv->mcast_mtu)) {
			ipoib_tx_too_big(priv, skb,
					 IPOIB_UD_MTU(priv->mcast_mtu));
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
 * Transmit of a unicast IP packet to @dst in connected mode: over a live
 * connection, or UD while there is none. Returns 0 if the caller must
 * send it over UD, 1 if it was taken, -EBUSY if the connection's send
 * queue is full (the netdev queue is stopped; try again). Runs with the
 * path to the peer resolved.
 */
int ipoib_cm_xmit(struct ipoib_dev *priv, struct sk_buff *skb,
		  struct ipoib_path *path, const struct ipoib_lladdr *dst)
{
	unsigned int ud_mtu = IPOIB_UD_MTU(priv->mcast_mtu);
	struct ipoib_cm_conn *conn;
	struct ipoib_cm_conn *pending, *wait = NULL;
	u8 peer[IPOIB_ADDR_LEN];
	bool start = false;
	bool uc;

	/* UC when we are set to and the peer takes it, else RC */
	uc = ipoib_cm_uc && (dst->flags & IPOIB_FLAG_UC);
	if (!test_bit(IPOIB_FLAG_CM_UP, &priv->flags) ||
	    !(uc || (dst->flags & IPOIB_FLAG_RC)) || !ipoib_cm_carries(skb)) {
		/* a datagram-only peer: s7.2, its MTU is the UD MTU */
		if (ipoib_cm_ip_len(skb) > ud_mtu &&
		    (skb->protocol == htons(ETH_P_IP) ||
		     skb->protocol == htons(ETH_P_IPV6))) {
			ipoib_tx_too_big(priv, skb, ud_mtu);
			return 1;
		}
		return 0;
	}
	ipoib_cm_peer_addr(peer, dst->qpn, (const union ib_gid *)dst->gid);

	spin_lock_bh(&priv->cm.lock);
	conn = ipoib_cm_find(priv, peer, false);
	if (conn && conn->state == IPOIB_CM_LIVE) {
		if (ipoib_cm_ip_len(skb) > conn->mtu) {
			spin_unlock_bh(&priv->cm.lock);
			ipoib_tx_too_big(priv, skb, conn->mtu);
			return 1;
		}
		if (unlikely(ipoib_cm_tx_full(conn))) {
			netif_stop_queue(priv->dev);
			atomic_inc(&priv->cm.tx_stopped);
			smp_mb(); /* queue state before re-reading tx_tail */
			if (ipoib_cm_tx_full(conn)) {
				spin_unlock_bh(&priv->cm.lock);
				return -EBUSY;
			}
			if (atomic_dec_if_positive(&priv->cm.tx_stopped) >= 0)
				netif_wake_queue(priv->dev);
		}
		ipoib_cm_send(conn, skb);
		spin_unlock_bh(&priv->cm.lock);
		return 1;
	}
	if (conn && conn->state == IPOIB_CM_CLOSED &&
	    time_after_eq(jiffies, conn->retry_at) && !conn->replacing) {
		/* a failed or closed one is replaced by a fresh attempt */
		conn->replacing = true;
		start = true;
	} else if (!conn && priv->cm.nconns < priv->cm.max_conns) {
		start = true;
	}
	/* an attempt already waiting for start_work serves this packet too */
	list_for_each_entry(pending, &priv->cm.start_list, start_node) {
		if (!memcmp(pending->peer, peer, IPOIB_ADDR_LEN)) {
			if (start && conn)
				conn->replacing = false;
			start = false;
			wait = pending;
			break;
		}
	}
	if (start) {
		struct ipoib_cm_conn *fresh;

		fresh = ipoib_cm_conn_new(priv, peer, true, GFP_ATOMIC);
		if (fresh) {
			fresh->state = IPOIB_CM_REQ_SENT;
			fresh->uc = uc;
			priv->fabric->cm_path(priv, path, &fresh->path_rec);
			fresh->sid_rfc = conn && conn->retry_sid_rfc;
			fresh->backoff = conn ? conn->backoff : 0;
			fresh->old = conn;
			list_add_tail(&fresh->start_node, &priv->cm.start_list);
			queue_work(priv->cm.wq, &priv->cm.start_work);
			wait = fresh;
		} else if (conn) {
			conn->replacing = false;
		}
	}
	/* bigger than UD can carry: wait for the connection, a few */
	if (ipoib_cm_ip_len(skb) > ud_mtu) {
		if (!wait && conn && conn->state != IPOIB_CM_CLOSED)
			wait = conn;
		if (wait && wait->state != IPOIB_CM_CLOSED &&
		    skb_queue_len(&wait->queue) < IPOIB_CM_QUEUE_LEN) {
			__skb_queue_tail(&wait->queue, skb);
			spin_unlock_bh(&priv->cm.lock);
			return 1;
		}
		spin_unlock_bh(&priv->cm.lock);
		ipoib_tx_too_big(priv, skb, ud_mtu);
		return 1;
	}
	spin_unlock_bh(&priv->cm.lock);
	return 0;
}

void ipoib_cm_handle_tx(struct ipoib_dev *priv, struct ib_wc *wc)
{
	struct ipoib_cm_conn *conn = wc->qp->qp_context;
	unsigned int id = wc->wr_id & ~IPOIB_OP_CM;
	struct ipoib_cm_tx_buf *tx;

	if (unlikely(id >= priv->sendq_size)) {
		ipoib_warn_rl(priv, "CM send completion for bad id %u\n", id);
		return;
	}
	tx = &conn->tx_ring[id];
	ipoib_cm_unmap_tx(priv, tx, skb_shinfo(tx->skb)->nr_frags);
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			ipoib_warn_rl(priv, "CM send error %d (vendor 0x%x), closing\n",
				      wc->status, wc->vendor_err);
			ipoib_cm_fail_later(conn);
		}
		DEV_STATS_INC(priv->dev, tx_errors);
		dev_kfree_skb_any(tx->skb);
	} else {
		dev_consume_skb_any(tx->skb);
	}
	tx->skb = NULL;
	/* pairs with the acquire in ipoib_cm_tx_full() */
	smp_store_release(&conn->tx_tail, conn->tx_tail + 1);
	if (atomic_read(&priv->cm.tx_stopped) &&
	    conn->tx_head - conn->tx_tail <= priv->sendq_size / 2 &&
	    atomic_dec_if_positive(&priv->cm.tx_stopped) >= 0 &&
	    test_bit(IPOIB_FLAG_QP_READY, &priv->flags))
		netif_wake_queue(priv->dev);
}
