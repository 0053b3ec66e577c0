/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A real RC QP behind cm_inject's REQ (--data): once the peer's end is
 * live (REP answered with RTU), it sends hand-made IPoIB-CM messages.
 */
#ifndef CM_INJECT_DATA_QP_H
#define CM_INJECT_DATA_QP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct data_qp;

/* PD, CQ, RC QP in RESET and a registered buffer; NULL on failure (said) */
struct data_qp *data_qp_open(const char *dev_name, int port);
uint32_t data_qp_num(const struct data_qp *d);
/*
 * INIT -> RTR -> RTS towards the peer's QP: @sq_psn is the REP's
 * starting PSN (what the peer expects first), @rq_psn the REQ's.
 */
int data_qp_connect(struct data_qp *d, uint32_t remote_qpn, uint32_t sq_psn,
		    uint32_t rq_psn, const uint8_t *dgid, int sgid_index,
		    uint8_t hop_limit, unsigned int path_mtu);
/* One Send (with Immediate @imm if @with_imm) of @len octets; 0 on success */
int data_qp_send(struct data_qp *d, const void *msg, size_t len,
		 bool with_imm, uint32_t imm);
void data_qp_close(struct data_qp *d);

#endif
