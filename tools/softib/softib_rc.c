// SPDX-License-Identifier: GPL-2.0
/*
 * The connected transports (IBA chapter 9): RC and UC sends. A message is
 * one packet on the cable, never split into path-MTU packets. RC keeps
 * each send until the responder acknowledges its PSN; a responder with no
 * receive posted answers RNR NAK and the requester sends again from that
 * PSN after the responder's RNR timer, rnr_retry times (7: for ever). A
 * requester that hears nothing for the local ACK timeout times
 * (retry_cnt + 1) fails with "retry exceeded": the cable loses nothing,
 * so silence means the responder is gone. No RDMA, no atomics.
 */
#include <linux/slab.h>
#include <linux/log2.h>
#include "softib.h"

/* IBA table 45: the RNR timer field, in microseconds */
static const u32 softib_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* a - b in the 24-bit PSN space, signed */
static int softib_psn_diff(u32 a, u32 b)
{
	return (int)((a - b) << 8) >> 8;
}

static void softib_rc_done(struct softib_qp *qp, const struct softib_swqe *w,
			   enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = IB_WC_SEND,
		.byte_len = w->len,
		.qp = &qp->ibqp,
	};

	if (w->signaled || status != IB_WC_SUCCESS)
		softib_cq_push(qp->scq, &wc);
}

/* The packet of send @w (port->lock is taken): NULL without memory */
static struct softib_pkt *softib_rc_pkt(struct softib_qp *qp,
					const struct softib_swqe *w)
{
	struct softib_port *port = &to_sdev(qp->ibqp.device)->port;
	struct softib_pkt *pkt;
	unsigned long flags;
	u32 i, off = 0;

	pkt = kzalloc(struct_size(pkt, data, w->len),
		      GFP_ATOMIC | __GFP_NOWARN);
	if (!pkt)
		return NULL;
	for (i = 0; i < w->num_sge; i++) {
		memcpy(pkt->data + off, (void *)(uintptr_t)w->sge[i].addr,
		       w->sge[i].length);
		off += w->sge[i].length;
	}
	pkt->len = w->len;
	pkt->op = qp->ibqp.qp_type == IB_QPT_RC ? SOFTIB_OP_RC_SEND :
						  SOFTIB_OP_UC_SEND;
	pkt->psn = w->psn;
	pkt->has_imm = w->opcode == IB_WR_SEND_WITH_IMM;
	pkt->imm = w->imm;
	pkt->dlid = qp->dlid;
	pkt->sl = qp->sl;
	pkt->sqpn = qp->ibqp.qp_num;
	pkt->dqpn = qp->dest_qpn;
	spin_lock_irqsave(&port->lock, flags);
	pkt->slid = port->lid | (qp->path_bits & ((1 << port->lmc) - 1));
	pkt->pkey = port->pkeys[qp->pkey_index];
	spin_unlock_irqrestore(&port->lock, flags);
	return pkt;
}

/* How long an RC requester waits for a response before it gives up */
static unsigned long softib_rc_patience(struct softib_qp *qp)
{
	u64 ns = 4096ULL << min_t(u8, qp->timeout, 31);

	return max(nsecs_to_jiffies64(ns) * (qp->retry_cnt + 1), 1ULL);
}

/* Send again what an RNR NAK refused, from resend_psn on */
static void softib_rc_resend_work(struct work_struct *work)
{
	struct softib_qp *qp = container_of(to_delayed_work(work),
					    struct softib_qp, resend_work);
	struct softib_port *port = &to_sdev(qp->ibqp.device)->port;
	struct softib_pkt *pkt;
	struct softib_swqe *w;
	u32 i;

	spin_lock_irq(&qp->sq_lock);
	if (!qp->resend || READ_ONCE(qp->state) != IB_QPS_RTS)
		goto out;
	qp->resend = false;
	qp->last_ack = jiffies;
	for (i = qp->sq_tail; i != qp->sq_head; i++) {
		w = &qp->sq[i & (qp->sq_size - 1)];
		if (softib_psn_diff(w->psn, qp->resend_psn) < 0)
			continue;
		pkt = softib_rc_pkt(qp, w);
		if (!pkt) {
			qp->resend = true;
			qp->resend_psn = w->psn;
			mod_delayed_work(system_wq, &qp->resend_work, 1);
			break;
		}
		atomic64_inc(&port->stats.retransmits);
		softib_wire_send(port, pkt);
	}
out:
	spin_unlock_irq(&qp->sq_lock);
}

