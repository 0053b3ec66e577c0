// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode's receive side. RFC 4755 leaves receive resources to
 * us: with an SRQ, one ring serves every connection, so receive memory
 * does not grow with the number of peers; without one (or cm_srq=0) each
 * connection gets a ring of its own, at most max_nonsrq_conn_qp of them.
 * A slot is the pages for 64 KiB (16 of 4 KiB), in which a message (the
 * encapsulation header, then up to 65520 octets of IP) lands in order. Each ring has a page pool:
 * the pages a message filled go up the stack as fragments and come back
 * to the pool when the stack is done with them.
 *
 * A receive's wr_id names its slot, its ring (0: the SRQ, n: nonsrq[n-1])
 * and the ring's generation, so a completion never needs wc->qp and one
 * left over from a closed ring cannot land in the ring reusing its slot.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "ipoib.h"
#include "ipoib_cm.h"
#include "ipoib_compat.h"

#define IPOIB_CM_WR_RING_SHIFT	16
#define IPOIB_CM_WR_GEN_SHIFT	32
#define IPOIB_CM_RX_COPYBREAK	256
/* an skb's data offset: the IP header 16-byte aligned behind 4 octets */
#define IPOIB_CM_RX_ALIGN	12
/*
 * A ring's pool keeps up to one idle page per slot (a sixteenth of the
 * ring), at least this many, beside the 128 it caches for NAPI; a burst
 * coming back beyond that goes to the page allocator.
 */
#define IPOIB_CM_POOL_MIN	(4 * IPOIB_CM_RX_PAGES)

static void ipoib_cm_free_rx_buf(struct ipoib_dev *priv,
				 struct ipoib_cm_rx_ring *ring,
				 struct ipoib_cm_rx_buf *rx)
{
	unsigned int i;

	for (i = 0; i < IPOIB_CM_RX_PAGES; i++) {
		if (!rx->pages[i])
			continue;
		ipoib_rx_pool_put(priv, ring->pool, rx->pages[i],
				  rx->mapping[i]);
		rx->pages[i] = NULL;
	}
}

/* Fill a slot, in process context, before the ring posts anything. */
static int ipoib_cm_fill_rx_buf(struct ipoib_dev *priv,
				struct ipoib_cm_rx_ring *ring,
				struct ipoib_cm_rx_buf *rx)
{
	unsigned int i;

	for (i = 0; i < IPOIB_CM_RX_PAGES; i++) {
		rx->pages[i] = ipoib_rx_pool_get(priv, ring->pool, GFP_KERNEL,
						 &rx->mapping[i]);
		if (!rx->pages[i])
			return -ENOMEM;
	}
	return 0;
}

/* Post slot @id of @ring to the SRQ or to the ring's own QP. */
static int ipoib_cm_post_rx(struct ipoib_dev *priv,
			    struct ipoib_cm_rx_ring *ring, unsigned int id)
{
	struct ipoib_cm_rx_buf *rx = &ring->buf[id];
	struct ib_sge sge[IPOIB_CM_RX_PAGES];
	struct ib_recv_wr wr = {
		.wr_id = id | IPOIB_OP_CM | IPOIB_OP_RECV |
			 (u64)ring->index << IPOIB_CM_WR_RING_SHIFT |
			 (u64)ring->gen << IPOIB_CM_WR_GEN_SHIFT,
		.sg_list = sge,
		.num_sge = IPOIB_CM_RX_PAGES,
	};
	unsigned int i;

	for (i = 0; i < IPOIB_CM_RX_PAGES; i++) {
		sge[i].addr = rx->mapping[i];
		sge[i].length = PAGE_SIZE;
		sge[i].lkey = priv->pd->local_dma_lkey;
	}
	if (!ring->qp)
		return ib_post_srq_recv(priv->cm.srq, &wr, NULL);
	return ib_post_recv(ring->qp, &wr, NULL);
}

