// SPDX-License-Identifier: GPL-2.0
/*
 * The UD transport of an interface: protection domain, completion queues
 * and the one UD QP whose number is in our link-layer address
 * (RFC 4391 s9.1.1), and the QP's state changes on open and stop.
 */
#include "ipoib.h"

static struct ib_cq *ipoib_create_cq(struct ipoib_dev *priv,
				     unsigned int entries)
{
	struct ib_cq_init_attr attr = {
		.cqe = entries,
		.comp_vector = priv->ca->num_comp_vectors ?
			       priv->port % priv->ca->num_comp_vectors : 0,
	};

	return ib_create_cq(priv->ca, NULL, NULL, priv, &attr);
}

int ipoib_ib_init(struct ipoib_dev *priv)
{
	struct ib_qp_init_attr qp_attr = {
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_UD,
		.cap = {
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	int ret;

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

/* RESET -> INIT -> RTR -> RTS: a UD QP needs no remote attributes. */
int ipoib_ib_open(struct ipoib_dev *priv)
{
	int ret;

	ret = ipoib_qp_to(priv, IB_QPS_INIT);
	if (!ret)
		ret = ipoib_qp_to(priv, IB_QPS_RTR);
	if (!ret)
		ret = ipoib_qp_to(priv, IB_QPS_RTS);
	if (ret) {
		ipoib_qp_to(priv, IB_QPS_RESET);
		return ret;
	}
	set_bit(IPOIB_FLAG_QP_READY, &priv->flags);
	return 0;
}

void ipoib_ib_stop(struct ipoib_dev *priv)
{
	clear_bit(IPOIB_FLAG_QP_READY, &priv->flags);
	ipoib_qp_to(priv, IB_QPS_RESET);
}
