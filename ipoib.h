/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_ipoib: IP over InfiniBand (RFC 4391, RFC 4755) on IB and RoCE ports.
 *
 * Locking rules (the only place they are written down):
 *
 * - An ipoib_hca (one per RDMA device we serve) is the ib_client's data:
 *   the RDMA core serialises add_one and remove_one per device, and no
 *   module-wide list of them exists. Its event handler is registered
 *   before its first interface and unregistered before the last goes.
 * - hca->ports (the ibN interfaces of one RDMA device) is changed only under
 *   RTNL and with hca->lock held; readers hold either.
 * - Verbs objects of an interface (PD, CQs, UD QP) live from ndo_init to
 *   its priv_destructor, which runs after unregistration, outside RTNL,
 *   once every netdev reference is gone; each interface holds its hca
 *   (hca->users) until then, and ipoib_remove_one waits for all of them.
 *   QP state changes (ipoib_ib_open/ipoib_ib_stop) happen under RTNL.
 * - The reset, announce and multicast works take RTNL (ipoib_rtnl.c):
 *   each queued or running instance holds a netdev reference; under RTNL
 *   they are only ever cancelled without waiting, and one that gets RTNL
 *   after unregistration began does nothing.
 * - priv->flags bits are atomic (set_bit/test_bit) and need no lock.
 * - priv->local_gid changes under RTNL and priv->gid_lock (a seqlock);
 *   readers without RTNL (NAPI, path queries, CM handlers, rdma_cm's
 *   lookup) copy it with ipoib_local_gid().
 * - Transmit ring: tx_head advances in ndo_start_xmit (netif tx lock),
 *   tx_tail in NAPI (send completions); each side reads the other's index
 *   with READ_ONCE and the queue is stopped/woken around a full ring.
 *   Slots filled with xmit_more wait, chained, for one post (tx_unposted,
 *   netif tx lock). Byte queue limits count the UD ring's sends (not the
 *   connections': ipoib_cm_send()) at their post, under the netif tx
 *   lock, and their completion in NAPI (or in ipoib_ib_stop with NAPI
 *   off); bytes counted but never posted go through tx_bql_unsent to
 *   NAPI, the only completer.
 *   Receive ring: NAPI only.
 * - Receive page pools (one per receive ring: UD, the SRQ, a connection's
 *   own): pages are taken from a pool in process context only while its
 *   ring has nothing posted (filling), then by NAPI only; they are given
 *   back from any context but hard IRQ.
 * - Paths (ipoib_arp.c): the hash table is written under priv->path_lock
 *   (spinlock, BH off) and read under RCU on transmit. A path's ah pointer
 *   changes under path_lock; a sender takes its own ipoib_ah reference.
 *   path->queue has its own lock (sk_buff_head).
 * - Neighbours (ipoib_arp.c): the netevent notifier runs in any context
 *   (reaching a bond's slaves under RCU) and only queues
 *   priv->neigh_sweep_work (priv->wq), under cm.lock while CM_UP is set,
 *   so that none is queued once ipoib_cm_stop() passed that lock. The
 *   work reads the ARP and ND tables under their own locks, never inside
 *   cm.mutex.
 * - Multicast (ipoib_multicast.c): groups are joined and left under RTNL
 *   and priv->mcast_mutex, from priv->mcast_work or from ndo_stop itself. Transmit
 *   looks groups up in priv->mcast_hash under RCU and may add a send-only
 *   group; changes of the list and hash table (always together), the
 *   send-only count and join results take mcast_lock (spinlock, BH off).
 * - Address handles are reference counted (ipoib_ah); the last put may
 *   come from NAPI, so destruction is deferred to priv->wq.
 * - priv->announce_left and the debugfs file names change under RTNL only
 *   (netdev notifier, announce_work); address notifiers, IPv6's atomic,
 *   only set IPOIB_FLAG_ADDR_NEW and queue announce_work.
 * - Connected mode (ipoib_cm*.h, ipoib_cm*.c): peers and channels.
 *   priv->cm.lock (spinlock, BH off) guards the peer table (written
 *   under it, read under RCU or it), peer->tx (__rcu: published and
 *   unpublished under it), peer->queue, a channel's state as transmit
 *   sees it, and every post to a channel's send queue (with the one
 *   gather list, priv->cm.tx_sg_list). priv->cm.mutex serialises state
 *   changes (ipoib_cm_step(), which takes cm.lock for what transmit
 *   sees), the use of a channel's cm_id, and priv->cm.chans; it is held
 *   briefly, never across QP creation, buffer allocation or a drain.
 *   cm.mutex nests outside cm.lock. A channel's set-up work owns its QP
 *   until it ends (IPOIB_CM_HOLD_SETUP). Peers are kref'd (the table and
 *   each channel) and freed after a grace period. A channel is released
 *   by the release work once all its holds are gone (the last completion
 *   of a draining QP drops one, in NAPI), and freed after a grace period:
 *   NAPI finds it by wc->qp's context or by value in priv->cm.by_qp
 *   (RCU), transmit through peer->tx (RCU, cm.lock). Without an SRQ each
 *   channel's receive ring sits in priv->cm.nonsrq[] (__rcu, read by
 *   NAPI), unpublished before that grace period. Drained channels wait
 *   on priv->cm.release_list, or, with a cm_id while the port is down,
 *   on priv->cm.parked (both under cm.release_lock); once listed, a
 *   channel's cm_id no longer changes and is read without cm.mutex.
 * - The fabric implementation (ipoib_fabric_*.c) is chosen when the
 *   interface is created and never changes.
 * - The IB fabric's group reports (ipoib_fabric_ib_notice.c): per-port
 *   agents are found, made and (ipoib_fabric_ib_remove) freed under
 *   ipoib_notice_mutex (taken under RTNL by mcast_watch); a port's
 *   listeners change, and reports are delivered to them, under its
 *   listeners_mutex (MAD handlers run in process context); its users and
 *   subscription state under its spinlock (IRQs off, so that any
 *   context may take it).
 * - Children (P_Key partitions, ipoib_child.c) sit on hca->ports with
 *   their parents; they are created and deleted under RTNL only, and a
 *   parent leaves only with all of its children in one unregister batch
 *   (ipoib_remove_one), so priv->parent never dangles while a child is
 *   registered (a child's destructor may run later: it reads no parent).
 * - The states of channels, paths and groups are written by one setter
 *   each, which traces the change (ipoib_trace.h; the tracepoints take
 *   no lock of ours): ipoib_cm_set_state() under cm.lock (and cm.mutex
 *   for each transition but the last, to DEAD; a channel's first state
 *   is set as it is made), ipoib_path_set_state() under path_lock,
 *   ipoib_mcast_set_state() under mcast_mutex (a group's first state as
 *   it is linked, under mcast_lock).
 */
#ifndef IPOIB_H
#define IPOIB_H

#include <linux/netdevice.h>
#include <linux/delay.h>
#include <linux/mutex.h>
#include <linux/list.h>
#include <linux/kref.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/llist.h>
#include <linux/hashtable.h>
#include <linux/idr.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sa.h>

#include "ipoib_compat.h"
#include "ipoib_wire.h"

#define DRV_NAME "ib_ipoib"

/* Until the broadcast group tells us its MTU: a 2048-byte IB MTU. */
#define IPOIB_DEFAULT_IB_MTU	2048
#define IPOIB_UD_MTU(ib_mtu)	((ib_mtu) - IPOIB_ENCAP_LEN)
/* UD receives start with a 40-byte GRH area (RFC 4391 s6, Figure 4) */
#define IPOIB_GRH_LEN		40
/*
 * On transmit the stack builds [pseudo header: 20-octet destination]
 * [encapsulation header] (header_ops->create); we strip the pseudo header
 * before posting. On receive we push a zeroed pseudo header so that packet
 * sockets see the same layout both ways.
 */
#define IPOIB_PSEUDO_LEN	IPOIB_ADDR_LEN
#define IPOIB_HARD_LEN		(IPOIB_PSEUDO_LEN + IPOIB_ENCAP_LEN)

/* wr_id: slot number, or-ed with these */
#define IPOIB_OP_RECV		BIT_ULL(31)
#define IPOIB_OP_CM		BIT_ULL(30)

/* Unresolved destinations hold a few packets, as ARP does. */
#define IPOIB_PATH_QUEUE_LEN	8
#define IPOIB_MAX_PATHS		4096
#define IPOIB_PATH_HASH_BITS	10
#define IPOIB_PATH_IDLE		(60 * HZ)
#define IPOIB_PATH_RETRY	(2 * HZ)
/* the SA not reachable for a moment (-EAGAIN: its AH follows port events) */
#define IPOIB_PATH_RETRY_SOON	(HZ / 10)
#define IPOIB_MCAST_QUEUE_LEN	8
#define IPOIB_MCAST_HASH_BITS	10
/*
 * Send-only groups: at most max_sendonly (the least recently used one
 * is left for a new one), and left when idle (as paths are dropped).
 */
#define IPOIB_MAX_SENDONLY_DEFAULT	4096
#define IPOIB_MAX_SENDONLY_LIMIT	65536
#define IPOIB_SENDONLY_IDLE	IPOIB_PATH_IDLE
/* umcast: how soon to look again at a group left to userspace */
#define IPOIB_UMCAST_RECHECK	(2 * HZ)
/* Carrier on: announce our addresses now and twice more (DAD may lag). */
#define IPOIB_ANNOUNCE_REPEAT	2
#define IPOIB_ANNOUNCE_GAP	(3 * HZ / 2)

/* Queue depths are powers of two within these bounds (module parameters). */
#define IPOIB_MIN_QUEUE_SIZE	2
#define IPOIB_MAX_QUEUE_SIZE	8192

extern unsigned int ipoib_sendq_size;
extern unsigned int ipoib_recvq_size;
extern int ipoib_debug_level;
extern int ipoib_mcast_debug_level;
extern int ipoib_data_debug_level;
extern int ipoib_cm_data_debug_level;
extern unsigned int ipoib_roce_qkey;
extern bool ipoib_cm_uc;
extern bool ipoib_cm_bidir;
extern bool ipoib_cm_srq;
extern unsigned int ipoib_max_nonsrq_conn_qp;
extern bool ipoib_sendonly_nonmember;
extern int ipoib_tx_batch;
extern unsigned int ipoib_max_sendonly;

struct ipoib_dev;
struct ipoib_path;
struct ipoib_mcast;

/* What a multicast join tells us about the group (RFC 4391 s5). */
struct ipoib_mcast_params {
	u32 qkey;
	unsigned int ib_mtu;		/* bytes */
	u16 mlid;			/* IB only; 0 on RoCE */
	struct rdma_ah_attr ah_attr;	/* how to send to the group */
};

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
	/*
	 * umcast: true if userspace already holds a membership of mgid
	 * (atomic context); NULL where the fabric keeps no such record.
	 */
	bool (*user_joined)(struct ipoib_dev *priv, const u8 *mgid);
	/* One line for logs: where the traffic goes. */
	void (*describe)(struct ipoib_dev *priv, char *buf, size_t len);
	/*
	 * Start resolving path->dgid (process context). The fabric later
	 * calls ipoib_path_resolved() exactly once, unless path_cancel()
	 * ran first. path_cancel() sleeps until no callback can run.
	 */
	int (*path_resolve)(struct ipoib_dev *priv, struct ipoib_path *path);
	void (*path_cancel)(struct ipoib_dev *priv, struct ipoib_path *path);
	/*
	 * Free path->fabric_priv where RCU readers (cm_path) may still
	 * read it after path_cancel(): called once the path's grace
	 * period has passed, in any context. NULL: nothing to free late.
	 */
	void (*path_free)(struct ipoib_path *path);
	/*
	 * Join mc->mgid (process context, from mcast_work), filling
	 * mc->params. The fabric calls ipoib_mcast_joined() when the join
	 * completes, possibly before returning, and again with an error if
	 * the membership is lost later. mcast_leave() undoes a join or
	 * stops one in progress, and sleeps until no callback can run.
	 */
	int (*mcast_join)(struct ipoib_dev *priv, struct ipoib_mcast *mc);
	void (*mcast_leave)(struct ipoib_dev *priv, struct ipoib_mcast *mc);
	/*
	 * Follow the creation and deletion of groups while @on (under RTNL,
	 * may sleep): the fabric reports them with ipoib_mcast_group_event()
	 * until the call with @on false returns. An error (only when
	 * turning on, said in the log): not watching. NULL: no fabric
	 * event tells of groups (on RoCE a send needs no group).
	 */
	int (*mcast_watch)(struct ipoib_dev *priv, bool on);
	/*
	 * While @on (and watching; under RTNL), report every group of the
	 * interface's partition that the fabric knows with
	 * ipoib_mcast_group_event(created): soon, and again whenever the
	 * fabric's view is renewed (a new SM). An error: not listing.
	 * NULL: the fabric cannot list its groups.
	 */
	int (*mcast_list)(struct ipoib_dev *priv, bool on);
	/*
	 * The primary path for a CM REQ to a resolved path's GID (atomic
	 * context, path READY): the SA's record on IB, a RoCE v2 record
	 * built from the resolved MAC and hop limit on RoCE.
	 */
	void (*cm_path)(struct ipoib_dev *priv, struct ipoib_path *path,
			struct sa_path_rec *rec);
	/* The link's speed in Mbit/s or SPEED_UNKNOWN (under RTNL). */
	u32 (*link_speed)(struct ipoib_dev *priv);
	/*
	 * Can a peer's unicast to our address arrive, and can our sends
	 * resolve their next hop (process context)? 0: yes. -EAGAIN: not
	 * yet, and it comes by itself (RoCE: IPv6 duplicate address
	 * detection of GID 0's address on the underlay); -ENOENT: GID 0
	 * is no address there (yet, or ever); -EADDRINUSE: never, until
	 * the administrator acts. @why (@len) then says what waits.
	 * Carrier waits for 0. NULL: always 0.
	 */
	int (*link_ready)(struct ipoib_dev *priv, char *why, size_t len);
	/*
	 * GID 0 is gone from the port's table and has not come back
	 * (process context, no RTNL held; the call may take it): have the
	 * core place it again. NULL: it comes back by itself.
	 */
	void (*gid_restore)(struct ipoib_dev *priv);
	/*
	 * The core keeps a GID's table entry for as long as the GID is
	 * there (RoCE: entries come and go with the underlay's addresses)
	 * and does not rewrite the table at port events (InfiniBand does,
	 * the same GIDs in new entries): a held entry of GID 0 that is no
	 * longer the table's means GID 0 went.
	 */
	bool gid_entries_kept;
};

