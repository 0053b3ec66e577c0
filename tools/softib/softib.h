/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softib: a soft InfiniBand HCA for ib_ipoib's test bed, never for use.
 *
 * Each device has one port. Ports are cabled in pairs inside one kernel
 * (softib0 <-> softib1, softib2 <-> softib3, ...): a packet leaves a port
 * as a copy and is delivered by the receiving device's rx work, in order.
 * The subnet manager (opensm over umad) sweeps the pair through the
 * SMA in softib_sma.c and brings the ports to ACTIVE.
 *
 * Locking:
 * - port->lock (irqsave) guards the port's attributes and tables; the
 *   SMA, query verbs and the data path take it briefly.
 * - sdev->deliver_lock (bh) is held while a packet is delivered to the
 *   device's QPs; destroying a QP or changing its attachments takes it,
 *   so delivery never sees a QP being freed.
 * - qp->rq.lock / srq->rq.lock (irqsave) guard a receive queue,
 *   cq->lock (irqsave) a completion queue.
 */
#ifndef SOFTIB_H
#define SOFTIB_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_smi.h>

#define SOFTIB_PKEYS		64	/* P_Key table entries */
#define SOFTIB_GUIDS		8	/* GUIDInfo entries (GIDs) */
#define SOFTIB_MAX_QP		4096
#define SOFTIB_MAX_WR		8192
#define SOFTIB_MAX_SGE		32
#define SOFTIB_MAX_CQE		65536
#define SOFTIB_MAX_MCAST_QP	64	/* QPs attached to one group */
#define SOFTIB_MTU		IB_MTU_4096
#define SOFTIB_MAX_MSG		BIT(20)	/* RC/UC message, not split */
#define SOFTIB_PSN_MASK		0xffffff

/* port states as PortInfo carries them (IBA 14.2.5.6) */
enum softib_port_state {
	SOFTIB_PORT_NOP = 0,
	SOFTIB_PORT_DOWN = 1,
	SOFTIB_PORT_INIT = 2,
	SOFTIB_PORT_ARMED = 3,
	SOFTIB_PORT_ACTIVE = 4,
};

#define SOFTIB_EVENT_KINDS	7

/* what the port counts; shown in debugfs */
struct softib_counters {
	atomic64_t tx_packets;
	atomic64_t rx_packets;
	atomic64_t drop_link;		/* port not up, or no memory to copy */
	atomic64_t drop_dlid;		/* not our LID, no such group */
	atomic64_t drop_qpn;		/* no such QP, or not receiving */
	atomic64_t drop_pkey;		/* P_Key check failed */
	atomic64_t drop_qkey;		/* Q_Key check failed */
	atomic64_t drop_no_recv;	/* no receive posted */
	atomic64_t drop_len;		/* bigger than the receive buffer */
	atomic64_t drop_seq;		/* RC: not the PSN expected */
	atomic64_t rnr_naks;		/* RC: sent for want of a receive */
	atomic64_t retransmits;		/* RC: sends again after RNR NAK */
	atomic64_t cq_overflow;
	atomic64_t bad_mad;		/* SMPs answered with an error status */
	atomic64_t lost_cm_rtu;		/* lost on purpose: lose_cm_rtu */
	/* port events dispatched, in softib_main.c's softib_events order */
	atomic64_t events[SOFTIB_EVENT_KINDS];
	/*
	 * received by UD, RC and UC QPs, by the P_Key table entry they
	 * matched: which partition data travelled in, which both ends of a
	 * link cannot tell when they make the same mistake
	 */
	atomic64_t rx_pkey[SOFTIB_PKEYS];
};

struct softib_port {
	struct softib_dev *sdev;
	spinlock_t lock;		/* attributes, tables, violations */
	struct softib_port *peer;	/* the cable's other end */
	enum softib_port_state state;
	u16 lid;
	u16 sm_lid;
	u8 lmc;
	u8 sm_sl;
	u8 subnet_timeout;
	u8 neighbor_mtu;		/* enum ib_mtu */
	u8 vl_high_limit;
	u8 resp_time;
	u8 mkey_prot;
	u16 mkey_lease;
	u32 cap_mask;
	__be64 mkey;
	__be64 gid_prefix;
	__be64 guids[SOFTIB_GUIDS];
	u16 pkeys[SOFTIB_PKEYS];
	u8 sl2vl[8];
	u8 vlarb[4][64];		/* high, low: 32 (VL, weight) pairs each */
	u16 mkey_violations;
	u16 pkey_violations;
	u16 qkey_violations;
	struct softib_counters stats;
	atomic_t lose_cm_rtu;		/* tests: CM RTUs to lose when sent */
};

