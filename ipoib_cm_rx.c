// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode's receive side: one shared receive queue for every
 * connection (RFC 4755 leaves the receive resources to us), so receive
 * memory does not grow with the number of peers. A slot is the
 * encapsulation header in a small skb head plus 16 pages for up to
 * 65520 octets of IP.
 */
#include "ipoib.h"

#define IPOIB_CM_RX_COPYBREAK	256

static void ipoib_cm_free_rx_pages(struct ipoib_dev *priv,
				   struct ipoib_cm_rx_buf *rx, unsigned int from)
{
	unsigned int i;

	for (i = from; i < IPOIB_CM_RX_PAGES; i++) {
		if (!rx->pages[i])
			continue;
		ib_dma_unmap_page(priv->ca, rx->mapping[i + 1], PAGE_SIZE,
				  DMA_FROM_DEVICE);
		put_page(rx->pages[i]);
		rx->pages[i] = NULL;
	}
}

static void ipoib_cm_free_rx_buf(struct ipoib_dev *priv, unsigned int id)
{
	struct ipoib_cm_rx_buf *rx = &priv->cm.rx_ring[id];

	if (rx->skb) {
		ib_dma_unmap_single(priv->ca, rx->mapping[0], IPOIB_ENCAP_LEN,
				    DMA_FROM_DEVICE);
		dev_kfree_skb_any(rx->skb);
		rx->skb = NULL;
	}
	ipoib_cm_free_rx_pages(priv, rx, 0);
}

static struct sk_buff *ipoib_cm_alloc_head(struct ipoib_dev *priv, u64 *map)
{
	struct sk_buff *skb;

	skb = netdev_alloc_skb(priv->dev, IPOIB_ENCAP_LEN +
			       IPOIB_CM_RX_COPYBREAK + 12);
	if (!skb)
		return NULL;
	/* the IP header lands 16-byte aligned behind the 4-octet header */
	skb_reserve(skb, 12);
	*map = ib_dma_map_single(priv->ca, skb->data, IPOIB_ENCAP_LEN,
				 DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(priv->ca, *map)) {
		dev_kfree_skb_any(skb);
		return NULL;
	}
	return skb;
}

/* Fill the empty slots of rx_ring[id]: head first, then pages. */
static int ipoib_cm_fill_rx_buf(struct ipoib_dev *priv, unsigned int id)
{
	struct ipoib_cm_rx_buf *rx = &priv->cm.rx_ring[id];
	unsigned int i;

	if (!rx->skb) {
		rx->skb = ipoib_cm_alloc_head(priv, &rx->mapping[0]);
		if (!rx->skb)
			return -ENOMEM;
	}
	for (i = 0; i < IPOIB_CM_RX_PAGES; i++) {
		struct page *page;

		if (rx->pages[i])
			continue;
		page = dev_alloc_page();
		if (!page)
			return -ENOMEM;
		rx->mapping[i + 1] = ib_dma_map_page(priv->ca, page, 0,
						     PAGE_SIZE,
						     DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(priv->ca, rx->mapping[i + 1])) {
			put_page(page);
			return -EIO;
		}
		rx->pages[i] = page;
	}
	return 0;
}

static int ipoib_cm_post_srq(struct ipoib_dev *priv, unsigned int id)
{
	struct ipoib_cm_rx_buf *rx = &priv->cm.rx_ring[id];
	struct ib_sge sge[IPOIB_CM_RX_PAGES + 1];
	struct ib_recv_wr wr = {
		.wr_id = id | IPOIB_OP_CM | IPOIB_OP_RECV,
		.sg_list = sge,
		.num_sge = IPOIB_CM_RX_PAGES + 1,
	};
	unsigned int i;

	for (i = 0; i <= IPOIB_CM_RX_PAGES; i++) {
		sge[i].addr = rx->mapping[i];
		sge[i].length = i ? PAGE_SIZE : IPOIB_ENCAP_LEN;
		sge[i].lkey = priv->pd->local_dma_lkey;
	}
	return ib_post_srq_recv(priv->cm.srq, &wr, NULL);
}

/* Replacement pages for the first @n of a slot, all or nothing. */
static int ipoib_cm_alloc_pages(struct ipoib_dev *priv, unsigned int n,
				struct page **pages, u64 *mapping)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		pages[i] = dev_alloc_page();
		if (!pages[i])
			goto fail;
		mapping[i] = ib_dma_map_page(priv->ca, pages[i], 0, PAGE_SIZE,
					     DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(priv->ca, mapping[i])) {
			put_page(pages[i]);
			goto fail;
		}
	}
	return 0;
fail:
	while (i--) {
		ib_dma_unmap_page(priv->ca, mapping[i], PAGE_SIZE,
				  DMA_FROM_DEVICE);
		put_page(pages[i]);
	}
	return -ENOMEM;
}

/*
 * A message on some connection. Small ones are copied out of the first
 * page; larger ones take the pages they filled as fragments, which are
 * replaced first: if memory is short the message is dropped and the slot
 * goes back to the SRQ as it was.
 */
