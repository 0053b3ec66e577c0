// SPDX-License-Identifier: GPL-2.0
/*
 * The cable between two softib ports, and delivery at the receiving end
 * as an HCA's receive side does it (IBA 9.6, 10.9.3): by DLID to one QP,
 * by MLID and MGID to every attached QP, with the P_Key and Q_Key checks.
 * The cable is lossless and ordered: no link-level credits, no VL
 * arbitration, no ICRC, and a packet to our own LID loops back inside the
 * port.
 */
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_mad.h>
#include "softib.h"

/* The port's state as a sender, for a packet to @dqpn */
static bool softib_may_send(struct softib_port *port, u32 dqpn)
{
	/* SMPs need the physical link only; the rest an ACTIVE port */
	return dqpn == 0 ? port->state >= SOFTIB_PORT_INIT :
	       port->state == SOFTIB_PORT_ACTIVE;
}

static void softib_wire_queue(struct softib_dev *to, struct softib_pkt *pkt)
{
	unsigned long flags;

	spin_lock_irqsave(&to->rx_lock, flags);
	list_add_tail(&pkt->node, &to->rx_queue);
	spin_unlock_irqrestore(&to->rx_lock, flags);
	queue_work(system_unbound_wq, &to->rx_work);
}

/* A CM RTU (IBA 12.6.7) that a test asked the port to lose */
static bool softib_lose(struct softib_port *port, const struct softib_pkt *pkt)
{
	const struct ib_mad_hdr *mad = (const struct ib_mad_hdr *)pkt->data;

	if (pkt->dqpn != 1 || pkt->len < sizeof(*mad) ||
	    mad->mgmt_class != IB_MGMT_CLASS_CM ||
	    mad->attr_id != CM_RTU_ATTR_ID)
		return false;
	return atomic_dec_if_positive(&port->lose_cm_rtu) >= 0;
}

/* Put @pkt on the cable (takes it): any context. */
void softib_wire_send(struct softib_port *from, struct softib_pkt *pkt)
{
	struct softib_port *to = NULL;
	struct softib_pkt *copy;
	unsigned long flags;
	bool local = false;

	if (unlikely(atomic_read(&from->lose_cm_rtu)) &&
	    softib_lose(from, pkt)) {
		atomic64_inc(&from->stats.lost_cm_rtu);
		kfree(pkt);
		return;
	}
	spin_lock_irqsave(&from->lock, flags);
	if (softib_may_send(from, pkt->dqpn)) {
		u16 mask = ~((1 << from->lmc) - 1);

		local = softib_lid_mcast(pkt->dlid) ||
			(from->lid && pkt->dlid != 0xffff &&
			 (pkt->dlid & mask) == (from->lid & mask));
		/* a group's traffic also goes out; our LID's stays here */
		if (!local || softib_lid_mcast(pkt->dlid))
			to = from->peer;
	}
	if (!to && !local) {
		spin_unlock_irqrestore(&from->lock, flags);
		atomic64_inc(&from->stats.drop_link);
		kfree(pkt);
		return;
	}
	atomic64_inc(&from->stats.tx_packets);
	/* under from->lock: the cable is not pulled meanwhile */
	if (to && local) {
		copy = kmemdup(pkt, struct_size(pkt, data, pkt->len),
			       GFP_ATOMIC | __GFP_NOWARN);
		if (copy)
			softib_wire_queue(to->sdev, copy);
		else
			atomic64_inc(&from->stats.drop_link);
	} else if (to) {
		softib_wire_queue(to->sdev, pkt);
		pkt = NULL;
	}
	if (pkt)
		softib_wire_queue(from->sdev, pkt);
	spin_unlock_irqrestore(&from->lock, flags);
}

/*
 * The P_Key and Q_Key checks of one QP (port->lock held): 0, or the
 * counter the drop goes to. Sets *pkey_index for the completion.
 */
