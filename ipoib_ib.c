// SPDX-License-Identifier: GPL-2.0
/*
 * The UD transport of an interface: protection domain, completion queues
 * and the one UD QP whose number is in our link-layer address
 * (RFC 4391 s9.1.1), and the QP's state changes on open and stop.
 */
#include <linux/etherdevice.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <net/addrconf.h>
#include <net/dst_metadata.h>
#include <net/icmp.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"
#include "ipoib_compat.h"

#define IPOIB_POLL_BATCH	16
/* an HCA that has not flushed a QP in error by then never will */
#define IPOIB_DRAIN_LIMIT	(30 * HZ)
/*
 * What the HCA writes into a receive's head slot (mapped once, with the
 * ring); the packet itself goes to a page of the ring's page pool.
 */
#define IPOIB_RX_HEAD_LEN	(IPOIB_GRH_LEN + IPOIB_ENCAP_LEN)
/* keeps a copied IP header 16-byte aligned behind GRH + encapsulation */
#define IPOIB_RX_ALIGN		4
/* smaller packets (ACKs, ARP) are copied and the page stays in the ring */
#define IPOIB_RX_COPYBREAK	256

static int ipoib_poll(struct napi_struct *napi, int budget);

/* Both CQs feed one NAPI context. */
static void ipoib_cq_event(struct ib_cq *cq, void *ctx)
{
	struct ipoib_dev *priv = ctx;

	napi_schedule(&priv->napi);
}

static struct ib_cq *ipoib_create_cq(struct ipoib_dev *priv,
				     unsigned int entries)
{
	struct ib_cq_init_attr attr = {
		.cqe = entries,
		.comp_vector = priv->ca->num_comp_vectors ?
			       priv->port % priv->ca->num_comp_vectors : 0,
	};

	return ib_create_cq(priv->ca, ipoib_cq_event, NULL, priv, &attr);
}

static void ipoib_ah_release(struct kref *ref)
{
	struct ipoib_ah *ah = container_of(ref, struct ipoib_ah, ref);
	struct ipoib_dev *priv = ah->priv;

	/* the last put may come from NAPI: destroy in process context */
	llist_add(&ah->dead, &priv->dead_ahs);
	queue_work(priv->wq, &priv->ah_reap_work);
}

void ipoib_ah_put(struct ipoib_ah *ah)
{
	if (ah)
		kref_put(&ah->ref, ipoib_ah_release);
}

static void ipoib_ah_put_rcu(struct rcu_head *head)
{
	ipoib_ah_put(container_of(head, struct ipoib_ah, rcu));
}

/*
 * The owner's reference, once a pointer to @ah that RCU readers may have
 * seen is gone: they take references of their own within the grace
 * period. Each AH has one owner, so this runs at most once per AH.
 */
void ipoib_ah_put_deferred(struct ipoib_ah *ah)
{
	if (ah)
		call_rcu(&ah->rcu, ipoib_ah_put_rcu);
}

void ipoib_ah_reap(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      ah_reap_work);
	struct llist_node *list = llist_del_all(&priv->dead_ahs);
	struct ipoib_ah *ah, *tmp;

	llist_for_each_entry_safe(ah, tmp, list, dead) {
		rdma_destroy_ah(ah->ah, RDMA_DESTROY_AH_SLEEPABLE);
		kfree(ah);
	}
}

struct ipoib_ah *ipoib_ah_create(struct ipoib_dev *priv,
				 struct rdma_ah_attr *attr)
{
	struct ipoib_ah *ah;

	ah = kzalloc(sizeof(*ah), GFP_KERNEL);
	if (!ah)
		return ERR_PTR(-ENOMEM);
	ah->ah = rdma_create_ah(priv->pd, attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah->ah)) {
		int ret = PTR_ERR(ah->ah);

		kfree(ah);
		return ERR_PTR(ret);
	}
	ah->priv = priv;
	kref_init(&ah->ref);
	return ah;
}

int ipoib_ib_init(struct ipoib_dev *priv)
{
	struct ib_qp_init_attr qp_attr = {
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_UD,
		.cap = {
			.max_recv_sge = 2,
		},
	};
	int ret;

	priv->ud_tx_sge = clamp_t(u32, priv->ca->attrs.max_send_sge, 1,
				  IPOIB_UD_TX_SGE);
	/* software devices (rxe, siw) take each post as it comes */
	priv->hw_doorbell = !ib_uses_virt_dma(priv->ca);
	qp_attr.cap.max_send_sge = priv->ud_tx_sge;
	priv->sendq_size = ipoib_sendq_size;
	priv->recvq_size = ipoib_recvq_size;

	priv->pd = ib_alloc_pd(priv->ca, 0);
	if (IS_ERR(priv->pd)) {
		ret = PTR_ERR(priv->pd);
		netdev_err(priv->dev, "cannot allocate PD: %pe\n", priv->pd);
		goto out;
	}

	priv->send_cq = ipoib_create_cq(priv, priv->sendq_size);
	if (IS_ERR(priv->send_cq)) {
		ret = PTR_ERR(priv->send_cq);
		netdev_err(priv->dev, "cannot create send CQ (%u entries): %pe\n",
			   priv->sendq_size, priv->send_cq);
		goto out_pd;
	}

	priv->recv_cq = ipoib_create_cq(priv, priv->recvq_size);
	if (IS_ERR(priv->recv_cq)) {
		ret = PTR_ERR(priv->recv_cq);
		netdev_err(priv->dev, "cannot create receive CQ (%u entries): %pe\n",
			   priv->recvq_size, priv->recv_cq);
		goto out_send_cq;
	}

	qp_attr.send_cq = priv->send_cq;
	qp_attr.recv_cq = priv->recv_cq;
	qp_attr.cap.max_send_wr = priv->sendq_size;
	qp_attr.cap.max_recv_wr = priv->recvq_size;
	priv->qp = ib_create_qp(priv->pd, &qp_attr);
	if (IS_ERR(priv->qp)) {
		ret = PTR_ERR(priv->qp);
		netdev_err(priv->dev, "cannot create UD QP: %pe\n", priv->qp);
		goto out_recv_cq;
	}
	ipoib_dbg(priv, 1, "UD QP 0x%06x created\n", priv->qp->qp_num);
	netif_napi_add(priv->dev, &priv->napi, ipoib_poll);
	return 0;

out_recv_cq:
	ib_destroy_cq(priv->recv_cq);
out_send_cq:
	ib_destroy_cq(priv->send_cq);
out_pd:
	ib_dealloc_pd(priv->pd);
out:
	priv->qp = NULL;
	priv->recv_cq = NULL;
	priv->send_cq = NULL;
	priv->pd = NULL;
	return ret;
}

