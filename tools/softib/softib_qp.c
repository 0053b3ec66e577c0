// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs and shared receive queues. A send is copied into a packet
 * when it is posted, so it completes at once and the send queue never
 * holds work; a receive waits in its ring until a packet consumes it.
 * This device uses virtual DMA (no dma_device): addresses in SGEs are
 * kernel virtual addresses. RC and UC live in softib_rc.c.
 */
#include <linux/slab.h>
#include <linux/log2.h>
#include "softib.h"

static int softib_rq_init(struct softib_rq *rq, u32 max_wr, u32 max_sge)
{
	if (max_wr > SOFTIB_MAX_WR || max_sge > SOFTIB_MAX_SGE)
		return -EINVAL;
	spin_lock_init(&rq->lock);
	rq->max_wr = max_wr;
	rq->max_sge = max_sge;
	rq->size = roundup_pow_of_two(max(max_wr, 1U));
	rq->ring = kvcalloc(rq->size, sizeof(*rq->ring), GFP_KERNEL);
	return rq->ring ? 0 : -ENOMEM;
}

/* Append receive work (rq->lock held): 0 or -ENOMEM if full. */
static int softib_rq_add(struct softib_rq *rq, const struct ib_recv_wr *wr)
{
	struct softib_rwqe *wqe;

	if (wr->num_sge > rq->max_sge)
		return -EINVAL;
	if (rq->head - rq->tail >= rq->max_wr)
		return -ENOMEM;
	wqe = &rq->ring[rq->head & (rq->size - 1)];
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
	rq->head++;
	return 0;
}

/* The oldest receive work (rq->lock held): 0, or -ENOENT if none. */
int softib_rq_take(struct softib_rq *rq, struct softib_rwqe *wqe)
{
	if (rq->head == rq->tail)
		return -ENOENT;
	*wqe = rq->ring[rq->tail & (rq->size - 1)];
	rq->tail++;
	return 0;
}

/* The next receive of @qp (its rq.lock held): its own or its SRQ's */
int softib_take_recv(struct softib_qp *qp, struct softib_rwqe *wqe)
{
	int err;

	if (!qp->srq)
		return softib_rq_take(&qp->rq, wqe);
	spin_lock(&qp->srq->rq.lock);
	err = softib_rq_take(&qp->srq->rq, wqe);
	spin_unlock(&qp->srq->rq.lock);
	return err;
}

/* QP in ERR (its rq->lock held): its own receives complete flushed */
static void softib_rq_flush(struct softib_qp *qp)
{
	struct softib_rwqe wqe;
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};

	while (!softib_rq_take(&qp->rq, &wqe)) {
		wc.wr_id = wqe.wr_id;
		softib_cq_push(qp->rcq, &wc);
	}
}

void softib_qp_event(struct softib_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

static int softib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			    struct ib_udata *udata)
{
	struct softib_dev *sdev = to_sdev(ibqp->device);
	struct softib_qp *qp = to_sqp(ibqp);
	u32 qpn;
	int err;

	if (udata)
		return -EOPNOTSUPP;
	switch (init->qp_type) {
	case IB_QPT_SMI:
	case IB_QPT_GSI:
	case IB_QPT_UD:
	case IB_QPT_RC:
	case IB_QPT_UC:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags || init->port_num > 1)
		return -EOPNOTSUPP;
	if (init->cap.max_send_wr > SOFTIB_MAX_WR ||
	    init->cap.max_send_sge > SOFTIB_MAX_SGE)
		return -EINVAL;
	qp->state = IB_QPS_RESET;
	qp->port = 1;
	qp->max_send_wr = init->cap.max_send_wr;
	qp->max_send_sge = init->cap.max_send_sge;
	qp->max_inline = init->cap.max_inline_data;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->scq = to_scq(init->send_cq);
	qp->rcq = to_scq(init->recv_cq);
	if (init->srq) {
		qp->srq = to_ssrq(init->srq);
		spin_lock_init(&qp->rq.lock);
	} else {
		err = softib_rq_init(&qp->rq, init->cap.max_recv_wr,
				     init->cap.max_recv_sge);
		if (err)
			return err;
	}
	err = softib_rc_init(qp, init->cap.max_send_wr);
	if (err) {
		kvfree(qp->rq.ring);
		return err;
	}
	if (init->qp_type == IB_QPT_SMI || init->qp_type == IB_QPT_GSI) {
		qpn = init->qp_type == IB_QPT_SMI ? 0 : 1;
		err = xa_insert(&sdev->qps, qpn, qp, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&sdev->qps, &qpn, qp,
				      XA_LIMIT(0x11, 0xfffffe),
				      &sdev->next_qpn, GFP_KERNEL);
		err = err < 0 ? err : 0;
	}
	if (err) {
		softib_rc_destroy(qp);
		kvfree(qp->rq.ring);
		return err;
	}
	ibqp->qp_num = qpn;
	return 0;
}