/* Nothing heard for the local ACK timeout: retries are exceeded */
static void softib_rc_timeout_work(struct work_struct *work)
{
	struct softib_qp *qp = container_of(to_delayed_work(work),
					    struct softib_qp, timeout_work);
	unsigned long deadline;
	bool failed = false;

	spin_lock_irq(&qp->sq_lock);
	if (qp->sq_tail != qp->sq_head &&
	    READ_ONCE(qp->state) == IB_QPS_RTS) {
		deadline = qp->last_ack + softib_rc_patience(qp);
		if (time_before(jiffies, deadline)) {
			queue_delayed_work(system_wq, &qp->timeout_work,
					   deadline - jiffies);
		} else {
			softib_rc_done(qp, &qp->sq[qp->sq_tail &
						   (qp->sq_size - 1)],
				       IB_WC_RETRY_EXC_ERR);
			qp->sq_tail++;
			failed = true;
		}
	}
	spin_unlock_irq(&qp->sq_lock);
	if (failed)
		softib_qp_error(qp);
}

int softib_rc_init(struct softib_qp *qp, u32 max_send_wr)
{
	spin_lock_init(&qp->sq_lock);
	INIT_DELAYED_WORK(&qp->resend_work, softib_rc_resend_work);
	INIT_DELAYED_WORK(&qp->timeout_work, softib_rc_timeout_work);
	if (qp->ibqp.qp_type != IB_QPT_RC)
		return 0;
	qp->sq_size = roundup_pow_of_two(max(max_send_wr, 1U));
	qp->sq = kvcalloc(qp->sq_size, sizeof(*qp->sq), GFP_KERNEL);
	return qp->sq ? 0 : -ENOMEM;
}

/* Destroying: no response can reach the QP any more (unlinked) */
void softib_rc_destroy(struct softib_qp *qp)
{
	cancel_delayed_work_sync(&qp->resend_work);
	cancel_delayed_work_sync(&qp->timeout_work);
	kvfree(qp->sq);
	qp->sq = NULL;
}

/*
 * ERR or RESET (rq.lock held): what waits for a response is given up,
 * completed as flushed in ERR (IBA 10.3.1), silently in RESET.
 */
void softib_rc_flush(struct softib_qp *qp)
{
	bool complete = qp->state == IB_QPS_ERR;

	if (!qp->sq)
		return;
	spin_lock(&qp->sq_lock);
	for (; qp->sq_tail != qp->sq_head; qp->sq_tail++)
		if (complete)
			softib_rc_done(qp, &qp->sq[qp->sq_tail &
						   (qp->sq_size - 1)],
				       IB_WC_WR_FLUSH_ERR);
	qp->resend = false;
	spin_unlock(&qp->sq_lock);
}