static atomic64_t *softib_keys_fail(struct softib_port *port,
				    struct softib_qp *qp,
				    const struct softib_pkt *pkt,
				    u16 *pkey_index)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	u16 i;

	*pkey_index = 0;
	if (type == IB_QPT_SMI)
		return NULL;
	if (type == IB_QPT_GSI) {
		/* QP1 takes any P_Key of the port's table */
		for (i = 0; i < SOFTIB_PKEYS; i++)
			if (softib_pkey_match(port->pkeys[i], pkt->pkey))
				break;
		if (i == SOFTIB_PKEYS)
			goto bad_pkey;
		*pkey_index = i;
	} else {
		if (!softib_pkey_match(port->pkeys[qp->pkey_index], pkt->pkey))
			goto bad_pkey;
		*pkey_index = qp->pkey_index;
	}
	if (pkt->qkey != qp->qkey) {
		softib_violation(&port->qkey_violations);
		return &port->stats.drop_qkey;
	}
	return NULL;
bad_pkey:
	softib_violation(&port->pkey_violations);
	return &port->stats.drop_pkey;
}

/*
 * Scatter @pkt into @wqe's buffers after @hdr bytes: a datagram's first
 * 40 hold its GRH, written only if it came with one (IBA 11.4.1.2).
 */
int softib_copy_out(const struct softib_rwqe *wqe, const struct softib_pkt *pkt,
		    u32 hdr)
{
	u32 room = 0, need = hdr + pkt->len, off = 0;
	u32 i, n, done, chunk;
	u8 *dst;

	for (i = 0; i < wqe->num_sge; i++)
		room += wqe->sge[i].length;
	if (room < need)
		return -EMSGSIZE;
	for (i = 0; i < wqe->num_sge && off < need; i++) {
		dst = (u8 *)(uintptr_t)wqe->sge[i].addr;
		n = min(wqe->sge[i].length, need - off);
		for (done = 0; done < n; done += chunk) {
			if (off + done < hdr) {
				chunk = min(n - done, hdr - off - done);
				if (pkt->has_grh)
					memcpy(dst + done,
					       (const u8 *)&pkt->grh + off + done,
					       chunk);
			} else {
				chunk = n - done;
				memcpy(dst + done,
				       pkt->data + off + done - hdr, chunk);
			}
		}
		off += n;
	}
	return 0;
}

/* The receive completion of @pkt at @qp, but for its wr_id */
void softib_recv_wc(struct ib_wc *wc, struct softib_qp *qp,
		    const struct softib_pkt *pkt, u32 byte_len)
{
	memset(wc, 0, sizeof(*wc));
	wc->status = IB_WC_SUCCESS;
	wc->opcode = IB_WC_RECV;
	wc->qp = &qp->ibqp;
	wc->src_qp = pkt->sqpn;
	wc->slid = pkt->slid;
	wc->sl = pkt->sl;
	wc->port_num = 1;
	wc->byte_len = byte_len;
	wc->pkey_index = qp->pkey_index;
	wc->wc_flags = pkt->has_imm ? IB_WC_WITH_IMM : 0;
	wc->ex.imm_data = pkt->imm;
}