struct softib_dev {
	struct ib_device ibdev;
	unsigned int index;
	struct softib_port port;
	struct xarray qps;		/* QPN -> softib_qp */
	u32 next_qpn;
	spinlock_t deliver_lock;	/* qps and groups against delivery */
	struct list_head groups;	/* softib_group, deliver_lock */
	spinlock_t rx_lock;		/* rx_queue */
	struct list_head rx_queue;	/* softib_pkt arriving here */
	struct work_struct rx_work;
	spinlock_t event_lock;		/* pending_events */
	u32 pending_events;		/* BIT(enum ib_event_type) */
	bool dying;			/* event_lock: no more events */
	struct work_struct event_work;
	struct dentry *debugfs;
	struct dentry *debugfs_lose;
	struct dentry *debugfs_cable;	/* even ones: their pair's cable */
};

struct softib_pd {
	struct ib_pd ibpd;
};

struct softib_mr {
	struct ib_mr ibmr;
};

struct softib_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
};

struct softib_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* the ring, its indexes, armed */
	struct ib_wc *ring;
	u32 size;			/* a power of two */
	u32 head, tail;			/* produced, consumed */
	enum ib_cq_notify_flags armed;	/* 0: not armed */
	bool dying;			/* being destroyed: no notify */
	struct work_struct notify_work;
};

struct softib_rwqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge sge[SOFTIB_MAX_SGE];
};

/* a receive queue: of a QP or of an SRQ */
struct softib_rq {
	spinlock_t lock;		/* ring, indexes; a QP's state too */
	struct softib_rwqe *ring;
	u32 size;			/* a power of two */
	u32 max_wr;
	u32 max_sge;
	u32 head, tail;			/* posted, consumed */
};

struct softib_srq {
	struct ib_srq ibsrq;
	struct softib_rq rq;
	u32 limit;
};

/* an RC send kept until acknowledged: sent again after an RNR NAK */
struct softib_swqe {
	u64 wr_id;
	enum ib_wr_opcode opcode;
	__be32 imm;
	bool signaled;
	u32 psn;
	u32 len;
	u32 num_sge;
	struct ib_sge sge[SOFTIB_MAX_SGE];
};

struct softib_qp {
	struct ib_qp ibqp;
	enum ib_qp_state state;
	u16 pkey_index;
	u32 qkey;
	u8 port;
	u32 sq_psn;
	u32 max_send_wr;
	u32 max_send_sge;
	u32 max_inline;
	bool sig_all;
	struct softib_rq rq;		/* unused with an SRQ */
	struct softib_srq *srq;
	struct softib_cq *scq, *rcq;
	int groups;			/* attachments, deliver_lock */

	/* connected QPs (RC, UC): the peer, from modify_qp */
	u32 dest_qpn;
	u16 dlid;
	u8 sl;
	u8 path_bits;
	u8 timeout;			/* local ACK timeout, 4.096 us << n */
	u8 retry_cnt;
	u8 rnr_retry;			/* 7: for ever */
	u8 min_rnr_timer;		/* what our RNR NAKs ask for */
	u32 epsn;			/* rq.lock: the next PSN we take */
	bool comm_est;			/* rq.lock: data seen in RTR */

	/* RC requester: sq_lock, nested inside rq.lock */
	spinlock_t sq_lock;		/* the send ring and what follows */
	struct softib_swqe *sq;
	u32 sq_size;			/* a power of two */
	u32 sq_head, sq_tail;		/* posted, acknowledged */
	u32 next_psn;
	u8 rnr_left;
	bool resend;			/* RNR NAKed: resend_work resends */
	u32 resend_psn;
	unsigned long last_ack;		/* jiffies of the last response */
	struct delayed_work resend_work;
	struct delayed_work timeout_work;
};