extern const struct ipoib_fabric_ops ipoib_fabric_ib;
extern const struct ipoib_fabric_ops ipoib_fabric_roce;
const struct ipoib_fabric_ops *ipoib_fabric_for_port(struct ib_device *ca,
						     u32 port);
int ipoib_fabric_ib_register(void);
void ipoib_fabric_ib_unregister(void);
/* after an RDMA device's interfaces are gone, before it goes */
void ipoib_fabric_ib_remove(struct ib_device *ca);
/* ipoib_fabric_ib_notice.c: the IB fabric's mcast_watch and mcast_list */
int ipoib_ib_notice_init(void);
void ipoib_ib_notice_exit(void);
int ipoib_ib_mcast_watch(struct ipoib_dev *priv, bool on);
int ipoib_ib_mcast_list(struct ipoib_dev *priv, bool on);

/* One RDMA device we serve; the ib_client's per-device data. */
struct ipoib_hca {
	struct ib_device *ca;
	struct mutex lock;		/* protects ports, see top of file */
	struct list_head ports;		/* struct ipoib_dev.hca_node */
	struct ib_event_handler event_handler;
	/* ours, and one per interface until its verbs objects are gone */
	refcount_t users;
	struct completion gone;		/* users reached zero */
};

enum ipoib_flags {
	IPOIB_FLAG_QP_READY,	/* UD QP is in RTS */
	IPOIB_FLAG_OPER_UP,	/* interface is open: joins may run */
	IPOIB_FLAG_REJOIN,	/* port error/active, new GID 0: join again */
	IPOIB_FLAG_RESTART,	/* transmit timeout: restart unconditionally */
	IPOIB_FLAG_ANNOUNCE,	/* carrier came on: tell neighbours our QPN */
	IPOIB_FLAG_CM_UP,	/* listening, SRQ posted: connections welcome */
	IPOIB_FLAG_DATAPATH,	/* open and the datapath up (ipoib_main.c) */
	IPOIB_FLAG_PKEY_WAIT,	/* open, but our P_Key is not in the table */
	IPOIB_FLAG_GID_CHECK,	/* GID table changed: is ours still GID 0? */
	IPOIB_FLAG_SM_NEW,	/* new SM or SA: failed joins retry now */
	IPOIB_FLAG_ADDR_NEW,	/* an address was added: announce it */
	IPOIB_FLAG_PORT_DOWN,	/* port error: connections are suspect */
	IPOIB_FLAG_MTU_HINT,	/* said since open: the MTU rules out IPv6 */
	IPOIB_FLAG_NO_GID_ADDR,	/* GID 0 was no underlay address: no wait */
	IPOIB_FLAG_DUP_GID_ADDR, /* said that GID 0's address is a duplicate */
	IPOIB_FLAG_GID_GONE_SAID, /* said that closing connections breaks CM */
};