/* One datagram to one QP (deliver_lock held) */
static void softib_deliver_qp(struct softib_dev *sdev, struct softib_qp *qp,
			      const struct softib_pkt *pkt)
{
	struct softib_port *port = &sdev->port;
	struct softib_rwqe wqe;
	atomic64_t *drop;
	unsigned long flags;
	u16 pkey_index;
	struct ib_wc wc;

	softib_recv_wc(&wc, qp, pkt, sizeof(struct ib_grh) + pkt->len);
	spin_lock_irqsave(&port->lock, flags);
	drop = softib_keys_fail(port, qp, pkt, &pkey_index);
	wc.dlid_path_bits = pkt->dlid & ((1 << port->lmc) - 1);
	spin_unlock_irqrestore(&port->lock, flags);
	if (drop) {
		atomic64_inc(drop);
		return;
	}
	wc.pkey_index = pkey_index;
	if (pkt->has_grh)
		wc.wc_flags |= IB_WC_GRH;

	spin_lock_irqsave(&qp->rq.lock, flags);
	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS) {
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		atomic64_inc(&port->stats.drop_qpn);
		return;
	}
	if (softib_take_recv(qp, &wqe)) {
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		/* a datagram finds no receive: silently dropped (IBA 9.9.1) */
		atomic64_inc(&port->stats.drop_no_recv);
		return;
	}
	wc.wr_id = wqe.wr_id;
	if (softib_copy_out(&wqe, pkt, sizeof(struct ib_grh))) {
		wc.status = IB_WC_LOC_LEN_ERR;
		atomic64_inc(&port->stats.drop_len);
	} else {
		atomic64_inc(&port->stats.rx_packets);
		/* data only: QP1 takes any P_Key of the table, QP0 none */
		if (qp->ibqp.qp_type == IB_QPT_UD)
			atomic64_inc(&port->stats.rx_pkey[pkey_index]);
	}
	softib_cq_push(qp->rcq, &wc);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
}

static struct softib_group *softib_group_find(struct softib_dev *sdev,
					      const union ib_gid *mgid,
					      u16 mlid)
{
	struct softib_group *g;

	list_for_each_entry(g, &sdev->groups, node)
		if (g->mlid == mlid && !memcmp(&g->mgid, mgid, sizeof(*mgid)))
			return g;
	return NULL;
}

/* An RC response for requester @qp, if it is from its responder */
static void softib_deliver_response(struct softib_dev *sdev,
				    struct softib_qp *qp,
				    const struct softib_pkt *pkt)
{
	if (qp->ibqp.qp_type == IB_QPT_RC && pkt->sqpn == qp->dest_qpn)
		softib_rc_response(qp, pkt);
	else
		atomic64_inc(&sdev->port.stats.drop_qpn);
}

static void softib_deliver(struct softib_dev *sdev, struct softib_pkt *pkt)
{
	struct softib_port *port = &sdev->port;
	struct softib_group *g;
	struct softib_qp *qp;
	unsigned int i;
	u16 lid, mask;

	spin_lock_irq(&port->lock);
	lid = port->lid;
	mask = ~((1 << port->lmc) - 1);
	/* a receiving port takes what its state allows (IBA 7.2.5) */
	i = pkt->dqpn == 0 ? port->state >= SOFTIB_PORT_INIT :
	    port->state >= SOFTIB_PORT_ARMED;
	spin_unlock_irq(&port->lock);
	if (!i) {
		atomic64_inc(&port->stats.drop_link);
		return;
	}

	spin_lock_bh(&sdev->deliver_lock);
	if (softib_lid_mcast(pkt->dlid)) {
		g = pkt->op == SOFTIB_OP_DATAGRAM && pkt->has_grh && pkt->dqpn == 0xffffff ?
		    softib_group_find(sdev, &pkt->grh.dgid, pkt->dlid) : NULL;
		if (!g)
			atomic64_inc(&port->stats.drop_dlid);
		for (i = 0; g && i < g->nqps; i++)
			softib_deliver_qp(sdev, g->qps[i], pkt);
	} else if (pkt->dqpn != 0 && pkt->dlid != lid &&
		   (!lid || (pkt->dlid & mask) != (lid & mask))) {
		/* QP0's SMPs come over the point-to-point cable by any DLID */
		atomic64_inc(&port->stats.drop_dlid);
	} else {
		qp = xa_load(&sdev->qps, pkt->dqpn);
		if (!qp)
			atomic64_inc(&port->stats.drop_qpn);
		else if (pkt->op == SOFTIB_OP_RC_SEND ||
			 pkt->op == SOFTIB_OP_UC_SEND)
			softib_rc_recv(sdev, qp, pkt);
		else if (pkt->op != SOFTIB_OP_DATAGRAM)
			softib_deliver_response(sdev, qp, pkt);
		else if (qp->ibqp.qp_type == IB_QPT_UD || pkt->dqpn <= 1)
			softib_deliver_qp(sdev, qp, pkt);
		else
			atomic64_inc(&port->stats.drop_qpn);
	}
	spin_unlock_bh(&sdev->deliver_lock);
}