void ipoib_ib_cleanup(struct ipoib_dev *priv)
{
	if (!priv->qp)
		return;
	netif_napi_del(&priv->napi);
	ib_destroy_qp(priv->qp);
	ib_destroy_cq(priv->recv_cq);
	ib_destroy_cq(priv->send_cq);
	ib_dealloc_pd(priv->pd);
	priv->qp = NULL;
	priv->recv_cq = NULL;
	priv->send_cq = NULL;
	priv->pd = NULL;
}

static int ipoib_qp_to(struct ipoib_dev *priv, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask = IB_QP_STATE;
	int ret;

	switch (state) {
	case IB_QPS_INIT:
		attr.pkey_index = priv->pkey_index;
		attr.port_num = priv->port;
		attr.qkey = priv->qkey;
		mask |= IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY;
		break;
	case IB_QPS_RTS:
		attr.sq_psn = 0;
		mask |= IB_QP_SQ_PSN;
		break;
	default:
		break;
	}
	ret = ib_modify_qp(priv->qp, &attr, mask);
	if (ret)
		netdev_err(priv->dev, "UD QP 0x%06x to state %d failed: %d\n",
			   priv->qp->qp_num, state, ret);
	return ret;
}

/*
 * RFC 4391 s9.1.2: the Q_Key of the broadcast group MUST be used for all
 * traffic of the link; the QP's Q_Key is what receives are checked
 * against, and what a send with a controlled Q_Key (high bit set) carries.
 * Called with the group's Q_Key when it is joined, or joined again after
 * the SA lost it (under mcast_mutex); a UD QP in RTS takes a new Q_Key
 * in place.
 */
int ipoib_ib_set_qkey(struct ipoib_dev *priv, u32 qkey)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS, .qkey = qkey };
	int ret;

	if (qkey == priv->qkey)
		return 0;
	ret = ib_modify_qp(priv->qp, &attr, IB_QP_STATE | IB_QP_QKEY);
	if (ret) {
		netdev_err(priv->dev, "UD QP 0x%06x cannot take Q_Key 0x%08x: %d\n",
			   priv->qp->qp_num, qkey, ret);
		return ret;
	}
	netdev_info(priv->dev, "Q_Key 0x%08x (the broadcast group's)\n", qkey);
	WRITE_ONCE(priv->qkey, qkey);
	return 0;
}

/* a slot per cache line the DMA API may write back, 64 octets at least */
static unsigned int ipoib_rx_head_slot(void)
{
	return max_t(unsigned int, 64, dma_get_cache_alignment());
}

static unsigned int ipoib_rx_heads_per_page(void)
{
	return PAGE_SIZE / ipoib_rx_head_slot();
}

static void *ipoib_rx_head(struct ipoib_dev *priv, unsigned int id)
{
	unsigned int n = ipoib_rx_heads_per_page();

	return page_address(priv->rx_heads[id / n]) +
	       id % n * ipoib_rx_head_slot();
}

static u64 ipoib_rx_head_mapping(struct ipoib_dev *priv, unsigned int id)
{
	unsigned int n = ipoib_rx_heads_per_page();

	return priv->rx_heads_mapping[id / n] + id % n * ipoib_rx_head_slot();
}

static int ipoib_post_recv(struct ipoib_dev *priv, unsigned int id)
{
	struct ipoib_rx_buf *rx = &priv->rx_ring[id];
	struct ib_sge sge[2] = {
		{
			.addr = ipoib_rx_head_mapping(priv, id),
			.length = IPOIB_RX_HEAD_LEN,
			.lkey = priv->pd->local_dma_lkey,
		}, {
			.addr = rx->page_mapping,
			.length = PAGE_SIZE,
			.lkey = priv->pd->local_dma_lkey,
		},
	};
	struct ib_recv_wr wr = {
		.wr_id = id | IPOIB_OP_RECV,
		.sg_list = sge,
		.num_sge = 2,
	};

	return ib_post_recv(priv->qp, &wr, NULL);
}

/*
 * On an HCA that does DMA, a pool maps its pages once, for their life in
 * it, where it unmaps those still out in the stack when it is destroyed;
 * elsewhere a page is mapped while it is in a ring (for a software HCA,
 * rxe or softib, that costs nothing: it takes kernel addresses).
 */
static bool ipoib_rx_pool_maps(struct ipoib_dev *priv)
{
	return IPOIB_POOL_MAY_MAP && !ib_uses_virt_dma(priv->ca);
}

/*
 * A pool of @size pages for one receive ring, allocated from by one
 * context at a time: the ring's NAPI, or process context while the ring
 * has nothing posted. Its pages come back when the stack frees the skbs
 * that took them (skb_mark_for_recycle).
 */
struct page_pool *ipoib_rx_pool_create(struct ipoib_dev *priv,
				       unsigned int size)
{
	struct page_pool_params pp = {
		.order = 0,
		.pool_size = size,
		.nid = NUMA_NO_NODE,
		.dma_dir = DMA_FROM_DEVICE,
	};

	if (ipoib_rx_pool_maps(priv)) {
		pp.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV;
		pp.dev = priv->ca->dma_device;
		pp.max_len = PAGE_SIZE;
	}
	return page_pool_create(&pp);
}

/*
 * A page from @pool, mapped for the HCA at *@mapping; @gfp as for pages.
 * On failure NULL, and *@mapping is as it was: callers refill a slot
 * whose old page must stay in place if no new one comes.
 */
struct page *ipoib_rx_pool_get(struct ipoib_dev *priv, struct page_pool *pool,
			       gfp_t gfp, u64 *mapping)
{
	struct page *page;
	u64 dma;

	if (!gfpflags_allow_blocking(gfp) && ipoib_test_rx_nopage_now())
		return NULL;
	page = page_pool_alloc_pages(pool, gfp | __GFP_NOWARN);
	if (!page)
		return NULL;
	if (ipoib_rx_pool_maps(priv)) {
		*mapping = page_pool_get_dma_addr(page);
		return page;
	}
	dma = ib_dma_map_page(priv->ca, page, 0, PAGE_SIZE, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(priv->ca, dma)) {
		page_pool_put_full_page(pool, page, false);
		return NULL;
	}
	*mapping = dma;
	return page;
}

