/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_ipoib: IP over InfiniBand (RFC 4391, RFC 4755) on IB and RoCE ports.
 *
 * Locking rules (the only place they are written down):
 *
 * - ipoib_hcas (the list of RDMA devices we serve) is protected by
 *   ipoib_hcas_lock (a mutex). ib_client add/remove callbacks are
 *   serialised by the RDMA core per device; the list lock only orders them
 *   against module-wide walks.
 * - hca->ports (the ibN interfaces of one RDMA device) is changed only under
 *   RTNL and with hca->lock held; readers hold either.
 * - Verbs objects of an interface (PD, CQs, UD QP) live from ndo_init to
 *   ndo_uninit, so they exist whenever the netdev is registered. QP state
 *   changes (ipoib_ib_open/ipoib_ib_stop) happen under RTNL, from ndo_open
 *   and ndo_stop only.
 * - priv->flags bits are atomic (set_bit/test_bit) and need no lock.
 * - The fabric implementation (ipoib_fabric_*.c) is chosen when the
 *   interface is created and never changes.
 */
#ifndef IPOIB_H
#define IPOIB_H

#include <linux/netdevice.h>
#include <linux/mutex.h>
#include <linux/list.h>
#include <rdma/ib_verbs.h>

#include "ipoib_wire.h"

#define DRV_NAME "ib_ipoib"

/* Until the broadcast group tells us its MTU: a 2048-byte IB MTU. */
#define IPOIB_DEFAULT_IB_MTU	2048
#define IPOIB_UD_MTU(ib_mtu)	((ib_mtu) - IPOIB_ENCAP_LEN)

/* Queue depths are powers of two within these bounds (module parameters). */
#define IPOIB_MIN_QUEUE_SIZE	2
#define IPOIB_MAX_QUEUE_SIZE	8192

extern unsigned int ipoib_sendq_size;
extern unsigned int ipoib_recvq_size;
extern int ipoib_debug_level;

struct ipoib_dev;

/*
 * The one seam between fabrics. On InfiniBand the subnet administrator
 * answers path and multicast queries; on RoCE there is no SA and the same
 * services come from IP resolution and local multicast attach. Nothing
 * outside ipoib_fabric_*.c looks at the link layer.
 */
struct ipoib_fabric_ops {
	const char *name;
	/* Check the port can carry IPoIB on this fabric (may sleep). */
	int (*port_check)(struct ipoib_dev *priv);
	/* One line for logs: where the traffic goes. */
	void (*describe)(struct ipoib_dev *priv, char *buf, size_t len);
};

extern const struct ipoib_fabric_ops ipoib_fabric_ib;
extern const struct ipoib_fabric_ops ipoib_fabric_roce;
const struct ipoib_fabric_ops *ipoib_fabric_for_port(struct ib_device *ca,
						     u32 port);

/* One RDMA device we serve; the ib_client's per-device data. */
struct ipoib_hca {
	struct ib_device *ca;
	struct mutex lock;		/* protects ports, see top of file */
	struct list_head ports;		/* struct ipoib_dev.hca_node */
};

enum ipoib_flags {
	IPOIB_FLAG_QP_READY,	/* UD QP is in RTS */
};

/* One ibN interface: netdev_priv() of its net_device. */
struct ipoib_dev {
	struct net_device *dev;
	struct ipoib_hca *hca;
	struct ib_device *ca;
	u32 port;
	u16 pkey;		/* with the full-member bit, RFC 4391 s4.1 */
	u16 pkey_index;
	u32 qkey;
	u8 scope;
	union ib_gid local_gid;	/* GID index 0, in our hardware address */
	unsigned long flags;	/* enum ipoib_flags */
	struct list_head hca_node;

	const struct ipoib_fabric_ops *fabric;

	/* UD transport, ndo_init .. ndo_uninit */
	struct ib_pd *pd;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct ib_qp *qp;
	unsigned int sendq_size;
	unsigned int recvq_size;
};

static inline struct ipoib_dev *ipoib_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

/* ipoib_ib.c: UD transport resources and QP state */
int ipoib_ib_init(struct ipoib_dev *priv);
void ipoib_ib_cleanup(struct ipoib_dev *priv);
int ipoib_ib_open(struct ipoib_dev *priv);
void ipoib_ib_stop(struct ipoib_dev *priv);

/* ipoib_ethtool.c */
void ipoib_set_ethtool_ops(struct net_device *dev);

#define ipoib_dbg(priv, level, fmt, ...)				\
	do {								\
		if (ipoib_debug_level >= (level))			\
			netdev_printk(KERN_DEBUG, (priv)->dev,	\
				      fmt, ##__VA_ARGS__);	\
	} while (0)

#endif /* IPOIB_H */