void softib_rx_work(struct work_struct *work)
{
	struct softib_dev *sdev = container_of(work, struct softib_dev,
					       rx_work);
	struct softib_pkt *pkt;
	LIST_HEAD(batch);

	spin_lock_irq(&sdev->rx_lock);
	list_splice_init(&sdev->rx_queue, &batch);
	spin_unlock_irq(&sdev->rx_lock);
	while ((pkt = list_first_entry_or_null(&batch, struct softib_pkt,
					       node))) {
		list_del(&pkt->node);
		softib_deliver(sdev, pkt);
		kfree(pkt);
		cond_resched();
	}
}

/* Unregistering: what is still on the way here is dropped */
void softib_wire_flush(struct softib_dev *sdev)
{
	struct softib_pkt *pkt, *n;

	LIST_HEAD(gone);

	cancel_work_sync(&sdev->rx_work);
	spin_lock_irq(&sdev->rx_lock);
	list_splice_init(&sdev->rx_queue, &gone);
	spin_unlock_irq(&sdev->rx_lock);
	list_for_each_entry_safe(pkt, n, &gone, node)
		kfree(pkt);
}

int softib_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct softib_dev *sdev = to_sdev(ibqp->device);
	struct softib_qp *qp = to_sqp(ibqp);
	struct softib_group *g, *fresh;
	unsigned int i;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD || !softib_lid_mcast(lid) ||
	    gid->raw[0] != 0xff)
		return -EINVAL;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;
	spin_lock_bh(&sdev->deliver_lock);
	g = softib_group_find(sdev, gid, lid);
	if (!g) {
		g = fresh;
		fresh = NULL;
		g->mgid = *gid;
		g->mlid = lid;
		list_add_tail(&g->node, &sdev->groups);
	}
	for (i = 0; i < g->nqps; i++)
		if (g->qps[i] == qp)
			goto out;	/* attached already: no error */
	if (g->nqps == SOFTIB_MAX_MCAST_QP) {
		err = -ENOMEM;
		goto out;
	}
	g->qps[g->nqps++] = qp;
	qp->groups++;
out:
	spin_unlock_bh(&sdev->deliver_lock);
	kfree(fresh);
	return err;
}

/* Take @qp out of @g (deliver_lock held): true if it was in */
static bool softib_group_leave(struct softib_group *g, struct softib_qp *qp)
{
	unsigned int i;

	for (i = 0; i < g->nqps; i++) {
		if (g->qps[i] != qp)
			continue;
		g->qps[i] = g->qps[--g->nqps];
		qp->groups--;
		if (!g->nqps) {
			list_del(&g->node);
			kfree(g);
		}
		return true;
	}
	return false;
}

int softib_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct softib_dev *sdev = to_sdev(ibqp->device);
	struct softib_group *g;
	int err = -EINVAL;

	spin_lock_bh(&sdev->deliver_lock);
	g = softib_group_find(sdev, gid, lid);
	if (g && softib_group_leave(g, to_sqp(ibqp)))
		err = 0;
	spin_unlock_bh(&sdev->deliver_lock);
	return err;
}

/* Destroying @qp: after this no delivery can reach it */
void softib_qp_unlink(struct softib_dev *sdev, struct softib_qp *qp)
{
	struct softib_group *g, *n;

	spin_lock_bh(&sdev->deliver_lock);
	xa_erase(&sdev->qps, qp->ibqp.qp_num);
	list_for_each_entry_safe(g, n, &sdev->groups, node) {
		if (!qp->groups)
			break;
		softib_group_leave(g, qp);
	}
	spin_unlock_bh(&sdev->deliver_lock);
}