/* The HCA is done with the page at @mapping: @len octets for the CPU. */
void ipoib_rx_pool_release(struct ipoib_dev *priv, u64 mapping,
			   unsigned int len)
{
	/* the pool's pages stay mapped; an unmap syncs by itself */
	if (ipoib_rx_pool_maps(priv))
		ib_dma_sync_single_for_cpu(priv->ca, mapping, len,
					   DMA_FROM_DEVICE);
	else
		ib_dma_unmap_page(priv->ca, mapping, PAGE_SIZE,
				  DMA_FROM_DEVICE);
}

/* A page the stack never saw goes back to @pool (not from hard IRQ). */
void ipoib_rx_pool_put(struct ipoib_dev *priv, struct page_pool *pool,
		       struct page *page, u64 mapping)
{
	if (!ipoib_rx_pool_maps(priv))
		ib_dma_unmap_page(priv->ca, mapping, PAGE_SIZE,
				  DMA_FROM_DEVICE);
	page_pool_put_full_page(pool, page, false);
}

/* A page for slot @id: @gfp is GFP_KERNEL when filling, else atomic. */
static int ipoib_rx_page_fill(struct ipoib_dev *priv, unsigned int id,
			      gfp_t gfp)
{
	struct ipoib_rx_buf *rx = &priv->rx_ring[id];
	struct page *page;

	/* failing, the slot keeps its page: it is posted again with it */
	page = ipoib_rx_pool_get(priv, priv->rx_pool, gfp, &rx->page_mapping);
	if (!page)
		return -ENOMEM;
	rx->page = page;
	return 0;
}

/* Give back the page of rx_ring[id] (ring teardown, flushed receives). */
static void ipoib_free_rx_buf(struct ipoib_dev *priv, unsigned int id)
{
	struct ipoib_rx_buf *rx = &priv->rx_ring[id];

	if (rx->page) {
		ipoib_rx_pool_put(priv, priv->rx_pool, rx->page,
				  rx->page_mapping);
		rx->page = NULL;
	}
}

static bool ipoib_gid_is_mcast(const union ib_gid *gid)
{
	return gid->raw[0] == 0xff;
}

/*
 * Classify by the GRH area (RFC 4391 s6: handle packets with or without a
 * GRH). Returns false for our own multicast coming back: with rxe every
 * host numbers QPs alike, so the source GID must match as well.
 */
static bool ipoib_rx_classify(struct ipoib_dev *priv, struct sk_buff *skb,
			      const struct ib_wc *wc)
{
	enum rdma_network_type type = RDMA_NETWORK_IB;
	union ib_gid sgid, dgid, ours;

	skb->pkt_type = PACKET_HOST;
	if (!(wc->wc_flags & IB_WC_GRH))
		return true;
	if (wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE)
		type = wc->network_hdr_type;
	if (ib_get_gids_from_rdma_hdr((union rdma_network_hdr *)skb->data,
				      type, &sgid, &dgid))
		return true;
	if (!ipoib_gid_is_mcast(&dgid))
		return true;
	if (wc->src_qp == priv->qp->qp_num) {
		ipoib_local_gid(priv, &ours);
		if (!memcmp(&sgid, &ours, sizeof(sgid)))
			return false;
	}
	if (!memcmp(dgid.raw, priv->dev->broadcast + 4, sizeof(dgid.raw)))
		skb->pkt_type = PACKET_BROADCAST;
	else
		skb->pkt_type = PACKET_MULTICAST;
	return true;
}

static void ipoib_rx_drop(struct ipoib_dev *priv, struct sk_buff *skb,
			  atomic_long_t *reason)
{
	atomic_long_inc(reason);
	DEV_STATS_INC(priv->dev, rx_dropped);
	dev_kfree_skb_any(skb);
}

/*
 * Copy @len octets from the CPU's side of a mapping owned by the HCA,
 * then give it back to the HCA.
 */
void ipoib_rx_copy(struct ipoib_dev *priv, struct sk_buff *skb,
		   const void *from, u64 mapping, unsigned int len)
{
	ib_dma_sync_single_for_cpu(priv->ca, mapping, len, DMA_FROM_DEVICE);
	skb_put_data(skb, from, len);
	ib_dma_sync_single_for_device(priv->ca, mapping, len, DMA_FROM_DEVICE);
}

/*
 * The received packet into @skb: copied if small (the page stays with
 * its slot), else the page becomes the skb's fragment, going back to the
 * pool when the skb is freed. Returns false if the pool had no page for
 * the slot: the packet is dropped and the slot posted again.
 */
static bool ipoib_rx_take_page(struct ipoib_dev *priv, unsigned int id,
			       struct sk_buff *skb, unsigned int len)
{
	struct ipoib_rx_buf *rx = &priv->rx_ring[id];
	struct page *page = rx->page;
	u64 mapping = rx->page_mapping;

	if (len <= IPOIB_RX_COPYBREAK) {
		ipoib_rx_copy(priv, skb, page_address(page), mapping, len);
		return true;
	}
	if (ipoib_rx_page_fill(priv, id, GFP_ATOMIC))
		return false;
	ipoib_rx_pool_release(priv, mapping, len);
	skb_add_rx_frag(skb, 0, page, 0, len, PAGE_SIZE);
	skb_mark_for_recycle(skb);
	return true;
}

/*
 * @skb starts at the encapsulation header of a packet of @type: a zeroed
 * pseudo header goes in front, so that packet sockets see the layout
 * transmit builds, and the stack gets the IP header.
 */
void ipoib_rx_headers(struct sk_buff *skb, u16 type)
{
	skb->protocol = htons(type);
	memset(skb_push(skb, IPOIB_PSEUDO_LEN), 0, IPOIB_PSEUDO_LEN);
	skb_reset_mac_header(skb);
	skb_pull(skb, IPOIB_HARD_LEN);
	skb_reset_network_header(skb);
}