void ipoib_cm_handle_rx(struct ipoib_dev *priv, struct ib_wc *wc)
{
	unsigned int id = wc->wr_id & ~(IPOIB_OP_CM | IPOIB_OP_RECV);
	struct page *pages[IPOIB_CM_RX_PAGES];
	u64 mapping[IPOIB_CM_RX_PAGES];
	struct net_device *dev = priv->dev;
	struct ipoib_cm_rx_buf *rx;
	struct sk_buff *skb, *head;
	unsigned int len, n, i;
	u64 head_map;
	u16 type;

	if (unlikely(id >= priv->cm.rx_size)) {
		ipoib_warn_rl(priv, "CM receive completion for bad id %u\n", id);
		return;
	}
	rx = &priv->cm.rx_ring[id];
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		/* a connection failing under a receive; the buffer is fine */
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			ipoib_warn_rl(priv, "CM receive error %d (vendor 0x%x)\n",
				      wc->status, wc->vendor_err);
			dev->stats.rx_errors++;
		}
		goto repost;
	}
	ipoib_cm_rx_seen(priv, wc->qp);
	if (unlikely(wc->byte_len < IPOIB_ENCAP_LEN)) {
		atomic_long_inc(&priv->counters.rx_short);
		dev->stats.rx_dropped++;
		goto repost;
	}
	len = min_t(unsigned int, wc->byte_len - IPOIB_ENCAP_LEN,
		    IPOIB_CM_RX_PAGES * PAGE_SIZE);
	n = len <= IPOIB_CM_RX_COPYBREAK ? 0 : DIV_ROUND_UP(len, PAGE_SIZE);

	head = ipoib_cm_alloc_head(priv, &head_map);
	if (unlikely(!head))
		goto no_buf;
	if (unlikely(ipoib_cm_alloc_pages(priv, n, pages, mapping))) {
		ib_dma_unmap_single(priv->ca, head_map, IPOIB_ENCAP_LEN,
				    DMA_FROM_DEVICE);
		dev_kfree_skb_any(head);
		goto no_buf;
	}
	skb = rx->skb;
	ib_dma_unmap_single(priv->ca, rx->mapping[0], IPOIB_ENCAP_LEN,
			    DMA_FROM_DEVICE);
	rx->skb = head;
	rx->mapping[0] = head_map;
	skb_put(skb, IPOIB_ENCAP_LEN);
	if (!n) {
		ib_dma_sync_single_for_cpu(priv->ca, rx->mapping[1], len,
					   DMA_FROM_DEVICE);
		skb_put_data(skb, page_address(rx->pages[0]), len);
		ib_dma_sync_single_for_device(priv->ca, rx->mapping[1], len,
					      DMA_FROM_DEVICE);
	}
	for (i = 0; i < n; i++) {
		unsigned int frag = min_t(unsigned int, len, PAGE_SIZE);

		ib_dma_unmap_page(priv->ca, rx->mapping[i + 1], PAGE_SIZE,
				  DMA_FROM_DEVICE);
		skb_add_rx_frag(skb, i, rx->pages[i], 0, frag, PAGE_SIZE);
		rx->pages[i] = pages[i];
		rx->mapping[i + 1] = mapping[i];
		len -= frag;
	}

	ipoib_encap_parse(skb->data, IPOIB_ENCAP_LEN, &type);
	if (unlikely(!ipoib_type_known(type))) {
		atomic_long_inc(&priv->counters.rx_bad_type);
		dev->stats.rx_dropped++;
		dev_kfree_skb_any(skb);
		goto repost;
	}
	skb->protocol = htons(type);
	memset(skb_push(skb, IPOIB_PSEUDO_LEN), 0, IPOIB_PSEUDO_LEN);
	skb_reset_mac_header(skb);
	skb_pull(skb, IPOIB_HARD_LEN);
	skb_reset_network_header(skb);
	skb->pkt_type = PACKET_HOST;
	skb->dev = dev;
	dev->stats.rx_packets++;
	dev->stats.rx_bytes += skb->len;
	napi_gro_receive(&priv->napi, skb);
	goto repost;

no_buf:
	dev->stats.rx_dropped++;
	atomic_long_inc(&priv->counters.rx_no_buf);
repost:
	if (unlikely(ipoib_cm_post_srq(priv, id)))
		ipoib_warn_rl(priv, "cannot repost SRQ buffer %u\n", id);
}

/* ndo_stop, after the last connection: the SRQ and its buffers. */
void ipoib_cm_rx_close(struct ipoib_dev *priv)
{
	struct ib_wc wc[16];
	unsigned int i;

	if (priv->cm.srq) {
		ib_destroy_srq(priv->cm.srq);
		priv->cm.srq = NULL;
	}
	/* stale completions must not meet the next open's ring */
	while (ib_poll_cq(priv->cm.recv_cq, ARRAY_SIZE(wc), wc) > 0)
		;
	for (i = 0; priv->cm.rx_ring && i < priv->cm.rx_size; i++)
		ipoib_cm_free_rx_buf(priv, i);
	kvfree(priv->cm.rx_ring);
	priv->cm.rx_ring = NULL;
	priv->cm.rx_size = 0;
}

/* ndo_open: the SRQ and a buffer in each of its slots. */
int ipoib_cm_rx_open(struct ipoib_dev *priv)
{
	struct ib_srq_init_attr srq_attr = {
		.attr = {
			.max_wr = priv->recvq_size,
			.max_sge = IPOIB_CM_RX_PAGES + 1,
		},
	};
	unsigned int i;
	int ret;

	priv->cm.rx_size = priv->recvq_size;
	priv->cm.rx_ring = kvcalloc(priv->cm.rx_size,
				    sizeof(*priv->cm.rx_ring), GFP_KERNEL);
	if (!priv->cm.rx_ring)
		return -ENOMEM;
	priv->cm.srq = ib_create_srq(priv->pd, &srq_attr);
	if (IS_ERR(priv->cm.srq)) {
		ret = PTR_ERR(priv->cm.srq);
		priv->cm.srq = NULL;
		goto fail;
	}
	for (i = 0; i < priv->cm.rx_size; i++) {
		ret = ipoib_cm_fill_rx_buf(priv, i);
		if (!ret)
			ret = ipoib_cm_post_srq(priv, i);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	ipoib_cm_rx_close(priv);
	return ret;
}