static int softib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct softib_qp *qp = to_sqp(ibqp);

	softib_qp_unlink(to_sdev(ibqp->device), qp);
	softib_rc_destroy(qp);
	kvfree(qp->rq.ring);
	return 0;
}

static int softib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			    int mask, struct ib_udata *udata)
{
	struct softib_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	bool last_wqe = false;
	unsigned long flags;

	spin_lock_irqsave(&qp->rq.lock, flags);
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask) ||
	    (mask & IB_QP_PKEY_INDEX && attr->pkey_index >= SOFTIB_PKEYS) ||
	    (mask & IB_QP_PORT && attr->port_num != 1)) {
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		return -EINVAL;
	}
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_SQ_PSN) {
		qp->sq_psn = attr->sq_psn & SOFTIB_PSN_MASK;
		qp->next_psn = qp->sq_psn;
	}
	if (mask & IB_QP_RQ_PSN)
		qp->epsn = attr->rq_psn & SOFTIB_PSN_MASK;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_AV) {
		qp->dlid = rdma_ah_get_dlid(&attr->ah_attr);
		qp->sl = rdma_ah_get_sl(&attr->ah_attr);
		qp->path_bits = rdma_ah_get_path_bits(&attr->ah_attr);
	}
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY) {
		qp->rnr_retry = attr->rnr_retry;
		qp->rnr_left = attr->rnr_retry;
	}
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_STATE) {
		WRITE_ONCE(qp->state, next);
		if (next == IB_QPS_RESET) {
			if (!qp->srq)
				qp->rq.tail = qp->rq.head; /* no completions */
			qp->comm_est = false;
			softib_rc_flush(qp);
		}
		if (next == IB_QPS_ERR && cur != IB_QPS_ERR) {
			if (qp->srq)
				last_wqe = true;
			else
				softib_rq_flush(qp);
			softib_rc_flush(qp);
		}
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	/* it consumes no SRQ work from now on: IBA 11.5.2.5 */
	if (last_wqe)
		softib_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	return 0;
}

/* A transport error (RC): the QP goes to ERR as if modified to it */
void softib_qp_error(struct softib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	softib_modify_qp(&qp->ibqp, &attr, IB_QP_STATE, NULL);
}

static int softib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			   int mask, struct ib_qp_init_attr *init)
{
	struct softib_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->pkey_index = qp->pkey_index;
	attr->qkey = qp->qkey;
	attr->port_num = qp->port;
	attr->sq_psn = qp->sq_psn;
	attr->rq_psn = qp->epsn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->cap.max_send_wr = qp->max_send_wr;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_wr = qp->rq.max_wr;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

static void softib_send_done(struct softib_qp *qp, const struct ib_send_wr *wr,
			     enum ib_wc_status status, u32 len)
{
	struct ib_wc wc = {
		.wr_id = wr->wr_id,
		.status = status,
		.opcode = IB_WC_SEND,
		.byte_len = len,
		.qp = &qp->ibqp,
	};

	/* errors always complete (IBA 10.8.3.1) */
	if (qp->sig_all || (wr->send_flags & IB_SEND_SIGNALED) ||
	    status != IB_WC_SUCCESS)
		softib_cq_push(qp->scq, &wc);
}

/* The LRH, GRH, BTH and DETH of a datagram from @qp (port->lock held). */
static void softib_ud_headers(struct softib_qp *qp, const struct ib_ud_wr *ud,
			      struct softib_pkt *pkt)
{
	struct softib_port *port = &to_sdev(qp->ibqp.device)->port;
	const struct rdma_ah_attr *ah = &to_sah(ud->ah)->attr;
	u16 pkey_index;

	pkt->dlid = rdma_ah_get_dlid(ah);
	pkt->slid = port->lid |
		    (rdma_ah_get_path_bits(ah) & ((1 << port->lmc) - 1));
	pkt->sl = rdma_ah_get_sl(ah);
	pkt->sqpn = qp->ibqp.qp_num;
	pkt->dqpn = ud->remote_qpn;
	/* a key with the top bit set means the QP's own (IBA 10.2.5) */
	pkt->qkey = ud->remote_qkey & 0x80000000 ? qp->qkey : ud->remote_qkey;
	pkey_index = qp->ibqp.qp_type == IB_QPT_GSI ? ud->pkey_index :
		     qp->pkey_index;
	pkt->pkey = qp->ibqp.qp_type == IB_QPT_SMI ? 0xffff :
		    port->pkeys[pkey_index % SOFTIB_PKEYS];
	if (rdma_ah_get_ah_flags(ah) & IB_AH_GRH) {
		const struct ib_global_route *g = rdma_ah_read_grh(ah);
		u8 idx = g->sgid_index % SOFTIB_GUIDS;

		pkt->has_grh = true;
		pkt->grh.version_tclass_flow =
			cpu_to_be32(6 << 28 | g->traffic_class << 20 |
				    (g->flow_label & 0xfffff));
		pkt->grh.paylen = cpu_to_be16(pkt->len);
		pkt->grh.next_hdr = 0x1b;	/* IBA 8.3: a BTH follows */
		pkt->grh.hop_limit = g->hop_limit;
		pkt->grh.sgid.global.subnet_prefix = port->gid_prefix;
		pkt->grh.sgid.global.interface_id = port->guids[idx];
		pkt->grh.dgid = g->dgid;
	}
}

static int softib_send_one(struct softib_qp *qp, const struct ib_send_wr *wr)
{
	struct softib_port *port = &to_sdev(qp->ibqp.device)->port;
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct softib_pkt *pkt;
	unsigned long flags;
	u32 len = 0, off = 0;
	int i;

	if (state == IB_QPS_ERR || state == IB_QPS_SQE) {
		softib_send_done(qp, wr, IB_WC_WR_FLUSH_ERR, 0);
		return 0;
	}
	if (state != IB_QPS_RTS || wr->num_sge > qp->max_send_sge ||
	    (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM))
		return -EINVAL;
	/* (a sum that wraps is too long, as a real HCA finds) */
	for (i = 0; i < wr->num_sge; i++)
		if (check_add_overflow(len, wr->sg_list[i].length, &len))
			len = U32_MAX;
	if (len > ib_mtu_enum_to_int(SOFTIB_MTU)) {
		softib_send_done(qp, wr, IB_WC_LOC_LEN_ERR, 0);
		return 0;
	}
	pkt = kzalloc(struct_size(pkt, data, len), GFP_ATOMIC | __GFP_NOWARN);
	if (!pkt)
		return -ENOMEM;
	pkt->len = len;
	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		memcpy(pkt->data + off, (void *)(uintptr_t)sge->addr,
		       sge->length);
		off += sge->length;
	}
	if (wr->opcode == IB_WR_SEND_WITH_IMM) {
		pkt->has_imm = true;
		pkt->imm = wr->ex.imm_data;
	}
	spin_lock_irqsave(&port->lock, flags);
	softib_ud_headers(qp, ud_wr(wr), pkt);
	spin_unlock_irqrestore(&port->lock, flags);
	softib_wire_send(port, pkt);
	softib_send_done(qp, wr, IB_WC_SUCCESS, len);
	return 0;
}