/* A received packet, its GRH area still in front: to the stack, or dropped. */
static void ipoib_rx_deliver(struct ipoib_dev *priv, struct sk_buff *skb,
			     const struct ib_wc *wc)
{
	struct net_device *dev = priv->dev;
	u16 type;

	if (!ipoib_rx_classify(priv, skb, wc)) {
		ipoib_rx_drop(priv, skb, &priv->counters.rx_own_mcast);
		return;
	}
	skb_pull(skb, IPOIB_GRH_LEN);
	ipoib_encap_parse(skb->data, IPOIB_ENCAP_LEN, &type);
	/* RFC 4391 s6 Table 1; Reserved is ignored */
	if (unlikely(!ipoib_type_known(type))) {
		ipoib_data_dbg(ipoib_data_debug_level, priv,
			       "dropped Type 0x%04x from QPN 0x%06x: not IPv4, ARP, RARP or IPv6\n",
			       type, wc->src_qp);
		ipoib_rx_drop(priv, skb, &priv->counters.rx_bad_type);
		return;
	}
	ipoib_rx_headers(skb, type);
	skb->dev = dev;
	if ((dev->features & NETIF_F_RXCSUM) &&
	    (wc->wc_flags & IB_WC_IP_CSUM_OK))
		skb->ip_summed = CHECKSUM_UNNECESSARY;
	dev_sw_netstats_rx_add(dev, skb->len);
	if (skb->pkt_type == PACKET_MULTICAST)
		DEV_STATS_INC(dev, multicast);
	napi_gro_receive(&priv->napi, skb);
}

/* Flushed, failed, or arriving while we stop: release the buffer. */
static void ipoib_rx_failed(struct ipoib_dev *priv, const struct ib_wc *wc,
			    unsigned int id)
{
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR) {
		ipoib_warn_rl(priv, "receive error %d (vendor 0x%x)\n",
			      wc->status, wc->vendor_err);
		DEV_STATS_INC(priv->dev, rx_errors);
	}
	/* as for sends: an error while running may mean a dead QP */
	if (wc->status != IB_WC_SUCCESS &&
	    test_bit(IPOIB_FLAG_QP_READY, &priv->flags))
		ipoib_rtnl_work_queue(priv, &priv->reset_work, 0);
	ipoib_free_rx_buf(priv, id);
}

static void ipoib_handle_rx(struct ipoib_dev *priv, struct ib_wc *wc)
{
	unsigned int id = wc->wr_id & ~IPOIB_OP_RECV;
	struct sk_buff *skb;
	unsigned int len;

	if (unlikely(id >= priv->recvq_size)) {
		ipoib_warn_rl(priv, "receive completion for bad id %u\n", id);
		return;
	}
	if (unlikely(wc->status != IB_WC_SUCCESS ||
		     !test_bit(IPOIB_FLAG_QP_READY, &priv->flags))) {
		ipoib_rx_failed(priv, wc, id);
		return;
	}

	if (unlikely(wc->byte_len < IPOIB_RX_HEAD_LEN)) {
		ipoib_data_dbg(ipoib_data_debug_level, priv,
			       "dropped %u octets from QPN 0x%06x: shorter than GRH and header\n",
			       wc->byte_len, wc->src_qp);
		atomic_long_inc(&priv->counters.rx_short);
		DEV_STATS_INC(priv->dev, rx_dropped);
		goto repost;
	}
	len = min_t(unsigned int, wc->byte_len - IPOIB_RX_HEAD_LEN, PAGE_SIZE);

	/* No skb (or page): drop this packet, post its buffers again. */
	skb = napi_alloc_skb(&priv->napi, IPOIB_RX_ALIGN + IPOIB_RX_HEAD_LEN +
			     min_t(unsigned int, len, IPOIB_RX_COPYBREAK));
	if (unlikely(!skb))
		goto no_buf;
	skb_reserve(skb, (IPOIB_RX_ALIGN - NET_IP_ALIGN) & 15);
	ipoib_rx_copy(priv, skb, ipoib_rx_head(priv, id),
		      ipoib_rx_head_mapping(priv, id), IPOIB_RX_HEAD_LEN);
	if (unlikely(!ipoib_rx_take_page(priv, id, skb, len))) {
		dev_kfree_skb_any(skb);
		goto no_buf;
	}
	ipoib_rx_deliver(priv, skb, wc);
	goto repost;

no_buf:
	atomic_long_inc(&priv->counters.rx_no_buf);
	DEV_STATS_INC(priv->dev, rx_dropped);
repost:
	if (unlikely(ipoib_post_recv(priv, id)))
		ipoib_warn_rl(priv, "cannot repost receive buffer %u\n", id);
}

void ipoib_dma_unmap_skb(struct ipoib_dev *priv, struct sk_buff *skb,
			 const u64 *map, unsigned int nfrags)
{
	unsigned int i;

	ib_dma_unmap_single(priv->ca, map[0], skb_headlen(skb), DMA_TO_DEVICE);
	for (i = 0; i < nfrags; i++)
		ib_dma_unmap_page(priv->ca, map[i + 1],
				  skb_frag_size(&skb_shinfo(skb)->frags[i]),
				  DMA_TO_DEVICE);
}

/*
 * Map an skb's head and each fragment into @map and @sge, for a send:
 * how many entries, or -EIO with nothing left mapped.
 */
int ipoib_dma_map_skb(struct ipoib_dev *priv, struct sk_buff *skb, u64 *map,
		      struct ib_sge *sge)
{
	unsigned int i, nfrags = skb_shinfo(skb)->nr_frags;

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
			ipoib_dma_unmap_skb(priv, skb, map, i);
			return -EIO;
		}
		sge[i + 1].addr = map[i + 1];
		sge[i + 1].length = skb_frag_size(frag);
	}
	for (i = 0; i <= nfrags; i++)
		sge[i].lkey = priv->pd->local_dma_lkey;
	return nfrags + 1;
}

static void ipoib_handle_tx(struct ipoib_dev *priv, struct ib_wc *wc,
			    struct ipoib_tx_done *done)
{
	unsigned int id = wc->wr_id;
	struct ipoib_tx_buf *tx;

	if (unlikely(id >= priv->sendq_size)) {
		ipoib_warn_rl(priv, "send completion for bad id %u\n", id);
		return;
	}
	tx = &priv->tx_ring[id];
	ipoib_dma_unmap_skb(priv, tx->skb, tx->mapping,
			    skb_shinfo(tx->skb)->nr_frags);
	done->pkts++;
	done->bytes += tx->skb->len;
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			ipoib_warn_rl(priv, "send error %d (vendor 0x%x)\n",
				      wc->status, wc->vendor_err);
		/*
		 * Unless we are stopping, the QP may have left RTS (rxe
		 * flushes it when the port goes down under a send): check
		 * and recover.
		 */
		if (test_bit(IPOIB_FLAG_QP_READY, &priv->flags))
			ipoib_rtnl_work_queue(priv, &priv->reset_work, 0);
		DEV_STATS_INC(priv->dev, tx_errors);
		dev_kfree_skb_any(tx->skb);
	} else {
		dev_consume_skb_any(tx->skb);
	}
	ipoib_ah_put(tx->ah);
	tx->skb = NULL;
	tx->ah = NULL;
	/* pairs with the read in ipoib_ud_send */
	smp_store_release(&priv->tx_tail, priv->tx_tail + 1);
}