int softib_rc_post(struct softib_qp *qp, const struct ib_send_wr *wr)
{
	struct softib_port *port = &to_sdev(qp->ibqp.device)->port;
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct softib_swqe one, *w = &one;
	struct softib_pkt *pkt;
	unsigned long flags;
	bool first;
	int i;

	if (wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	one.wr_id = wr->wr_id;
	one.opcode = wr->opcode;
	one.imm = wr->ex.imm_data;
	one.signaled = qp->sig_all || (wr->send_flags & IB_SEND_SIGNALED);
	one.num_sge = wr->num_sge;
	one.len = 0;
	for (i = 0; i < wr->num_sge; i++) {
		one.sge[i] = wr->sg_list[i];
		if (check_add_overflow(one.len, wr->sg_list[i].length,
				       &one.len))
			one.len = U32_MAX;
	}
	if (state == IB_QPS_ERR || state == IB_QPS_SQE) {
		softib_rc_done(qp, &one, IB_WC_WR_FLUSH_ERR);
		return 0;
	}
	if (state != IB_QPS_RTS ||
	    (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM))
		return -EINVAL;
	if (one.len > SOFTIB_MAX_MSG) {
		softib_rc_done(qp, &one, IB_WC_LOC_LEN_ERR);
		return 0;
	}

	if (qp->ibqp.qp_type == IB_QPT_UC) {
		/* unreliable: done once it is on the cable */
		spin_lock_irqsave(&qp->sq_lock, flags);
		one.psn = qp->next_psn;
		qp->next_psn = (qp->next_psn + 1) & SOFTIB_PSN_MASK;
		pkt = softib_rc_pkt(qp, &one);
		/* without memory it is lost, as UC may lose it */
		if (pkt)
			softib_wire_send(port, pkt);
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		softib_rc_done(qp, &one, IB_WC_SUCCESS);
		return 0;
	}

	spin_lock_irqsave(&qp->sq_lock, flags);
	/* modify_qp sets the state before it flushes under sq_lock */
	state = READ_ONCE(qp->state);
	if (state != IB_QPS_RTS) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		if (state != IB_QPS_ERR && state != IB_QPS_SQE)
			return -EINVAL;
		softib_rc_done(qp, &one, IB_WC_WR_FLUSH_ERR);
		return 0;
	}
	if (qp->sq_head - qp->sq_tail >= qp->max_send_wr) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return -ENOMEM;
	}
	w = &qp->sq[qp->sq_head & (qp->sq_size - 1)];
	*w = one;
	w->psn = qp->next_psn;
	qp->next_psn = (qp->next_psn + 1) & SOFTIB_PSN_MASK;
	qp->sq_head++;
	first = qp->sq_head - qp->sq_tail == 1;
	if (first)
		qp->last_ack = jiffies;
	/* while an RNR NAK is pending, what follows waits for the resend */
	if (!qp->resend) {
		pkt = softib_rc_pkt(qp, w);
		if (pkt) {
			softib_wire_send(port, pkt);
		} else {
			qp->resend = true;
			qp->resend_psn = w->psn;
			mod_delayed_work(system_wq, &qp->resend_work, 1);
		}
	}
	if (first && qp->timeout)
		queue_delayed_work(system_wq, &qp->timeout_work,
				   softib_rc_patience(qp));
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return 0;
}

/* An ACK or RNR NAK for requester @qp (deliver_lock held) */
void softib_rc_response(struct softib_qp *qp, const struct softib_pkt *pkt)
{
	struct softib_swqe *w;
	unsigned long flags;
	bool failed = false;
	int last;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (!qp->sq || READ_ONCE(qp->state) != IB_QPS_RTS)
		goto out;
	qp->last_ack = jiffies;
	/* an ACK takes its PSN and those before; an RNR NAK those before */
	last = pkt->op == SOFTIB_OP_ACK ? 0 : -1;
	while (qp->sq_tail != qp->sq_head) {
		w = &qp->sq[qp->sq_tail & (qp->sq_size - 1)];
		if (softib_psn_diff(w->psn, pkt->psn) > last)
			break;
		softib_rc_done(qp, w, IB_WC_SUCCESS);
		qp->sq_tail++;
		qp->rnr_left = qp->rnr_retry;
	}
	if (pkt->op != SOFTIB_OP_RNR_NAK || qp->resend ||
	    qp->sq_tail == qp->sq_head)
		goto out;
	if (qp->rnr_retry != 7 && !qp->rnr_left) {
		softib_rc_done(qp, &qp->sq[qp->sq_tail & (qp->sq_size - 1)],
			       IB_WC_RNR_RETRY_EXC_ERR);
		qp->sq_tail++;
		failed = true;
		goto out;
	}
	if (qp->rnr_retry != 7)
		qp->rnr_left--;
	qp->resend = true;
	qp->resend_psn = pkt->psn;
	mod_delayed_work(system_wq, &qp->resend_work,
			 usecs_to_jiffies(softib_rnr_us[pkt->rnr_timer & 31]));
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (failed)
		softib_qp_error(qp);
}