/* A reference-counted address handle: senders hold it until completion. */
struct ipoib_ah {
	struct ib_ah *ah;
	struct kref ref;
	struct ipoib_dev *priv;
	struct llist_node dead;
	struct rcu_head rcu;		/* ipoib_ah_put_deferred() */
};

enum ipoib_path_state {
	IPOIB_PATH_RESOLVING,	/* fabric query in flight */
	IPOIB_PATH_READY,	/* ah valid */
	IPOIB_PATH_FAILED,	/* retry after IPOIB_PATH_RETRY */
};

/* A destination GID: how to reach it (one per peer port, any QPN). */
struct ipoib_path {
	struct hlist_node node;
	struct rcu_head rcu;
	struct ipoib_dev *priv;
	union ib_gid dgid;
	enum ipoib_path_state state;
	struct ipoib_ah *ah;		/* READY: valid; else NULL */
	struct sk_buff_head queue;	/* waiting for resolution */
	unsigned long last_used;	/* jiffies of the last transmit */
	unsigned long retry_at;		/* IPOIB_PATH_FAILED: when to try again */
	int status;			/* last resolution result */
	struct rdma_ah_attr ah_attr;	/* filled by the fabric */
	struct work_struct resolve_work;
	struct work_struct resolved_work;
	struct list_head gc_node;	/* private lists while tearing down */
	void *fabric_priv;		/* owned by the fabric */
	/* shown in debugfs */
	u16 dlid;
	u8 sl;
	u8 rate;			/* enum ib_rate */
	u8 mtu;				/* enum ib_mtu, 0 if none */
};