/* The ring a completion belongs to, or NULL if that ring is gone (NAPI). */
static struct ipoib_cm_rx_ring *ipoib_cm_rx_ring_of(struct ipoib_dev *priv,
						    u64 wr_id)
{
	unsigned int index = (wr_id & (IPOIB_OP_CM - 1)) >>
			     IPOIB_CM_WR_RING_SHIFT;
	struct ipoib_cm_rx_ring *ring;

	if (!index)
		ring = &priv->cm.srq_ring;
	else if (index <= priv->cm.nonsrq_max)
		ring = rcu_dereference(priv->cm.nonsrq[index - 1]);
	else
		return NULL;
	/* the SRQ's too: a connection leaked by a failed drain may complete */
	if (!ring ||
	    READ_ONCE(ring->gen) != (u16)(wr_id >> IPOIB_CM_WR_GEN_SHIFT))
		return NULL;
	return ring;
}

/*
 * A checksum-pending packet (ipoib_wire.h): the sender left its checksum
 * to whoever needs it, and the RC transport vouched for every octet.
 * Hand it up as if our own stack had sent it: CHECKSUM_PARTIAL, completed
 * only if it is forwarded to a device that wants it complete (or at once,
 * if rx-checksumming is off now).
 */
static bool ipoib_cm_rx_csum(struct ipoib_dev *priv, struct sk_buff *skb,
			     __be32 imm)
{
	unsigned int hlen = sizeof(struct ipv6hdr);
	u16 start, offset;

	if (ipoib_cm_csum_imm_parse((const u8 *)&imm, skb->len, &start,
				    &offset) ||
	    !pskb_may_pull(skb, start + offset + sizeof(__sum16)))
		goto bad;
	/* only the IP payload can hold a checksum left to us */
	if (skb->protocol == htons(ETH_P_IP))
		hlen = ip_hdr(skb)->ihl * 4;
	else if (skb->protocol != htons(ETH_P_IPV6))
		goto bad;
	if (start < hlen || !skb_partial_csum_set(skb, start, offset))
		goto bad;
	atomic_long_inc(&priv->counters.cm_rx_csum_pending);
	/*
	 * rx-checksumming turned off since the peer was told to send these:
	 * complete the checksum here, and the stack checks it as it checks
	 * every other packet then.
	 */
	if (unlikely(!(priv->dev->features & NETIF_F_RXCSUM)) &&
	    skb_checksum_help(skb))
		goto bad;
	return true;
bad:
	ipoib_data_dbg(ipoib_cm_data_debug_level, priv,
		       "connected mode: dropped a %u-octet packet whose checksum immediate data 0x%08x is out of bounds\n",
		       skb->len, be32_to_cpu(imm));
	atomic_long_inc(&priv->counters.cm_rx_bad_csum_imm);
	return false;
}

/*
 * Turn a filled slot into an skb of the @len octets received. Small
 * messages are copied out of the first page; larger ones take the pages
 * they filled as fragments (the encapsulation header copied), which are
 * replaced from the pool first: if no page can be had, NULL, and the slot
 * is reposted as it was. NAPI only: the pool's one consumer.
 */
static struct sk_buff *ipoib_cm_rx_take(struct ipoib_dev *priv,
					struct ipoib_cm_rx_ring *ring,
					struct ipoib_cm_rx_buf *rx,
					unsigned int len)
{
	unsigned int n = len <= IPOIB_CM_RX_COPYBREAK ? 0 :
			 DIV_ROUND_UP(len, PAGE_SIZE);
	struct page *pages[IPOIB_CM_RX_PAGES];
	u64 mapping[IPOIB_CM_RX_PAGES];
	struct sk_buff *skb;
	unsigned int i;

	skb = napi_alloc_skb(&priv->napi, IPOIB_CM_RX_ALIGN +
			     (n ? IPOIB_ENCAP_LEN : len));
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, (IPOIB_CM_RX_ALIGN - NET_IP_ALIGN) & 15);
	if (!n) {
		ipoib_rx_copy(priv, skb, page_address(rx->pages[0]),
			      rx->mapping[0], len);
		return skb;
	}
	for (i = 0; i < n; i++) {
		pages[i] = ipoib_rx_pool_get(priv, ring->pool, GFP_ATOMIC,
					     &mapping[i]);
		if (unlikely(!pages[i])) {
			while (i--)
				ipoib_rx_pool_put(priv, ring->pool, pages[i],
						  mapping[i]);
			dev_kfree_skb_any(skb);
			return NULL;
		}
	}
	for (i = 0; i < n; i++) {
		unsigned int frag = min_t(unsigned int, len, PAGE_SIZE);
		unsigned int off = i ? 0 : IPOIB_ENCAP_LEN;

		ipoib_rx_pool_release(priv, rx->mapping[i], frag);
		if (!i)
			skb_put_data(skb, page_address(rx->pages[0]),
				     IPOIB_ENCAP_LEN);
		skb_add_rx_frag(skb, i, rx->pages[i], off, frag - off,
				PAGE_SIZE);
		rx->pages[i] = pages[i];
		rx->mapping[i] = mapping[i];
		len -= frag;
	}
	skb_mark_for_recycle(skb);
	return skb;
}