static int softib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			    const struct ib_send_wr **bad)
{
	struct softib_qp *qp = to_sqp(ibqp);
	int err;

	for (; wr; wr = wr->next) {
		if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC)
			err = softib_rc_post(qp, wr);
		else
			err = softib_send_one(qp, wr);
		if (err) {
			*bad = wr;
			return err;
		}
	}
	return 0;
}

static int softib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			    const struct ib_recv_wr **bad)
{
	struct softib_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->srq) {
		*bad = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = qp->state == IB_QPS_RESET ? -EINVAL :
		      softib_rq_add(&qp->rq, wr);
		if (err) {
			*bad = wr;
			break;
		}
	}
	if (qp->state == IB_QPS_ERR)
		softib_rq_flush(qp);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	return err;
}

static int softib_create_srq(struct ib_srq *ibsrq,
			     struct ib_srq_init_attr *init,
			     struct ib_udata *udata)
{
	struct softib_srq *srq = to_ssrq(ibsrq);

	if (udata || init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	srq->limit = init->attr.srq_limit;
	return softib_rq_init(&srq->rq, init->attr.max_wr,
			      init->attr.max_sge);
}

static int softib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	kvfree(to_ssrq(ibsrq)->rq.ring);
	return 0;
}

static int softib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			     enum ib_srq_attr_mask mask,
			     struct ib_udata *udata)
{
	struct softib_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.max_wr)
			return -EINVAL;
		spin_lock_irqsave(&srq->rq.lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	return 0;
}

static int softib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct softib_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

static int softib_post_srq_recv(struct ib_srq *ibsrq,
				const struct ib_recv_wr *wr,
				const struct ib_recv_wr **bad)
{
	struct softib_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&srq->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = softib_rq_add(&srq->rq, wr);
		if (err) {
			*bad = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return err;
}

const struct ib_device_ops softib_qp_ops = {
	.create_qp = softib_create_qp,
	.destroy_qp = softib_destroy_qp,
	.modify_qp = softib_modify_qp,
	.query_qp = softib_query_qp,
	.post_send = softib_post_send,
	.post_recv = softib_post_recv,
	.create_srq = softib_create_srq,
	.destroy_srq = softib_destroy_srq,
	.modify_srq = softib_modify_srq,
	.query_srq = softib_query_srq,
	.post_srq_recv = softib_post_srq_recv,
	.attach_mcast = softib_attach_mcast,
	.detach_mcast = softib_detach_mcast,
	INIT_RDMA_OBJ_SIZE(ib_qp, softib_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, softib_srq, ibsrq),
};