/* The responder's answer to @pkt, from @port */
static void softib_rc_answer(struct softib_port *port, struct softib_qp *qp,
			     const struct softib_pkt *pkt, enum softib_op op)
{
	struct softib_pkt *r = kzalloc(sizeof(*r), GFP_ATOMIC | __GFP_NOWARN);
	unsigned long flags;

	if (!r) {
		/* lost on the cable: the requester times out */
		atomic64_inc(&port->stats.drop_link);
		return;
	}
	r->op = op;
	r->psn = pkt->psn;
	r->rnr_timer = qp->min_rnr_timer;
	r->dlid = pkt->slid;
	r->sl = pkt->sl;
	r->sqpn = qp->ibqp.qp_num;
	r->dqpn = pkt->sqpn;
	r->pkey = pkt->pkey;
	spin_lock_irqsave(&port->lock, flags);
	r->slid = port->lid | (qp->path_bits & ((1 << port->lmc) - 1));
	spin_unlock_irqrestore(&port->lock, flags);
	softib_wire_send(port, r);
}

/* An RC or UC send for responder @qp (deliver_lock held) */
void softib_rc_recv(struct softib_dev *sdev, struct softib_qp *qp,
		    const struct softib_pkt *pkt)
{
	struct softib_port *port = &sdev->port;
	bool rc = pkt->op == SOFTIB_OP_RC_SEND;
	enum softib_op answer = SOFTIB_OP_DATAGRAM;	/* none */
	struct softib_rwqe wqe;
	unsigned long flags;
	bool est = false;
	bool pkey_ok;
	struct ib_wc wc;

	if (qp->ibqp.qp_type != (rc ? IB_QPT_RC : IB_QPT_UC)) {
		atomic64_inc(&port->stats.drop_qpn);
		return;
	}
	spin_lock_irqsave(&port->lock, flags);
	pkey_ok = softib_pkey_match(port->pkeys[qp->pkey_index], pkt->pkey);
	if (!pkey_ok)
		softib_violation(&port->pkey_violations);
	spin_unlock_irqrestore(&port->lock, flags);
	if (!pkey_ok) {
		atomic64_inc(&port->stats.drop_pkey);
		return;
	}

	spin_lock_irqsave(&qp->rq.lock, flags);
	if ((qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS) ||
	    pkt->sqpn != qp->dest_qpn || pkt->slid != qp->dlid) {
		atomic64_inc(&port->stats.drop_qpn);
		goto out;
	}
	/* data before the RTU: the CM learns it is established (IBA 11.6.3) */
	if (qp->state == IB_QPS_RTR && !qp->comm_est) {
		qp->comm_est = true;
		est = true;
	}
	if (rc && pkt->psn != qp->epsn) {
		if (softib_psn_diff(pkt->psn, qp->epsn) < 0)
			answer = SOFTIB_OP_ACK;	/* a duplicate: ACK again */
		else
			atomic64_inc(&port->stats.drop_seq);
		goto out;
	}
	if (softib_take_recv(qp, &wqe)) {
		if (rc) {
			atomic64_inc(&port->stats.rnr_naks);
			answer = SOFTIB_OP_RNR_NAK;
		} else {
			atomic64_inc(&port->stats.drop_no_recv);
		}
		goto out;
	}
	softib_recv_wc(&wc, qp, pkt, pkt->len);
	wc.wr_id = wqe.wr_id;
	if (softib_copy_out(&wqe, pkt, 0)) {
		wc.status = IB_WC_LOC_LEN_ERR;
		atomic64_inc(&port->stats.drop_len);
	} else {
		atomic64_inc(&port->stats.rx_packets);
		atomic64_inc(&port->stats.rx_pkey[qp->pkey_index]);
	}
	softib_cq_push(qp->rcq, &wc);
	if (rc) {
		qp->epsn = (qp->epsn + 1) & SOFTIB_PSN_MASK;
		answer = SOFTIB_OP_ACK;
	}
out:
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (est)
		softib_qp_event(qp, IB_EVENT_COMM_EST);
	if (answer != SOFTIB_OP_DATAGRAM)
		softib_rc_answer(port, qp, pkt, answer);
}