static unsigned int ipoib_tx_inflight(struct ipoib_dev *priv)
{
	/* acquire: the slot freed by a completion is seen as free */
	return READ_ONCE(priv->tx_head) - smp_load_acquire(&priv->tx_tail);
}

/* Room for one more datagram in the UD send ring. */
static bool ipoib_ud_tx_room(struct ipoib_dev *priv)
{
	return ipoib_tx_inflight(priv) < priv->sendq_size;
}

/*
 * The device queue is the UD ring's and every connection's. A waker of
 * another ring wakes it only while this one is at most half full: a
 * fuller ring has completions to come, and its drain wakes a stopped
 * queue on every poll.
 */
bool ipoib_ud_tx_slack(struct ipoib_dev *priv)
{
	return ipoib_tx_inflight(priv) <= priv->sendq_size / 2;
}

static void ipoib_drain_send_cq(struct ipoib_dev *priv,
				struct ipoib_tx_done *done)
{
	struct ib_wc wc[IPOIB_POLL_BATCH];
	int n, i;

	do {
		n = ib_poll_cq(priv->send_cq, IPOIB_POLL_BATCH, wc);
		for (i = 0; i < n; i++)
			ipoib_handle_tx(priv, &wc[i], done);
	} while (n == IPOIB_POLL_BATCH);

	smp_mb(); /* tx_tail before the queue state */
	/* never while a restart tears the datapath down */
	if (netif_queue_stopped(priv->dev) &&
	    test_bit(IPOIB_FLAG_DATAPATH, &priv->flags) &&
	    ipoib_ud_tx_slack(priv))
		netif_wake_queue(priv->dev);
}

/*
 * Bytes counted as sent whose post failed (netif tx lock held): NAPI,
 * the only completer, completes them on its next poll.
 */
void ipoib_tx_unsent(struct ipoib_dev *priv, unsigned int bytes)
{
	/* after the count of them: NAPI's clamp must see both */
	smp_mb__before_atomic();
	atomic_add(bytes, &priv->tx_bql_unsent);
	napi_schedule(&priv->napi);
}

/* NAPI: tell byte queue limits what completed, which may wake the queue. */
static void ipoib_tx_completed(struct ipoib_dev *priv,
			       struct ipoib_tx_done *done)
{
	struct netdev_queue *txq = netdev_get_tx_queue(priv->dev, 0);
	unsigned int bytes = done->bytes, pkts = done->pkts;

	if (unlikely(atomic_read(&priv->tx_bql_unsent))) {
		bytes += atomic_xchg(&priv->tx_bql_unsent, 0);
		pkts++;
	}
	if (!bytes)
		return;
#ifdef CONFIG_BQL
	/*
	 * Never more than is out (the library would BUG): a guard, since
	 * every send is counted before it is posted and the count starts
	 * again only with the rings, after a drain.
	 */
	if (unlikely(bytes > READ_ONCE(txq->dql.num_queued) -
			     txq->dql.num_completed)) {
		ipoib_warn_rl(priv, "send completions for %u octets never counted as sent\n",
			      bytes);
		bytes = READ_ONCE(txq->dql.num_queued) - txq->dql.num_completed;
	}
#endif
	netdev_tx_completed_queue(txq, pkts, bytes);
}

/* Connected mode's send completions, every connection's: all of them. */
static void ipoib_drain_cm_send_cq(struct ipoib_dev *priv)
{
	struct ib_wc wc[IPOIB_POLL_BATCH];
	int n, i;

	if (!priv->cm.send_cq)
		return;
	do {
		n = ib_poll_cq(priv->cm.send_cq, IPOIB_POLL_BATCH, wc);
		for (i = 0; i < n; i++)
			ipoib_cm_handle_tx(priv, &wc[i]);
	} while (n == IPOIB_POLL_BATCH);
}

/* Connected mode's receives (the SRQ), within the budget. */
static int ipoib_poll_cm(struct ipoib_dev *priv, int budget)
{
	struct ib_wc wc[IPOIB_POLL_BATCH];
	int done = 0, n, i;

	while (done < budget) {
		n = ib_poll_cq(priv->cm.recv_cq,
			       min(budget - done, IPOIB_POLL_BATCH), wc);
		for (i = 0; i < n; i++)
			ipoib_cm_handle_rx(priv, &wc[i]);
		done += n;
		if (n < IPOIB_POLL_BATCH)
			break;
	}
	return done;
}

static bool ipoib_rearm(struct ib_cq *cq)
{
	return cq && ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				      IB_CQ_REPORT_MISSED_EVENTS) > 0;
}

/* Arm @cq; completions already queued raise no event: poll them now. */
void ipoib_arm_cq(struct ipoib_dev *priv, struct ib_cq *cq)
{
	if (ipoib_rearm(cq)) {
		local_bh_disable();
		napi_schedule(&priv->napi);
		local_bh_enable();
	}
}

static int ipoib_poll(struct napi_struct *napi, int budget)
{
	struct ipoib_dev *priv = container_of(napi, struct ipoib_dev, napi);
	struct ipoib_tx_done sent = {};
	struct ib_wc wc[IPOIB_POLL_BATCH];
	int done = 0, n, i;

	ipoib_drain_send_cq(priv, &sent);
	ipoib_tx_completed(priv, &sent);
	ipoib_drain_cm_send_cq(priv);
	while (done < budget) {
		n = ib_poll_cq(priv->recv_cq,
			       min(budget - done, IPOIB_POLL_BATCH), wc);
		for (i = 0; i < n; i++)
			ipoib_handle_rx(priv, &wc[i]);
		done += n;
		if (n < IPOIB_POLL_BATCH)
			break;
	}
	if (priv->cm.recv_cq && done < budget)
		done += ipoib_poll_cm(priv, budget - done);
	if (done < budget && napi_complete_done(napi, done)) {
		/* completions that raced with re-arming: poll again */
		if (ipoib_rearm(priv->recv_cq) || ipoib_rearm(priv->send_cq) ||
		    ipoib_rearm(priv->cm.recv_cq) ||
		    ipoib_rearm(priv->cm.send_cq))
			napi_schedule(napi);
	}
	return done;
}

