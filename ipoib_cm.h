/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of connected mode share among themselves: ipoib_cm.c
 * (connection life cycle), ipoib_cm_tx.c (transmit), ipoib_cm_rx.c
 * (receive queues). The rest of the driver sees only ipoib.h.
 */
#ifndef _IPOIB_CM_H
#define _IPOIB_CM_H

#include "ipoib.h"

static inline unsigned int ipoib_cm_tx_inflight(struct ipoib_cm_conn *conn)
{
	/* acquire pairs with the completion's release of tx_tail */
	return READ_ONCE(conn->tx_head) - smp_load_acquire(&conn->tx_tail);
}

static inline bool ipoib_cm_tx_full(struct ipoib_cm_conn *conn)
{
	return ipoib_cm_tx_inflight(conn) >= conn->priv->sendq_size;
}

/* IP length of a packet still carrying its hard header */
static inline unsigned int ipoib_cm_ip_len(const struct sk_buff *skb)
{
	return skb->len - IPOIB_HARD_LEN;
}

/* ipoib_cm.c */
struct ipoib_cm_conn *ipoib_cm_find(struct ipoib_dev *priv, const u8 *peer,
				    bool rx_only);
void ipoib_cm_peer_addr(u8 *buf, u32 qpn, const union ib_gid *gid);
struct ipoib_cm_conn *ipoib_cm_conn_new(struct ipoib_dev *priv,
					const u8 *peer, bool active, gfp_t gfp);
void ipoib_cm_fail_later(struct ipoib_cm_conn *conn);

/* ipoib_cm_rx.c */
int ipoib_cm_rx_open(struct ipoib_dev *priv);
void ipoib_cm_rx_close(struct ipoib_dev *priv);
int ipoib_cm_rx_conn_open(struct ipoib_cm_conn *conn);
bool ipoib_cm_rx_conn_drain(struct ipoib_cm_conn *conn);
void ipoib_cm_rx_conn_close(struct ipoib_cm_conn *conn, bool drained);

/* ipoib_cm_tx.c */
void ipoib_cm_send(struct ipoib_cm_conn *conn, struct sk_buff *skb);
void ipoib_cm_flush_to_ud(struct ipoib_cm_conn *conn);

#endif