enum ipoib_mcast_state {
	IPOIB_MCAST_IDLE,	/* not joined; join when due */
	IPOIB_MCAST_JOINING,	/* fabric join in flight */
	IPOIB_MCAST_JOINED,	/* attached (full member) and ah valid */
	IPOIB_MCAST_REJOINING,	/* the SA lost it: joining again, still used */
	IPOIB_MCAST_FAILED,	/* retry at retry_at */
};

struct ipoib_mcast {
	struct list_head list;		/* priv->mcasts */
	struct hlist_node node;		/* priv->mcast_hash, by MGID */
	struct list_head so_node;	/* priv->mcast_so_list if sendonly */
	struct rcu_head rcu;
	struct ipoib_dev *priv;
	u8 mgid[IPOIB_GID_LEN];
	enum ipoib_mcast_state state;	/* mcast_mutex; READ_ONCE on transmit */
	bool sendonly;			/* joined for sending only */
	bool wanted;			/* in the device's multicast list */
	bool attached;			/* QP attached (full member) */
	bool rejoin;			/* lost on the SA; waits for the link */
	bool sm_new;			/* joining when the SM or SA changed */
	bool nonmember;			/* the join is a NonMember's (router) */
	bool evicted;			/* mcast_lock: send-only, to leave */
	/* under mcast_lock: */
	bool router;			/* listed or reported while allmulti */
	bool sa_created;		/* the SA reported it created ... */
	bool sa_deleted;		/* ... or deleted */
	unsigned int backoff;		/* seconds, capped */
	unsigned long retry_at;
	unsigned long created;
	unsigned long last_used;
	struct ipoib_ah *ah;
	struct sk_buff_head queue;	/* waiting for a send-only join */
	struct ipoib_mcast_params params;
	/*
	 * What the last completed join gave (the MLID attached, for a
	 * rejoin and the detach; debugfs). Under mcast_lock.
	 */
	struct {
		u32 qkey;
		unsigned int mtu;
		u16 mlid;
		u8 rate;		/* enum ib_rate */
	} joined;
	void *fabric_priv;		/* owned by the fabric */
	/* set by ipoib_mcast_joined(), consumed by the multicast work */
	bool join_done;
	int join_status;
	bool join_lost;			/* the SA lost it (-ENETRESET) */
};

/*
 * A posted UD receive is two pieces: the GRH area and the encapsulation
 * header land in a slot of rx_heads, the packet in a page of its own, so
 * a 4 KiB datagram costs one order-0 page, not an 8 KiB head.
 */
struct ipoib_rx_buf {
	struct page *page;	/* from rx_pool; NULL while not posted */
	u64 page_mapping;
};

/*
 * A datagram is at most 4 KiB: its head and a few fragments are gathered
 * (the payload of a TCP segment spans one or two pages); more are copied.
 */
#define IPOIB_UD_TX_SGE		4

struct ipoib_tx_buf {
	struct sk_buff *skb;
	struct ipoib_ah *ah;
	/* chained to the next slot's until the doorbell (xmit_more) */
	struct ib_ud_wr wr;
	u64 mapping[IPOIB_UD_TX_SGE];	/* the head, then each fragment */
	struct ib_sge sge[IPOIB_UD_TX_SGE];
};

/* Send completions of one poll, for byte queue limits. */
struct ipoib_tx_done {
	unsigned int pkts;
	unsigned int bytes;
};

/* Drops by reason, beyond the standard netdev statistics. */
struct ipoib_counters {
	atomic_long_t rx_short;		/* shorter than GRH + header */
	atomic_long_t rx_bad_type;	/* Type not in RFC 4391 Table 1 */
	atomic_long_t rx_own_mcast;	/* our own multicast looped back */
	atomic_long_t rx_no_buf;	/* no buffer to refill: dropped */
	atomic_long_t tx_no_path;	/* queue to an unresolved path full */
	atomic_long_t tx_no_carrier;	/* sent while the link was down */
	atomic_long_t tx_bad_daddr;	/* no usable destination */
	atomic_long_t tx_mcast_limit;	/* too many send-only groups */
	atomic_long_t mcast_sendonly_evicted; /* left for a newer one */
	atomic_long_t tx_too_big;	/* ICMP "too big" sent instead */
	atomic_long_t cm_bad_pdata;	/* REQ/REP private data refused */
	atomic_long_t cm_rx_buffers;	/* gauge: 64 KiB receive buffers */
	atomic_long_t cm_crossed;	/* REQs crossed (RFC 4755 s3.3) */
	atomic_long_t cm_connections;	/* connections established */
	atomic_long_t cm_failures;	/* attempts or connections failed */
	atomic_long_t cm_setup_expired;	/* not live in time: closed */
	atomic_long_t cm_no_room;	/* send CQ full: a channel refused */
	atomic_long_t cm_no_last_wqe;	/* SRQ QP drained without the event */
	atomic_long_t cm_rnr_failures;	/* peer took no data: connection ended */
	atomic_long_t cm_tx_stalled;	/* dropped: its connection is stuck */
	atomic_long_t cm_peer_moved;	/* closed: no neighbour names its peer */
	atomic_long_t cm_gid_stale;	/* set-up found GID 0 gone: sent nothing */
	atomic_long_t cm_rx_misdirected; /* data on ours, cm_bidir off */
	atomic_long_t cm_tx_csum_pending; /* checksum left to the receiver */
	atomic_long_t cm_rx_csum_pending; /* ... and taken as such */
	atomic_long_t cm_rx_bad_csum_imm; /* its immediate data out of bounds */
	atomic_long_t tx_csum_sw;	/* checksums we completed for the stack */
	atomic_long_t tx_batched;	/* posted with an earlier one's doorbell */
	atomic_long_t restarts;		/* datapath restarts done */
	atomic_long_t path_resolutions;
	atomic_long_t path_failures;	/* no path: its packets dropped */
	atomic_long_t mcast_joins;
	atomic_long_t mcast_join_failures;
	atomic_long_t mcast_sa_reports;	/* our groups created or deleted */
};