/* one multicast group of a device: the QPs attached to (MGID, MLID) */
struct softib_group {
	struct list_head node;
	union ib_gid mgid;
	u16 mlid;
	unsigned int nqps;
	struct softib_qp *qps[SOFTIB_MAX_MCAST_QP];
};

/* what a packet is: its BTH opcode, in short */
enum softib_op {
	SOFTIB_OP_DATAGRAM,		/* UD, SMI, GSI */
	SOFTIB_OP_RC_SEND,
	SOFTIB_OP_UC_SEND,
	SOFTIB_OP_ACK,			/* RC: psn and all before taken */
	SOFTIB_OP_RNR_NAK,		/* RC: psn found no receive */
};

/* a packet on the cable: the LRH, GRH, BTH and DETH fields that matter */
struct softib_pkt {
	struct list_head node;
	enum softib_op op;
	u32 psn;
	u8 rnr_timer;			/* in an RNR NAK */
	u16 slid, dlid;
	u8 sl;
	bool has_grh;
	bool has_imm;
	struct ib_grh grh;
	u32 sqpn, dqpn;
	u32 qkey;
	u16 pkey;
	__be32 imm;
	u32 len;
	u8 data[];
};

static inline struct softib_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softib_dev, ibdev);
}

static inline struct softib_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct softib_qp, ibqp);
}

static inline struct softib_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct softib_cq, ibcq);
}

static inline struct softib_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct softib_srq, ibsrq);
}

static inline struct softib_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct softib_ah, ibah);
}

static inline bool softib_lid_mcast(u16 lid)
{
	return lid >= 0xc000 && lid < 0xffff;
}

/* PortInfo's violation counters stop at their maximum (IBA 14.2.5.6) */
static inline void softib_violation(u16 *counter)
{
	if (*counter != U16_MAX)
		(*counter)++;
}

/* IBA 10.9.3: the low 15 bits match and at least one is a full member */
static inline bool softib_pkey_match(u16 a, u16 b)
{
	return (a & 0x7fff) && (a & 0x7fff) == (b & 0x7fff) &&
	       ((a | b) & 0x8000);
}

/* softib_main.c */
void softib_port_event(struct softib_dev *sdev, enum ib_event_type type);

/* softib_sma.c */
int softib_process_mad(struct ib_device *ibdev, int mad_flags, u32 port_num,
		       const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		       const struct ib_mad *in, struct ib_mad *out,
		       size_t *out_mad_size, u16 *out_mad_pkey_index);
void softib_sma_init(struct softib_port *port, __be64 port_guid);

/* softib_cq.c */
int softib_cq_push(struct softib_cq *cq, const struct ib_wc *wc);
extern const struct ib_device_ops softib_cq_ops;

/* softib_qp.c */
int softib_rq_take(struct softib_rq *rq, struct softib_rwqe *wqe);
int softib_take_recv(struct softib_qp *qp, struct softib_rwqe *wqe);
void softib_qp_error(struct softib_qp *qp);
void softib_qp_event(struct softib_qp *qp, enum ib_event_type type);
extern const struct ib_device_ops softib_qp_ops;

/* softib_rc.c */
int softib_rc_init(struct softib_qp *qp, u32 max_send_wr);
void softib_rc_destroy(struct softib_qp *qp);
void softib_rc_flush(struct softib_qp *qp);
int softib_rc_post(struct softib_qp *qp, const struct ib_send_wr *wr);
void softib_rc_recv(struct softib_dev *sdev, struct softib_qp *qp,
		    const struct softib_pkt *pkt);
void softib_rc_response(struct softib_qp *qp, const struct softib_pkt *pkt);

/* softib_wire.c */
void softib_recv_wc(struct ib_wc *wc, struct softib_qp *qp,
		    const struct softib_pkt *pkt, u32 byte_len);
int softib_copy_out(const struct softib_rwqe *wqe, const struct softib_pkt *pkt,
		    u32 hdr);
void softib_wire_send(struct softib_port *from, struct softib_pkt *pkt);
void softib_rx_work(struct work_struct *work);
void softib_wire_flush(struct softib_dev *sdev);
int softib_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int softib_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void softib_qp_unlink(struct softib_dev *sdev, struct softib_qp *qp);

#endif