/*
 * A checksum the stack left to the device (CHECKSUM_PARTIAL), completed
 * in software where nothing else will: the stack would have done the
 * same had we not offered the offload.
 */
int ipoib_csum_complete(struct ipoib_dev *priv, struct sk_buff *skb)
{
	atomic_long_inc(&priv->counters.tx_csum_sw);
	return skb_checksum_help(skb);
}

/*
 * UD: an HCA with UD checksum offload computes IPv4 ones. Connected mode
 * offers the stack checksum offload for its connections, so IPv6 and
 * datagrams on other HCAs can reach here with the checksum still to do.
 */
static int ipoib_ud_tx_csum(struct ipoib_dev *priv, struct sk_buff *skb,
			    struct ib_send_wr *wr)
{
	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return 0;
	if ((priv->ca->attrs.device_cap_flags & IB_DEVICE_UD_IP_CSUM) &&
	    skb->protocol == htons(ETH_P_IP)) {
		wr->send_flags |= IB_SEND_IP_CSUM;
		return 0;
	}
	return ipoib_csum_complete(priv, skb);
}

static void ipoib_tx_drop(struct ipoib_dev *priv, struct sk_buff *skb)
{
	DEV_STATS_INC(priv->dev, tx_dropped);
	dev_kfree_skb_any(skb);
}

/*
 * The route learns a unicast destination's MTU as well as the sender.
 * A local sender would learn it from our ICMP too; a router would not,
 * its ICMP goes to the source. A forwarded IPv4 packet without DF that
 * the source keeps sending too big (it ignores the ICMP, or a filter
 * drops it) is then fragmented by the router for this destination, but
 * only with net.ipv4.ip_forward_use_pmtu=1: by default forwarding goes
 * by the device MTU (see the admin guide).
 */
static void ipoib_tx_learn_pmtu(struct sk_buff *skb, unsigned int mtu)
{
	bool unicast;

	if (!skb_valid_dst(skb))
		return;
	if (skb->protocol == htons(ETH_P_IP))
		unicast = pskb_network_may_pull(skb, sizeof(struct iphdr)) &&
			  !ipv4_is_multicast(ip_hdr(skb)->daddr);
	else if (skb->protocol == htons(ETH_P_IPV6))
		unicast = pskb_network_may_pull(skb, sizeof(struct ipv6hdr)) &&
			  !ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
	else
		return;
	if (unicast)
		skb_dst_update_pmtu_no_confirm(skb, mtu);
}

/*
 * A packet that cannot go as it is (@skb still has its pseudo header):
 * too big for the UD MTU (multicast, or no connection) or for the
 * connection's MTU. RFC 4755 s7.2: tell the sender the per-destination
 * MTU, so path MTU discovery adapts. (IPv4 sends no ICMP error about a
 * multicast packet; the counter and the log line still say it.)
 */
void ipoib_tx_too_big(struct ipoib_dev *priv, struct sk_buff *skb,
		      unsigned int mtu)
{
	atomic_long_inc(&priv->counters.tx_too_big);
	skb_pull(skb, IPOIB_HARD_LEN);
	skb_reset_network_header(skb);
	ipoib_tx_learn_pmtu(skb, mtu);
	if (skb->protocol == htons(ETH_P_IP))
		icmp_ndo_send(skb, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED,
			      htonl(mtu));
	else if (skb->protocol == htons(ETH_P_IPV6))
		icmpv6_ndo_send(skb, ICMPV6_PKT_TOOBIG, 0, max(mtu, IPV6_MIN_MTU));
	DEV_STATS_INC(priv->dev, tx_dropped);
	dev_kfree_skb_any(skb);
}

/*
 * Netif tx lock held: stop the queue while the ring is full. True if it
 * stays stopped; a completion that freed a slot meanwhile is seen.
 */
static bool ipoib_ud_stop_if_full(struct ipoib_dev *priv)
{
	if (ipoib_ud_tx_room(priv))
		return false;
	netif_stop_queue(priv->dev);
	smp_mb(); /* queue state before re-reading tx_tail */
	if (!ipoib_ud_tx_room(priv))
		return true;
	netif_wake_queue(priv->dev);
	return false;
}

/* A UD message is one packet: what does not fit the path MTU goes back. */
static bool ipoib_ud_too_big(struct ipoib_dev *priv, struct sk_buff *skb)
{
	unsigned int ib_mtu = READ_ONCE(priv->mcast_mtu);

	if (likely(skb->len - IPOIB_PSEUDO_LEN <= ib_mtu))
		return false;
	ipoib_warn_rl(priv, "dropping %u-byte packet above the %u-byte IB MTU\n",
		      skb->len - IPOIB_PSEUDO_LEN, ib_mtu);
	ipoib_tx_too_big(priv, skb, IPOIB_UD_MTU(ib_mtu));
	return true;
}

/*
 * Netif tx lock held: post the slots filled since the last doorbell, in
 * one chain. What the HCA refused is the newest slots: they go back.
 */
void ipoib_ud_kick(struct ipoib_dev *priv)
{
	unsigned int mask = priv->sendq_size - 1, n = priv->tx_unposted;
	unsigned int first, bytes = priv->tx_unposted_bytes, lost = 0;
	struct net_device *dev = priv->dev;
	const struct ib_send_wr *bad = NULL;
	struct ipoib_tx_buf *tx;
	unsigned int i, posted = 0;

	if (!n)
		return;
	priv->tx_unposted = 0;
	priv->tx_unposted_bytes = 0;
	first = (priv->tx_head - n) & mask;
	if (likely(!ib_post_send(priv->qp, &priv->tx_ring[first].wr.wr,
				 &bad))) {
		dev_sw_netstats_tx_add(dev, n, bytes);
		if (n > 1)
			atomic_long_add(n - 1, &priv->counters.tx_batched);
		return;
	}
	/* the first refused; none named (a provider's bug): all refused */
	if (bad) {
		tx = container_of(bad, struct ipoib_tx_buf, wr.wr);
		posted = (unsigned int)(tx - priv->tx_ring - first) & mask;
		if (posted >= n) {
			netdev_err(dev, "post send named WR %u of %u as refused\n",
				   posted, n);
			posted = 0;
		}
	}
	ipoib_warn_rl(priv, "post send failed: %u of %u sends dropped\n",
		      n - posted, n);
	for (i = posted; i < n; i++) {
		tx = &priv->tx_ring[(first + i) & mask];
		ipoib_dma_unmap_skb(priv, tx->skb, tx->mapping,
				    skb_shinfo(tx->skb)->nr_frags);
		lost += tx->skb->len;
		dev_kfree_skb_any(tx->skb);
		ipoib_ah_put(tx->ah);
		tx->skb = NULL;
		tx->ah = NULL;
	}
	/* never posted, so no completion can pass them: give them back */
	WRITE_ONCE(priv->tx_head, priv->tx_head - (n - posted));
	DEV_STATS_ADD(dev, tx_errors, n - posted);
	dev_sw_netstats_tx_add(dev, posted, bytes - lost);
	ipoib_tx_unsent(priv, lost);
}