/* Connected mode (RFC 4755), ipoib_cm.c. Modes: IPOIB_MODE_* (if_link.h) */
#define IPOIB_CM_MTU		65520	/* the largest IPoIB MTU, as in-tree */
#define IPOIB_CM_BUF_SIZE	(IPOIB_CM_MTU + IPOIB_ENCAP_LEN)
#define IPOIB_CM_RX_PAGES	DIV_ROUND_UP(IPOIB_CM_BUF_SIZE, PAGE_SIZE)
#define IPOIB_CM_TX_SGE		(MAX_SKB_FRAGS + 1)	/* head + fragments */
#define IPOIB_CM_MAX_CONNS	256
#define IPOIB_CM_MAX_NONSRQ_DEFAULT	128	/* max_nonsrq_conn_qp, in-tree's */
#define IPOIB_CM_MAX_NONSRQ	4096
#define IPOIB_CM_IDLE		(300 * HZ)
/* how long a connection's peer must stay unnamed by any neighbour entry,
 * and the connection idle, before the neighbour sweep closes it
 */
#define IPOIB_NEIGH_RECHECK	HZ
/* how long a busy suspect keeps the sweep coming back: one that only
 * sends to us stays unnamed, and each sweep walks whole neighbour tables
 */
#define IPOIB_NEIGH_GIVEUP	(10 * IPOIB_NEIGH_RECHECK)

struct ipoib_cm_tx_buf {
	struct sk_buff *skb;
	u64 mapping[IPOIB_CM_TX_SGE];	/* the head, then each fragment */
};

/* a message lands in the pages in order, its encapsulation header first */
struct ipoib_cm_rx_buf {
	struct page *pages[IPOIB_CM_RX_PAGES];
	u64 mapping[IPOIB_CM_RX_PAGES];
};

/*
 * Receive buffers of connected mode: the SRQ's, or on an HCA without one
 * (or with cm_srq=0) a ring per connection, posted to its QP.
 */
struct ipoib_cm_rx_ring {
	struct ipoib_cm_rx_buf *buf;
	unsigned int size;
	struct page_pool *pool;		/* its pages, recycled */
	struct ib_qp *qp;		/* NULL: the SRQ's ring */
	struct ipoib_cm_chan *chan;	/* whose ring, if not the SRQ's */
	unsigned int index;		/* 0: the SRQ, n: priv->cm.nonsrq[n - 1] */
	u16 gen;			/* in wr_id: stale completions miss */
	atomic_t posted;		/* per channel: not yet completed */
	bool closing;			/* per channel: draining, no reposts */
};

struct ipoib_cm_chan;

struct ipoib_cm {
	struct workqueue_struct *wq;	/* NULL: no connected mode here */
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	bool use_srq;			/* else a receive ring per channel */
	struct ib_srq *srq;
	struct ipoib_cm_rx_ring srq_ring;
	struct ipoib_cm_rx_ring __rcu **nonsrq;	/* per-channel rings */
	unsigned int nonsrq_max;	/* slots in nonsrq */
	struct ida nonsrq_ida;
	u16 nonsrq_gen;
	struct ib_cm_id *listen[2];	/* Linux and RFC service IDs */
	struct mutex mutex;		/* channel transitions, their cm_ids */
	spinlock_t lock;		/* peers, chans, states, sends */
	DECLARE_HASHTABLE(peers, 8);	/* struct ipoib_cm_peer, by address */
	unsigned int npeers;
	struct list_head chans;		/* every channel not yet released */
	atomic_t nchans;		/* ... and those being released */
	DECLARE_HASHTABLE(by_qp, 6);	/* channels by QP, for NAPI */
	atomic_t send_room;		/* send CQ entries not reserved */
	unsigned int max_conns;		/* send CQ entries / send queue */
	atomic_t tx_stopped;		/* a full channel stopped the queue */
	struct delayed_work stall_work;	/* wakes a queue a stuck one stopped */
	unsigned int tx_sge;		/* gather entries per send */
	struct ib_sge tx_sg_list[IPOIB_CM_TX_SGE]; /* under lock: sends */
	spinlock_t release_lock;	/* the two lists, any context */
	struct list_head release_list;	/* drained channels */
	struct list_head parked;	/* ... waiting for the port */
	struct work_struct release_work;
	struct delayed_work gc_work;
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
	/* GID index 0, in our hardware address: ipoib_local_gid() */
	union ib_gid local_gid;
	seqlock_t gid_lock;	/* local_gid changes (under RTNL) */
	unsigned long flags;	/* enum ipoib_flags */
	struct list_head hca_node;
	struct ipoib_dev *parent;	/* a child's (a P_Key partition) */
	bool legacy_child;		/* made by sysfs create_child */
	bool umcast;			/* leave userspace's groups to it */
	struct workqueue_struct *wq;	/* ordered: paths, AHs */

	const struct ipoib_fabric_ops *fabric;
	void *fabric_priv;		/* the fabric's, mcast_watch on .. off */