/* A filled slot: its message to the stack, or dropped and counted. */
static void ipoib_cm_deliver(struct ipoib_dev *priv,
			     struct ipoib_cm_rx_ring *ring,
			     struct ipoib_cm_rx_buf *rx, const struct ib_wc *wc)
{
	struct net_device *dev = priv->dev;
	struct sk_buff *skb;
	u16 type;

	if (unlikely(wc->byte_len < IPOIB_ENCAP_LEN)) {
		ipoib_data_dbg(ipoib_cm_data_debug_level, priv,
			       "connected mode: dropped a %u-octet message\n",
			       wc->byte_len);
		atomic_long_inc(&priv->counters.rx_short);
		DEV_STATS_INC(dev, rx_dropped);
		return;
	}
	skb = ipoib_cm_rx_take(priv, ring, rx,
			       min_t(unsigned int, wc->byte_len,
				     IPOIB_CM_RX_PAGES * PAGE_SIZE));
	if (unlikely(!skb)) {
		DEV_STATS_INC(dev, rx_dropped);
		atomic_long_inc(&priv->counters.rx_no_buf);
		return;
	}
	ipoib_encap_parse(skb->data, IPOIB_ENCAP_LEN, &type);
	if (unlikely(!ipoib_type_known(type))) {
		ipoib_data_dbg(ipoib_cm_data_debug_level, priv,
			       "connected mode: dropped Type 0x%04x\n", type);
		atomic_long_inc(&priv->counters.rx_bad_type);
		DEV_STATS_INC(dev, rx_dropped);
		dev_kfree_skb_any(skb);
		return;
	}
	ipoib_rx_headers(skb, type);
	skb->pkt_type = PACKET_HOST;
	skb->dev = dev;
	if ((wc->wc_flags & IB_WC_WITH_IMM) &&
	    unlikely(!ipoib_cm_rx_csum(priv, skb, wc->ex.imm_data))) {
		DEV_STATS_INC(dev, rx_dropped);
		dev_kfree_skb_any(skb);
		return;
	}
	dev_sw_netstats_rx_add(dev, skb->len);
	napi_gro_receive(&priv->napi, skb);
}

/* NAPI: one receive of a channel's own ring is back and not reposted. */
static void ipoib_cm_rx_put(struct ipoib_cm_rx_ring *ring)
{
	/* fully ordered: pairs with ipoib_cm_rx_chan_drain() */
	if (atomic_dec_and_test(&ring->posted) && READ_ONCE(ring->closing))
		ipoib_cm_unhold(ring->chan, IPOIB_CM_HOLD_RX);
}

/*
 * NAPI: a receive completed on some channel. The SRQ's slot always goes
 * back; a channel's own ring stops reposting once it fails or drains, so
 * that its count of posted receives comes down to zero.
 */