/*
 * A doorbell per burst, not per packet, where it costs the device one: on
 * soft-RoCE, measured, bursts cost the receiver more than the sender
 * saves (datagram UDP about 6% lower), so there it is a parameter.
 */
static bool ipoib_ud_more(struct ipoib_dev *priv)
{
	int batch = READ_ONCE(ipoib_tx_batch);

	return priv->tx_more &&
	       (batch > 0 || (batch < 0 && priv->hw_doorbell));
}

/*
 * Fill the next slot with one datagram; skb->data is the pseudo header,
 * which goes, leaving the encapsulation header first on the wire. The
 * slot is posted at the doorbell: now, unless more packets follow
 * (xmit_more) and the queue runs. Takes its own reference on @ah for the
 * time the send is in flight.
 */
netdev_tx_t ipoib_ud_send(struct ipoib_dev *priv, struct sk_buff *skb,
			  struct ipoib_ah *ah, u32 qpn, u32 qkey)
{
	unsigned int id, len, mask = priv->sendq_size - 1;
	struct ipoib_tx_buf *tx;
	int nsge;

	if (unlikely(!test_bit(IPOIB_FLAG_QP_READY, &priv->flags))) {
		ipoib_tx_drop(priv, skb);
		return NETDEV_TX_OK;
	}
	ipoib_test_xmit_delay();
	if (unlikely(ipoib_ud_too_big(priv, skb)))
		return NETDEV_TX_OK;
	/*
	 * Rare: the queue stops when the ring fills, and the wakers of the
	 * other rings behind it (connected mode's) wake it only with slack
	 * here, but one that read the slack before our last post can still
	 * wake it. Stop it again, and requeue only if no completion freed a
	 * slot meanwhile: the skb is untouched, the stopped qdisc holds it,
	 * and our drain wakes a stopped queue on every poll.
	 */
	if (unlikely(ipoib_ud_stop_if_full(priv)))
		return NETDEV_TX_BUSY;
	id = priv->tx_head & mask;
	tx = &priv->tx_ring[id];
	/* the checksum offload may add its flag */
	tx->wr.wr.send_flags = IB_SEND_SIGNALED;
	skb_pull(skb, IPOIB_PSEUDO_LEN);
	if (unlikely(ipoib_ud_tx_csum(priv, skb, &tx->wr.wr) ||
		     ipoib_tx_gatherable(skb, priv->ud_tx_sge))) {
		ipoib_tx_drop(priv, skb);
		return NETDEV_TX_OK;
	}
	nsge = ipoib_dma_map_skb(priv, skb, tx->mapping, tx->sge);
	if (unlikely(nsge < 0)) {
		ipoib_tx_drop(priv, skb);
		return NETDEV_TX_OK;
	}
	len = skb->len;
	tx->skb = skb;
	tx->ah = ah;
	ipoib_ah_get(ah);
	tx->wr.wr.next = NULL;
	tx->wr.wr.num_sge = nsge;
	tx->wr.ah = ah->ah;
	tx->wr.remote_qpn = qpn;
	tx->wr.remote_qkey = qkey;
	if (priv->tx_unposted)
		priv->tx_ring[(id - 1) & mask].wr.wr.next = &tx->wr.wr;
	priv->tx_unposted++;
	priv->tx_unposted_bytes += len;
	/* the completion may free the skb as soon as it is posted */
	ipoib_tx_release_route(skb);
	WRITE_ONCE(priv->tx_head, priv->tx_head + 1);
	if (__netdev_tx_sent_queue(netdev_get_tx_queue(priv->dev, 0), len,
				   ipoib_ud_more(priv)) ||
	    !ipoib_ud_tx_room(priv)) {
		ipoib_ud_kick(priv);
		ipoib_ud_stop_if_full(priv);
	}
	return NETDEV_TX_OK;
}

static unsigned int ipoib_rx_head_pages(struct ipoib_dev *priv)
{
	return DIV_ROUND_UP(priv->recvq_size, ipoib_rx_heads_per_page());
}

/* The head slots: a few pages, each mapped once for the ring's life. */
static void ipoib_free_rx_heads(struct ipoib_dev *priv)
{
	unsigned int i;

	for (i = 0; priv->rx_heads && i < ipoib_rx_head_pages(priv); i++) {
		if (!priv->rx_heads[i])
			continue;
		ib_dma_unmap_page(priv->ca, priv->rx_heads_mapping[i],
				  PAGE_SIZE, DMA_FROM_DEVICE);
		__free_page(priv->rx_heads[i]);
	}
	kfree(priv->rx_heads);
	kfree(priv->rx_heads_mapping);
	priv->rx_heads = NULL;
	priv->rx_heads_mapping = NULL;
}

static int ipoib_alloc_rx_heads(struct ipoib_dev *priv)
{
	unsigned int i, n = ipoib_rx_head_pages(priv);

	priv->rx_heads = kcalloc(n, sizeof(*priv->rx_heads), GFP_KERNEL);
	priv->rx_heads_mapping = kcalloc(n, sizeof(*priv->rx_heads_mapping),
					 GFP_KERNEL);
	if (!priv->rx_heads || !priv->rx_heads_mapping)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct page *page = alloc_page(GFP_KERNEL);
		u64 mapping;

		if (!page)
			return -ENOMEM;
		mapping = ib_dma_map_page(priv->ca, page, 0, PAGE_SIZE,
					  DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(priv->ca, mapping)) {
			__free_page(page);
			return -ENOMEM;
		}
		priv->rx_heads[i] = page;
		priv->rx_heads_mapping[i] = mapping;
	}
	return 0;
}

static int ipoib_create_rx_pool(struct ipoib_dev *priv)
{
	struct page_pool *pool = ipoib_rx_pool_create(priv, priv->recvq_size);

	if (IS_ERR(pool))
		return PTR_ERR(pool);
	priv->rx_pool = pool;
	return 0;
}