	/* UD transport, ndo_init .. priv_destructor */
	struct ib_pd *pd;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct ib_qp *qp;
	unsigned int sendq_size;
	unsigned int recvq_size;
	unsigned int ud_tx_sge;		/* gather entries per UD send */
	bool hw_doorbell;		/* posting costs the device a doorbell */
	u16 rx_coal_usecs;	/* ethtool -C, applied to the receive CQs */
	u16 rx_coal_frames;
	struct napi_struct napi;
	struct ipoib_rx_buf *rx_ring;
	struct page_pool *rx_pool;	/* the UD ring's pages, recycled */
	struct page **rx_heads;		/* IPOIB_RX_HEADS_PER_PAGE slots each */
	u64 *rx_heads_mapping;
	struct ipoib_tx_buf *tx_ring;
	unsigned int tx_head;		/* next slot to fill */
	unsigned int tx_tail;		/* next slot to complete */
	unsigned int tx_unposted;	/* slots before tx_head not posted */
	bool tx_more;			/* this transmit's xmit_more */
	unsigned int tx_unposted_bytes;
	/* counted for BQL as sent but never posted; NAPI completes them */
	atomic_t tx_bql_unsent;
	struct delayed_work reset_work;	/* datapath restarts, P_Key changes */
	struct delayed_work announce_work; /* repeats of the carrier-on notice */
	struct delayed_work gid_restore_work; /* GID 0 gone: fabric->gid_restore */
	atomic_t gid_restore_left;	/* its tries left (reset_work sets) */
	unsigned int announce_left;

	/* address handles whose last reference is gone */
	struct llist_head dead_ahs;
	struct work_struct ah_reap_work;

	/* paths, ipoib_arp.c */
	spinlock_t path_lock;
	DECLARE_HASHTABLE(paths, IPOIB_PATH_HASH_BITS);
	unsigned int npaths;
	struct delayed_work path_gc_work;
	struct work_struct path_flush_work;	/* ipoib_path_flush_soon() */
	struct delayed_work neigh_sweep_work;	/* close moved peers' */

	/* multicast, ipoib_multicast.c */
	struct mutex mcast_mutex;
	spinlock_t mcast_lock;		/* mcasts list changes, join results */
	struct list_head mcasts;
	DECLARE_HASHTABLE(mcast_hash, IPOIB_MCAST_HASH_BITS);
	struct list_head mcast_so_list;	/* send-only groups, oldest first */
	unsigned int mcast_sendonly;	/* ... how many (mcast_lock) */
	unsigned int mcast_evicted;	/* ... of them evicted, still here */
	struct ipoib_mcast *broadcast;
	struct delayed_work mcast_work;
	/* polls fabric->link_ready while carrier waits for it (no RTNL) */
	struct delayed_work link_wait_work;
	unsigned long link_wait_since;	/* jiffies, 0: not waiting */
	spinlock_t mcast_sched_lock;	/* orders mcast_work (re)scheduling */
	/* the broadcast group's IB MTU: written under RTNL, READ_ONCE without */
	unsigned int mcast_mtu;
	u8 bcast_tclass;		/* ... and its TClass, likewise */
	bool mcast_router;		/* IFF_ALLMULTI in effect (RFC 4391 s11) */
	bool mcast_allmulti;		/* IFF_ALLMULTI as last seen */
	bool mcast_watching;		/* the fabric's mcast_watch is on */
	bool mcast_listing;		/* the fabric's mcast_list is on */
	u32 mcast_router_count;		/* groups with router set (mcast_lock) */
	unsigned int admin_mtu;		/* set by the user; 0: follow group */
	bool mtu_internal;		/* our own dev_set_mtu() is running */

	u16 mode;			/* IPOIB_MODE_DATAGRAM/_CONNECTED */
	struct ipoib_cm cm;

	struct ipoib_counters counters;
	struct dentry *debugfs_mcg;
	struct dentry *debugfs_path;
	struct dentry *debugfs_cm;
};

static inline struct ipoib_dev *ipoib_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

/* ipoib_ib.c: UD transport resources, QP state and the data path */
int ipoib_ib_init(struct ipoib_dev *priv);
void ipoib_ib_cleanup(struct ipoib_dev *priv);
int ipoib_ib_open(struct ipoib_dev *priv);
void ipoib_ib_stop(struct ipoib_dev *priv);
int ipoib_ib_set_qkey(struct ipoib_dev *priv, u32 qkey);
void ipoib_arm_cq(struct ipoib_dev *priv, struct ib_cq *cq);
int ipoib_csum_complete(struct ipoib_dev *priv, struct sk_buff *skb);
void ipoib_rx_headers(struct sk_buff *skb, u16 type);
void ipoib_tx_too_big(struct ipoib_dev *priv, struct sk_buff *skb,
		      unsigned int mtu);
bool ipoib_ud_tx_slack(struct ipoib_dev *priv);
void ipoib_ud_kick(struct ipoib_dev *priv);
int ipoib_dma_map_skb(struct ipoib_dev *priv, struct sk_buff *skb, u64 *map,
		      struct ib_sge *sge);
void ipoib_dma_unmap_skb(struct ipoib_dev *priv, struct sk_buff *skb,
			 const u64 *map, unsigned int nfrags);
struct page_pool *ipoib_rx_pool_create(struct ipoib_dev *priv,
				       unsigned int size);
struct page *ipoib_rx_pool_get(struct ipoib_dev *priv, struct page_pool *pool,
			       gfp_t gfp, u64 *mapping);
void ipoib_rx_pool_release(struct ipoib_dev *priv, u64 mapping,
			   unsigned int len);
void ipoib_rx_pool_put(struct ipoib_dev *priv, struct page_pool *pool,
		       struct page *page, u64 mapping);
void ipoib_rx_copy(struct ipoib_dev *priv, struct sk_buff *skb,
		   const void *from, u64 mapping, unsigned int len);

/* More fragments than @max_sge gathers, or a chain of skbs: one copy. */
static inline int ipoib_tx_gatherable(struct sk_buff *skb,
				      unsigned int max_sge)
{
	if (likely(skb_shinfo(skb)->nr_frags < max_sge &&
		   !skb_has_frag_list(skb)))
		return 0;
	return skb_linearize(skb);
}

void ipoib_tx_unsent(struct ipoib_dev *priv, unsigned int bytes);
netdev_tx_t ipoib_ud_send(struct ipoib_dev *priv, struct sk_buff *skb,
			  struct ipoib_ah *ah, u32 qpn, u32 qkey);