void ipoib_cm_handle_rx(struct ipoib_dev *priv, struct ib_wc *wc)
{
	unsigned int id = wc->wr_id & (BIT(IPOIB_CM_WR_RING_SHIFT) - 1);
	struct ipoib_cm_rx_ring *ring;
	bool ok = wc->status == IB_WC_SUCCESS;

	/* the release work waits for a grace period before freeing a ring */
	rcu_read_lock();
	ring = ipoib_cm_rx_ring_of(priv, wc->wr_id);
	if (unlikely(!ring || id >= ring->size)) {
		ipoib_warn_rl(priv, "CM receive completion for a closed ring (wr_id 0x%llx)\n",
			      wc->wr_id);
		goto out;
	}
	if (unlikely(!ok)) {
		/* a channel failing under a receive; the buffer is fine */
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			ipoib_warn_rl(priv, "CM receive error %d (vendor 0x%x)\n",
				      wc->status, wc->vendor_err);
			DEV_STATS_INC(priv->dev, rx_errors);
		}
	} else {
		ipoib_cm_rx_seen(priv, wc->qp);
		ipoib_cm_deliver(priv, ring, &ring->buf[id], wc);
	}
	if (ring->qp && (!ok || READ_ONCE(ring->closing))) {
		/* its QP is going; a real error ends the channel */
		if (!ok && wc->status != IB_WC_WR_FLUSH_ERR)
			ipoib_cm_async(ring->chan, IPOIB_CM_ASYNC_FAIL);
		ipoib_cm_rx_put(ring);
		goto out;
	}
	if (unlikely(ipoib_test_rx_stalled(priv)) && !ring->qp) {
		atomic_long_dec(&priv->counters.cm_rx_buffers);
		ipoib_cm_free_rx_buf(priv, ring, &ring->buf[id]);
		goto out;
	}
	if (unlikely(ipoib_cm_post_rx(priv, ring, id))) {
		ipoib_warn_rl(priv, "cannot repost CM receive buffer %u\n", id);
		/* a channel's ring that stops refilling ends it */
		if (ring->qp) {
			ipoib_cm_async(ring->chan, IPOIB_CM_ASYNC_FAIL);
			ipoib_cm_rx_put(ring);
		}
	}
out:
	rcu_read_unlock();
}

static void ipoib_cm_free_ring(struct ipoib_dev *priv,
			       struct ipoib_cm_rx_ring *ring)
{
	unsigned int i;

	for (i = 0; ring->buf && i < ring->size; i++) {
		if (ring->buf[i].pages[0])
			atomic_long_dec(&priv->counters.cm_rx_buffers);
		ipoib_cm_free_rx_buf(priv, ring, &ring->buf[i]);
	}
	kvfree(ring->buf);
	if (ring->pool)
		page_pool_destroy(ring->pool);
	ring->buf = NULL;
	ring->pool = NULL;
	ring->size = 0;
}

/*
 * Allocate @ring's slots, then post them all: once one is posted, NAPI
 * may take pages from the pool, so the filling must be over by then.
 */
static int ipoib_cm_fill_ring(struct ipoib_dev *priv,
			      struct ipoib_cm_rx_ring *ring)
{
	struct page_pool *pool;
	unsigned int i;
	int ret;

	ring->size = priv->recvq_size;
	ring->buf = kvcalloc(ring->size, sizeof(*ring->buf), GFP_KERNEL);
	if (!ring->buf)
		return -ENOMEM;
	pool = ipoib_rx_pool_create(priv, max_t(unsigned int, ring->size,
						IPOIB_CM_POOL_MIN));
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	ring->pool = pool;
	for (i = 0; i < ring->size; i++) {
		ret = ipoib_cm_fill_rx_buf(priv, ring, &ring->buf[i]);
		if (ring->buf[i].pages[0])
			atomic_long_inc(&priv->counters.cm_rx_buffers);
		if (ret)
			return ret;
	}
	for (i = 0; i < ring->size; i++) {
		atomic_inc(&ring->posted);
		ret = ipoib_cm_post_rx(priv, ring, i);
		if (ret) {
			atomic_dec(&ring->posted);
			return ret;
		}
	}
	return 0;
}

/* ndo_stop, after the last connection: the SRQ and its buffers. */
void ipoib_cm_rx_close(struct ipoib_dev *priv)
{
	struct ib_wc wc[16];

	if (priv->cm.srq) {
		ib_destroy_srq(priv->cm.srq);
		priv->cm.srq = NULL;
	}
	/* stale completions must not meet the next open's ring */
	while (ib_poll_cq(priv->cm.recv_cq, ARRAY_SIZE(wc), wc) > 0)
		;
	ipoib_cm_free_ring(priv, &priv->cm.srq_ring);
}

