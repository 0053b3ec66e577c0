// SPDX-License-Identifier: GPL-2.0
/*
 * The RC QP of cm_inject --data, through libibverbs. The CM exchange is
 * cm_inject's own (umad); this only moves the QP through its states with
 * what REQ and REP said, and sends messages one at a time, each waited
 * for, so that a test knows every message was acknowledged by the peer's
 * RDMA device before it looks at the peer's counters.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "data_qp.h"

#define DATA_BUF_LEN		65536
#define DATA_ACK_TIMEOUT	14	/* 4.096 us * 2^14: 67 ms */
#define DATA_RETRY		7
#define DATA_MIN_RNR_TIMER	12
#define DATA_SEND_WAIT_MS	5000
#define PSN_MASK		0xffffffu

struct data_qp {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	void *buf;
	int port;
};

uint32_t data_qp_num(const struct data_qp *d)
{
	return d->qp->qp_num;
}

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

struct data_qp *data_qp_open(const char *dev_name, int port)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct data_qp *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->port = port;
	d->ctx = open_by_name(dev_name);
	if (!d->ctx) {
		fprintf(stderr, "data: cannot open RDMA device %s\n", dev_name);
		goto fail;
	}
	d->pd = ibv_alloc_pd(d->ctx);
	d->cq = d->pd ? ibv_create_cq(d->ctx, 8, NULL, NULL, 0) : NULL;
	d->buf = calloc(1, DATA_BUF_LEN);
	if (!d->cq || !d->buf)
		goto fail_msg;
	d->mr = ibv_reg_mr(d->pd, d->buf, DATA_BUF_LEN, 0);
	init.send_cq = d->cq;
	init.recv_cq = d->cq;
	d->qp = d->mr ? ibv_create_qp(d->pd, &init) : NULL;
	if (d->qp)
		return d;
fail_msg:
	perror("data: verbs resources");
fail:
	data_qp_close(d);
	return NULL;
}

int data_qp_connect(struct data_qp *d, uint32_t remote_qpn, uint32_t sq_psn,
		    uint32_t rq_psn, const uint8_t *dgid, int sgid_index,
		    uint8_t hop_limit, unsigned int path_mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)d->port,
	};

	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		perror("data: QP to INIT");
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu >= 4096 ? IBV_MTU_4096 :
		     path_mtu >= 2048 ? IBV_MTU_2048 :
		     path_mtu >= 1024 ? IBV_MTU_1024 :
		     path_mtu >= 512 ? IBV_MTU_512 : IBV_MTU_256;
	a.dest_qp_num = remote_qpn;
	a.rq_psn = rq_psn & PSN_MASK;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = DATA_MIN_RNR_TIMER;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)sgid_index;
	a.ah_attr.grh.hop_limit = hop_limit;
	a.ah_attr.port_num = (uint8_t)d->port;
	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
		perror("data: QP to RTR");
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = DATA_ACK_TIMEOUT;
	a.retry_cnt = DATA_RETRY;
	a.rnr_retry = DATA_RETRY;
	a.sq_psn = sq_psn & PSN_MASK;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC)) {
		perror("data: QP to RTS");
		return -1;
	}
	return 0;
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000L +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int data_qp_send(struct data_qp *d, const void *msg, size_t len,
		 bool with_imm, uint32_t imm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)d->buf,
		.length = (uint32_t)len,
		.lkey = d->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(imm),
	}, *bad;
	struct timespec t0, nap = { .tv_nsec = 1000000 };
	struct ibv_wc wc;
	int n;

	if (len > DATA_BUF_LEN)
		return -1;
	memcpy(d->buf, msg, len);
	if (ibv_post_send(d->qp, &wr, &bad)) {
		perror("data: post send");
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* a nap between polls: rxe does its work in softirqs of this CPU */
	while ((n = ibv_poll_cq(d->cq, 1, &wc)) == 0 &&
	       elapsed_ms(&t0) < DATA_SEND_WAIT_MS)
		nanosleep(&nap, NULL);
	if (n <= 0) {
		fprintf(stderr, "data: no send completion\n");
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "data: send completed with %s\n",
			ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

void data_qp_close(struct data_qp *d)
{
	if (!d)
		return;
	if (d->qp)
		ibv_destroy_qp(d->qp);
	if (d->mr)
		ibv_dereg_mr(d->mr);
	if (d->cq)
		ibv_destroy_cq(d->cq);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	free(d->buf);
	free(d);
}