struct ipoib_ah *ipoib_ah_create(struct ipoib_dev *priv,
				 struct rdma_ah_attr *attr);
void ipoib_ah_put(struct ipoib_ah *ah);
void ipoib_ah_put_deferred(struct ipoib_ah *ah);
/*
 * GID 0 as it is now: a GID change (ipoib_follow_gid, under RTNL) may
 * rewrite it while NAPI, a path query or a CM handler reads it.
 */
static inline void ipoib_local_gid(struct ipoib_dev *priv, union ib_gid *gid)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&priv->gid_lock);
		*gid = priv->local_gid;
	} while (read_seqretry(&priv->gid_lock, seq));
}

static inline void ipoib_ah_get(struct ipoib_ah *ah)
{
	kref_get(&ah->ref);
}

void ipoib_ah_reap(struct work_struct *work);

/*
 * Just before a send is posted: timestamp it and let go of its route. The
 * socket stays charged until the send completes, so that TCP's small
 * queues and the socket's send buffer see what waits in our rings (a
 * connection's sends let go of it earlier: ipoib_cm_send()).
 */
static inline void ipoib_tx_release_route(struct sk_buff *skb)
{
	skb_tx_timestamp(skb);
	skb_dst_drop(skb);
}

/* ipoib_arp.c: destination GID -> address handle */
void ipoib_path_init(struct ipoib_dev *priv);
netdev_tx_t ipoib_path_xmit(struct ipoib_dev *priv, struct sk_buff *skb,
			    const struct ipoib_lladdr *dst);
void ipoib_path_resolved(struct ipoib_path *path, int status);
void ipoib_path_flush(struct ipoib_dev *priv);
void ipoib_path_flush_soon(struct ipoib_dev *priv);
void ipoib_path_cleanup(struct ipoib_dev *priv);
void ipoib_neigh_carrier_on(struct net_device *dev);
int ipoib_neigh_register(void);
void ipoib_neigh_unregister(void);

/* ipoib_multicast.c: groups, joins, carrier */
void ipoib_mcast_init(struct ipoib_dev *priv);
void ipoib_mcast_start(struct ipoib_dev *priv);
void ipoib_mcast_stop(struct ipoib_dev *priv);
void ipoib_mcast_restart(struct ipoib_dev *priv);
netdev_tx_t ipoib_mcast_xmit(struct ipoib_dev *priv, struct sk_buff *skb,
			     const u8 *mgid);
void ipoib_mcast_joined(struct ipoib_mcast *mc, int status);
void ipoib_mcast_group_event(struct ipoib_dev *priv, const u8 *mgid,
			     bool created);
void ipoib_mcast_port_event(struct ipoib_dev *priv);
void ipoib_mcast_sm_event(struct ipoib_dev *priv);
void ipoib_set_umcast(struct ipoib_dev *priv, bool on);

/* ipoib_announce.c: telling peers our QPN (gratuitous ARP, NA) */
void ipoib_announce_init(struct ipoib_dev *priv);
void ipoib_announce(struct ipoib_dev *priv);
int ipoib_announce_register(void);
void ipoib_announce_unregister(void);

/* ipoib_rtnl.c: works that take RTNL (see the locking rules) */
void ipoib_rtnl_work_queue(struct ipoib_dev *priv, struct delayed_work *dw,
			   unsigned long delay);
void ipoib_rtnl_work_queue_on(struct ipoib_dev *priv, struct delayed_work *dw,
			      unsigned long delay, int cpu);
void ipoib_rtnl_work_cancel(struct ipoib_dev *priv, struct delayed_work *dw);
bool ipoib_rtnl_work_begin(struct ipoib_dev *priv);
void ipoib_rtnl_work_end(struct ipoib_dev *priv);
void ipoib_rtnl_work_put(struct ipoib_dev *priv);
int ipoib_rtnl_init(void);
void ipoib_rtnl_exit(void);

/* ipoib_main.c */
void ipoib_setup(struct net_device *dev);
bool ipoib_is_ipoib(const struct net_device *dev);
int ipoib_intf_prepare(struct ipoib_dev *priv, struct ipoib_hca *hca,
		       u32 port, const struct ipoib_fabric_ops *fabric,
		       u16 pkey);
int ipoib_intf_register(struct ipoib_dev *priv);
void ipoib_apply_mtu(struct ipoib_dev *priv);
void ipoib_mtu_hint(struct ipoib_dev *priv);
int ipoib_set_mode(struct ipoib_dev *priv, u16 mode);

/* ipoib_child.c: P_Key children, by sysfs or rtnl */
int ipoib_child_add(struct ipoib_dev *ppriv, struct net_device *dev,
		    u16 pkey, bool legacy);
int ipoib_child_create(struct ipoib_dev *ppriv, u16 pkey);
int ipoib_child_delete(struct ipoib_dev *ppriv, u16 pkey);

/* ipoib_netlink.c: rtnl link kind "ipoib" */
extern struct rtnl_link_ops ipoib_link_ops;
int ipoib_netlink_init(void);
void ipoib_netlink_exit(void);

/* ipoib_sysfs.c: the in-tree driver's attributes */
extern const struct attribute_group ipoib_attr_group;

/* ipoib_cm.c: connected mode */
int ipoib_cm_init(struct ipoib_dev *priv);
void ipoib_cm_cleanup(struct ipoib_dev *priv);
bool ipoib_cm_capable(struct ipoib_dev *priv);
bool ipoib_cm_available(struct ipoib_dev *priv);
int ipoib_cm_open(struct ipoib_dev *priv);
void ipoib_cm_stop(struct ipoib_dev *priv);
void ipoib_cm_link_up(struct ipoib_dev *priv);
void ipoib_cm_gid_gone(struct ipoib_dev *priv);
void ipoib_cm_lag_backup(struct ipoib_dev *priv);
bool ipoib_cm_sends_to(struct ipoib_dev *priv, const u8 *ha);
unsigned int ipoib_cm_tx_addrs(struct ipoib_dev *priv, u8 *addrs,
			       unsigned int max);
int ipoib_cm_addr_cmp(const void *a, const void *b);
bool ipoib_cm_close_unnamed(struct ipoib_dev *priv, const u8 *unnamed,
			    unsigned int n);