static void ipoib_free_rings(struct ipoib_dev *priv)
{
	unsigned int i;

	for (i = 0; priv->rx_ring && i < priv->recvq_size; i++)
		ipoib_free_rx_buf(priv, i);
	ipoib_free_rx_heads(priv);
	if (priv->rx_pool)
		page_pool_destroy(priv->rx_pool);
	kvfree(priv->rx_ring);
	kvfree(priv->tx_ring);
	priv->rx_pool = NULL;
	priv->rx_ring = NULL;
	priv->tx_ring = NULL;
}

static int ipoib_alloc_rings(struct ipoib_dev *priv)
{
	unsigned int i;

	priv->rx_ring = kvcalloc(priv->recvq_size, sizeof(*priv->rx_ring),
				 GFP_KERNEL);
	priv->tx_ring = kvcalloc(priv->sendq_size, sizeof(*priv->tx_ring),
				 GFP_KERNEL);
	if (!priv->rx_ring || !priv->tx_ring || ipoib_create_rx_pool(priv) ||
	    ipoib_alloc_rx_heads(priv))
		goto fail;
	priv->tx_head = 0;
	priv->tx_tail = 0;
	priv->tx_unposted = 0;
	priv->tx_unposted_bytes = 0;
	/* what a slot's work request never changes, set once */
	for (i = 0; i < priv->sendq_size; i++) {
		struct ib_send_wr *wr = &priv->tx_ring[i].wr.wr;

		wr->wr_id = i;
		wr->sg_list = priv->tx_ring[i].sge;
		wr->opcode = IB_WR_SEND;
	}
	for (i = 0; i < priv->recvq_size; i++)
		if (ipoib_rx_page_fill(priv, i, GFP_KERNEL))
			goto fail;
	return 0;
fail:
	netdev_err(priv->dev, "cannot allocate %u receive buffers\n",
		   priv->recvq_size);
	ipoib_free_rings(priv);
	return -ENOMEM;
}

/*
 * RESET -> INIT -> RTR -> RTS (a UD QP needs no remote attributes), then
 * fill the receive queue and start polling.
 */
int ipoib_ib_open(struct ipoib_dev *priv)
{
	unsigned int i;
	int ret;

	ret = ipoib_alloc_rings(priv);
	if (ret)
		return ret;
	ret = ipoib_qp_to(priv, IB_QPS_INIT);
	if (!ret)
		ret = ipoib_qp_to(priv, IB_QPS_RTR);
	if (!ret)
		ret = ipoib_qp_to(priv, IB_QPS_RTS);
	for (i = 0; !ret && i < priv->recvq_size; i++) {
		ret = ipoib_post_recv(priv, i);
		if (ret)
			netdev_err(priv->dev, "cannot post receive %u: %d\n",
				   i, ret);
	}
	if (ret) {
		ipoib_qp_to(priv, IB_QPS_RESET);
		ipoib_free_rings(priv);
		return ret;
	}
	set_bit(IPOIB_FLAG_QP_READY, &priv->flags);
	napi_enable(&priv->napi);
	ipoib_arm_cq(priv, priv->recv_cq);
	ipoib_arm_cq(priv, priv->send_cq);
	return 0;
}

static bool ipoib_rx_pending(struct ipoib_dev *priv)
{
	unsigned int i;

	for (i = 0; i < priv->recvq_size; i++)
		if (priv->rx_ring[i].page)
			return true;
	return false;
}

/*
 * A drain that does not end: the buffers still posted may yet be written
 * by the HCA, and the sends still read their address handles. Leak them
 * rather than free them; the rings themselves only hold pointers.
 */
static void ipoib_leak_unflushed(struct ipoib_dev *priv)
{
	unsigned int i, n = 0, sends = ipoib_tx_inflight(priv);

	for (i = 0; i < priv->recvq_size; i++) {
		n += !!priv->rx_ring[i].page;
		priv->rx_ring[i].page = NULL;
	}
	/* the head slots too, and the pool that lent the pages */
	if (n) {
		priv->rx_heads = NULL;
		priv->rx_heads_mapping = NULL;
		priv->rx_pool = NULL;
	}
	for (i = 0; i < sends; i++) {
		struct ipoib_tx_buf *tx = &priv->tx_ring[(priv->tx_tail + i) &
							 (priv->sendq_size - 1)];

		/* its socket may go: only the skb's memory is kept */
		if (tx->skb)
			skb_orphan(tx->skb);
		memset(tx, 0, sizeof(*tx));
	}
	priv->tx_tail = priv->tx_head;
	netdev_err(priv->dev, "%s never flushed %u receives and %u sends of UD QP 0x%06x: their buffers are leaked, not freed\n",
		   dev_name(&priv->ca->dev), n, sends, priv->qp->qp_num);
}

/*
 * The error state flushes every posted work request; reap the flushed
 * completions until every buffer has come back. Only a completion gives
 * a buffer back to us: nothing is freed on a timer.
 */
void ipoib_ib_stop(struct ipoib_dev *priv)
{
	unsigned long start = jiffies, said = jiffies;
	/* byte queue limits start again with the next datapath */
	struct ipoib_tx_done ignored = {};
	struct ib_wc wc[IPOIB_POLL_BATCH];
	int n, i;

	clear_bit(IPOIB_FLAG_QP_READY, &priv->flags);
	napi_disable(&priv->napi);
	ipoib_qp_to(priv, IB_QPS_ERR);
	while (ipoib_rx_pending(priv) || ipoib_tx_inflight(priv)) {
		n = ib_poll_cq(priv->recv_cq, IPOIB_POLL_BATCH, wc);
		for (i = 0; i < n; i++)
			ipoib_handle_rx(priv, &wc[i]);
		ipoib_drain_send_cq(priv, &ignored);
		if (n)
			continue;
		if (time_after(jiffies, start + IPOIB_DRAIN_LIMIT)) {
			ipoib_leak_unflushed(priv);
			break;
		}
		if (time_after(jiffies, said + 5 * HZ)) {
			netdev_warn(priv->dev, "waiting for %s to flush %u sends and some receives\n",
				    dev_name(&priv->ca->dev),
				    ipoib_tx_inflight(priv));
			said = jiffies;
		}
		usleep_range(500, 1000);
	}
	ipoib_qp_to(priv, IB_QPS_RESET);
	ipoib_free_rings(priv);
}