/*
 * ndo_stop, NAPI off, when connections could not be drained: they and the
 * SRQ are leaked, still posted; the next open's ring starts afresh under
 * a new generation, which their completions do not carry.
 */
void ipoib_cm_rx_forget(struct ipoib_dev *priv)
{
	struct ipoib_cm_rx_ring *ring = &priv->cm.srq_ring;

	WRITE_ONCE(ring->gen, ring->gen + 1);
	priv->cm.srq = NULL;
	ring->buf = NULL;
	ring->pool = NULL;
	ring->size = 0;
}

/* ndo_open: the SRQ and a buffer in each of its slots. */
int ipoib_cm_rx_open(struct ipoib_dev *priv)
{
	struct ib_srq_init_attr srq_attr = {
		.attr = {
			.max_wr = priv->recvq_size,
			.max_sge = IPOIB_CM_RX_PAGES,
		},
	};
	int ret;

	if (!priv->cm.use_srq)
		return 0;
	priv->cm.srq = ib_create_srq(priv->pd, &srq_attr);
	if (IS_ERR(priv->cm.srq)) {
		ret = PTR_ERR(priv->cm.srq);
		priv->cm.srq = NULL;
		return ret;
	}
	ret = ipoib_cm_fill_ring(priv, &priv->cm.srq_ring);
	if (ret)
		ipoib_cm_rx_close(priv);
	return ret;
}

/*
 * No SRQ: a ring of its own for @chan, whose QP is in INIT (its set-up
 * work). -ENOSPC when max_nonsrq_conn_qp rings are in use. On failure too
 * chan->rx may be set: the channel's drain waits for what was posted.
 */
int ipoib_cm_rx_chan_open(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;
	struct ipoib_cm_rx_ring *ring;
	int slot;

	slot = ida_alloc_max(&priv->cm.nonsrq_ida, priv->cm.nonsrq_max - 1,
			     GFP_KERNEL);
	if (slot == -ENOSPC)
		ipoib_warn_rl(priv, "CM: all %u receive queues in use (max_nonsrq_conn_qp)\n",
			      priv->cm.nonsrq_max);
	if (slot < 0)
		return slot;
	ring = kzalloc(sizeof(*ring), GFP_KERNEL);
	if (!ring) {
		ida_free(&priv->cm.nonsrq_ida, slot);
		return -ENOMEM;
	}
	ring->qp = chan->qp;
	ring->chan = chan;
	ring->index = slot + 1;
	spin_lock_bh(&priv->cm.lock);
	ring->gen = ++priv->cm.nonsrq_gen;
	spin_unlock_bh(&priv->cm.lock);
	rcu_assign_pointer(priv->cm.nonsrq[slot], ring);
	chan->rx = ring;
	return ipoib_cm_fill_ring(priv, ring);
}

/*
 * The channel drains (before its QP enters the error state, which
 * flushes every posted receive): no more reposts; the RX hold goes when
 * the last receive is back, here if none is out.
 */
void ipoib_cm_rx_chan_drain(struct ipoib_cm_chan *chan)
{
	struct ipoib_cm_rx_ring *ring = chan->rx;

	WRITE_ONCE(ring->closing, true);
	smp_mb(); /* closing before posted; pairs with ipoib_cm_rx_put() */
	if (!atomic_read(&ring->posted))
		ipoib_cm_unhold(chan, IPOIB_CM_HOLD_RX);
}

/* Released: completions naming the ring find nothing after a grace period. */
void ipoib_cm_rx_chan_unpublish(struct ipoib_cm_chan *chan)
{
	RCU_INIT_POINTER(chan->priv->cm.nonsrq[chan->rx->index - 1], NULL);
}

/* ... and after it: the buffers and the slot go. */
void ipoib_cm_rx_chan_free(struct ipoib_cm_chan *chan)
{
	struct ipoib_dev *priv = chan->priv;
	struct ipoib_cm_rx_ring *ring = chan->rx;

	chan->rx = NULL;
	ipoib_cm_free_ring(priv, ring);
	ida_free(&priv->cm.nonsrq_ida, ring->index - 1);
	kfree(ring);
}