int ipoib_cm_xmit(struct ipoib_dev *priv, struct sk_buff *skb,
		  struct ipoib_path *path, const struct ipoib_lladdr *dst);
void ipoib_cm_handle_tx(struct ipoib_dev *priv, struct ib_wc *wc);
void ipoib_cm_rx_seen(struct ipoib_dev *priv, const struct ib_qp *qp);
void ipoib_cm_show(struct ipoib_dev *priv, struct seq_file *m);

/* ipoib_cm_rx.c: connected mode's receive queues */
void ipoib_cm_handle_rx(struct ipoib_dev *priv, struct ib_wc *wc);

/* ipoib_fs.c: debugfs views (ibX_mcg, ibX_path) */
void ipoib_fs_init(void);
void ipoib_fs_exit(void);
void ipoib_fs_add(struct ipoib_dev *priv);
void ipoib_fs_del(struct ipoib_dev *priv);
void ipoib_fs_rename(struct ipoib_dev *priv);
void ipoib_fs_show_mcg(struct ipoib_dev *priv, struct seq_file *m);
void ipoib_fs_show_path(struct ipoib_dev *priv, struct seq_file *m);

/* ipoib_ethtool.c */
void ipoib_set_ethtool_ops(struct net_device *dev);

/* The port is ACTIVE, from the cache (not ib_query_port(): no RTNL) */
static inline bool ipoib_port_active(struct ipoib_dev *priv)
{
	enum ib_port_state state;

	return !ib_get_cached_port_state(priv->ca, priv->port, &state) &&
	       state == IB_PORT_ACTIVE;
}

/*
 * ipoib_test.c, in test builds only (make TEST_HOOKS=1; never in the
 * module users load): holds that widen race windows for the race
 * selftests. A restart asked for through the test_restart parameter
 * holds the next transmit between its look at the QP state and its post,
 * and the restart between its teardown and its bring-up; a connection's
 * set-up can hold between taking GID 0 and joining cm.chans, and a
 * path's resolution before it starts.
 */
#ifdef IPOIB_TEST_HOOKS
void ipoib_test_xmit_delay(void);
void ipoib_test_teardown(void);
void ipoib_test_exit(void);
extern unsigned int ipoib_test_restart_gap_ms;
extern int ipoib_test_stalled_ifindex;

static inline bool ipoib_test_rx_stalled(struct ipoib_dev *priv)
{
	return READ_ONCE(ipoib_test_stalled_ifindex) == priv->dev->ifindex;
}

extern atomic_t ipoib_test_rx_nopage;

static inline bool ipoib_test_rx_nopage_now(void)
{
	return atomic_add_unless(&ipoib_test_rx_nopage, -1, 0);
}

extern unsigned int ipoib_test_cm_gid_delay_ms;
extern unsigned int ipoib_test_path_delay_ms;

static inline void ipoib_test_pause(const unsigned int *ms)
{
	unsigned int v = READ_ONCE(*ms);

	if (v)
		msleep(v);
}

#define ipoib_test_restart_gap()  ipoib_test_pause(&ipoib_test_restart_gap_ms)
#define ipoib_test_cm_gid_delay() ipoib_test_pause(&ipoib_test_cm_gid_delay_ms)
#define ipoib_test_path_delay()	  ipoib_test_pause(&ipoib_test_path_delay_ms)
#else
static inline void ipoib_test_xmit_delay(void)
{
}

static inline void ipoib_test_exit(void)
{
}

static inline void ipoib_test_teardown(void)
{
}

static inline bool ipoib_test_rx_stalled(struct ipoib_dev *priv)
{
	return false;
}

static inline bool ipoib_test_rx_nopage_now(void)
{
	return false;
}

static inline void ipoib_test_restart_gap(void)
{
}

static inline void ipoib_test_cm_gid_delay(void)
{
}

static inline void ipoib_test_path_delay(void)
{
}
#endif

#define ipoib_warn_rl(priv, fmt, ...)					\
	net_ratelimited_function(netdev_warn, (priv)->dev, fmt, ##__VA_ARGS__)

/*
 * Debug messages. Where the in-tree driver's parameter asks for them
 * (debug_level, mcast_debug_level; data_debug_level, cm_data_debug_level
 * for what a dropped packet was) they print as there, at KERN_DEBUG.
 * Otherwise each call site is a dynamic debug one, off until turned on
 * (/sys/kernel/debug/dynamic_debug/control: module ib_ipoib, or a file,
 * function or line of it): netdev_dbg(), rate-limited for the datapath's.
 */
#define ipoib_dbg(priv, level, ...)					\
	do {								\
		const struct net_device *ipoib_dbg_dev = (priv)->dev;	\
									\
		if (ipoib_debug_level >= (level))			\
			netdev_printk(KERN_DEBUG, ipoib_dbg_dev,	\
				      __VA_ARGS__);			\
		else							\
			netdev_dbg(ipoib_dbg_dev, __VA_ARGS__);		\
	} while (0)

/* What a dropped packet was, for data_debug_level / cm_data_debug_level */
#define ipoib_data_dbg(level, priv, ...)				\
	do {								\
		const struct net_device *ipoib_dbg_dev = (priv)->dev;	\
									\
		if (unlikely((level) > 0)) {				\
			if (net_ratelimit())				\
				netdev_printk(KERN_DEBUG, ipoib_dbg_dev, \
					      __VA_ARGS__);		\
		} else {						\
			ipoib_netdev_dbg_ratelimited(ipoib_dbg_dev,	\
						     __VA_ARGS__);	\
		}							\
	} while (0)

#define ipoib_mcast_dbg(priv, ...)					\
	do {								\
		const struct net_device *ipoib_dbg_dev = (priv)->dev;	\
									\
		if (ipoib_mcast_debug_level > 0)			\
			netdev_printk(KERN_DEBUG, ipoib_dbg_dev,	\
				      __VA_ARGS__);			\
		else							\
			netdev_dbg(ipoib_dbg_dev, __VA_ARGS__);		\
	} while (0)

#endif /* IPOIB_H */
