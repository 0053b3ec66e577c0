// SPDX-License-Identifier: GPL-2.0
/*
 * ipoib_inject - send hand-made IPoIB datagrams (RFC 4391) to a UD QP, to
 * see how the receiver copes with bad input.
 *
 *   ipoib_inject [options] KIND DGID QPN
 *
 * Opens an RDMA port, creates a UD QP and an address handle to DGID (with
 * a GRH, as RoCE needs) and sends COUNT datagrams of one KIND to QPN. DGID
 * is an IPv6-style GID (fe80::1) or 16 colon-separated octets, as in
 * octets 4-19 of an IPoIB hardware address.
 *
 * With --raw the datagrams do not go through the verbs send queue: each is
 * built as a RoCE v2 packet (BTH, DETH, payload, ICRC) and sent with a UDP
 * socket to port 4791 of DGID. This reaches receivers with messages that
 * the local RDMA device would refuse to send, e.g. longer than its MTU.
 *
 * With --wait the tool keeps receiving on its QP for a while after sending
 * and prints every datagram it gets (ARP replies to its ARP requests).
 *
 * Output is one "key=value" line per event, for scripts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ipoib_wire.h"

#define GRH_LEN			40
#define IB_MAX_MTU		4096
#define RECV_BUF_LEN		(GRH_LEN + IB_MAX_MTU)
#define RECV_DEPTH		32
#define MAX_MSG_LEN		8192
#define HOP_LIMIT		64
#define CQ_TIMEOUT_MS		5000

/* RoCE v2 (IBA Annex A17) */
#define ROCE_V2_PORT		4791
#define BTH_LEN			12
#define DETH_LEN		8
#define ICRC_LEN		4
#define OPCODE_UD_SEND_ONLY	0x64
#define DEFAULT_PKEY		0xffff
#define IPV6_HDR_LEN		40
#define UDP_HDR_LEN		8
#define RAW_PKT_MAX		(BTH_LEN + DETH_LEN + MAX_MSG_LEN + 3 + ICRC_LEN)

/* IPv4, ICMP and ARP as carried over IPoIB */
#define IPV4_HDR_LEN		20
#define ICMP_HDR_LEN		8
#define ICMP_ECHO_REQUEST	8
#define ICMP_ECHO_REPLY		0
#define IPPROTO_ICMP_NUM	1
#define ARP_HDR_LEN		8
#define ARPHRD_INFINIBAND_NUM	32
#define ARP_OP_REQUEST		1
#define ARP_OP_REPLY		2
#define BAD_TYPE		0x1234
#define BAD_RESERVED		0xa5a5
/* 8 + 2 * (20 + 4): what the kernel's ARP pulls before it checks ar_hln */
#define ARP_IPOIB_LEN		(ARP_HDR_LEN + 2 * (IPOIB_ADDR_LEN + 4))
#define ARP_BAD_HLEN		6

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

enum kind {
	KIND_EMPTY,
	KIND_SHORT,
	KIND_BADTYPE,
	KIND_ECHO,
	KIND_RESERVED,
	KIND_ARP,
	KIND_ARP_HLEN,
	KIND_OVERSIZED,
};

struct kind_desc {
	const char *name;
	const char *help;
};

static const struct kind_desc kinds[] = {
	[KIND_EMPTY]	 = { "empty", "0 octets: not even the 4-octet header" },
	[KIND_SHORT]	 = { "short", "1, 2, 3 octets (in turn): a cut header" },
	[KIND_BADTYPE]	 = { "badtype", "Type 0x1234, not in RFC 4391 Table 1" },
	[KIND_ECHO]	 = { "echo", "IPv4 ICMP echo request, Reserved 0" },
	[KIND_RESERVED]	 = { "reserved", "echo with Reserved 0xa5a5 (ignored on receive)" },
	[KIND_ARP]	 = { "arp", "ARP request, hardware length 20" },
	[KIND_ARP_HLEN]	 = { "arp-hlen", "ARP request, hardware length 6" },
	[KIND_OVERSIZED] = { "oversized", "echo, by default 4 octets above the port's MTU" },
};

struct options {
	const char *dev_name;
	int port;
	int gid_index;
	u32 qkey;
	u32 remote_qkey;
	unsigned int count;
	int length;		/* -1: the kind's default */
	u16 dlid;
	struct in_addr src_ip;
	struct in_addr dst_ip;
	int wait_ms;
	int expect;		/* stop waiting after this many; -1: never */
	bool raw;
	enum kind kind;
	union ibv_gid dgid;
	u32 dqpn;
};

struct ctx {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	u8 *buf;		/* send slot, then RECV_DEPTH receive slots */
	union ibv_gid gid;
	unsigned int mtu;	/* active MTU in octets; 0: not queried */
	u8 lladdr[IPOIB_ADDR_LEN];
	int sock;		/* --raw */
	u8 raw_hdr[IPV6_HDR_LEN + UDP_HDR_LEN];	/* what the ICRC covers */
};

static void put16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static void put24(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 16);
	p[1] = (u8)(v >> 8);
	p[2] = (u8)v;
}

static void put32(u8 *p, u32 v)
{
	put16(p, (u16)(v >> 16));
	put16(p + 2, (u16)v);
}

static u16 get16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

/* RFC 1071 checksum */
static u16 inet_csum(const u8 *p, size_t len)
{
	u32 sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (u32)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

/* CRC-32 (IEEE, reflected) without the final inversion, as crc32_le() */
static u32 crc32_update(u32 crc, const u8 *p, size_t len)
{
	int i;

	while (len--) {
		crc ^= *p++;
		for (i = 0; i < 8; i++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return crc;
}

static void fill_pattern(u8 *p, size_t len, unsigned int seq)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seq + i);
}

/* IPv4 ICMP echo request of @len octets (encapsulation header included) */
static size_t build_echo(const struct options *o, u8 *msg, size_t len,
			 u16 reserved, unsigned int seq)
{
	u8 *ip = msg + IPOIB_ENCAP_LEN;
	u8 *icmp = ip + IPV4_HDR_LEN;
	size_t ip_len = len - IPOIB_ENCAP_LEN;

	ipoib_encap_pack(msg, IPOIB_TYPE_IPV4);
	put16(msg + 2, reserved);
	memset(ip, 0, IPV4_HDR_LEN);
	ip[0] = 0x45;			/* version 4, 5 words */
	put16(ip + 2, (u16)ip_len);
	put16(ip + 4, (u16)seq);	/* identification */
	ip[8] = HOP_LIMIT;
	ip[9] = IPPROTO_ICMP_NUM;
	memcpy(ip + 12, &o->src_ip, 4);
	memcpy(ip + 16, &o->dst_ip, 4);
	put16(ip + 10, inet_csum(ip, IPV4_HDR_LEN));

	memset(icmp, 0, ICMP_HDR_LEN);
	icmp[0] = ICMP_ECHO_REQUEST;
	put16(icmp + 4, (u16)getpid());
	put16(icmp + 6, (u16)seq);
	fill_pattern(icmp + ICMP_HDR_LEN,
		     ip_len - IPV4_HDR_LEN - ICMP_HDR_LEN, seq);
	put16(icmp + 2, inet_csum(icmp, ip_len - IPV4_HDR_LEN));
	return len;
}

/*
 * ARP request for dst_ip from src_ip with @hlen-octet hardware addresses:
 * ours (truncated for a short @hlen) as sender, zeros as target. Padded
 * with zeros to @len.
 */
static size_t build_arp(const struct ctx *c, const struct options *o,
			u8 *msg, size_t len, u8 hlen)
{
	u8 *arp = msg + IPOIB_ENCAP_LEN;
	u8 *p = arp + ARP_HDR_LEN;

	memset(msg, 0, len);
	ipoib_encap_pack(msg, IPOIB_TYPE_ARP);
	put16(arp, ARPHRD_INFINIBAND_NUM);
	put16(arp + 2, IPOIB_TYPE_IPV4);
	arp[4] = hlen;
	arp[5] = 4;
	put16(arp + 6, ARP_OP_REQUEST);
	memcpy(p, c->lladdr, hlen);
	p += hlen;
	memcpy(p, &o->src_ip, 4);
	p += 4 + hlen;			/* target hardware address: zeros */
	memcpy(p, &o->dst_ip, 4);
	return len;
}

static size_t default_length(const struct ctx *c, enum kind kind)
{
	switch (kind) {
	case KIND_EMPTY:
		return 0;
	case KIND_SHORT:
		return 1;
	case KIND_BADTYPE:
		return 64;
	case KIND_ECHO:
	case KIND_RESERVED:
		/* as `ping`: 56 data octets */
		return IPOIB_ENCAP_LEN + IPV4_HDR_LEN + ICMP_HDR_LEN + 56;
	case KIND_ARP:
	case KIND_ARP_HLEN:
		return IPOIB_ENCAP_LEN + ARP_IPOIB_LEN;
	case KIND_OVERSIZED:
		return c->mtu + 4;
	}
	return 0;
}

/* Length limits of each kind: [min, max] */
static void length_limits(enum kind kind, size_t *min, size_t *max)
{
	*max = MAX_MSG_LEN;
	switch (kind) {
	case KIND_EMPTY:
		*min = 0;
		*max = 0;
		break;
	case KIND_SHORT:
		*min = 1;
		*max = IPOIB_ENCAP_LEN - 1;
		break;
	case KIND_BADTYPE:
		*min = IPOIB_ENCAP_LEN;
		break;
	case KIND_ARP:
	case KIND_ARP_HLEN:
		*min = IPOIB_ENCAP_LEN + ARP_IPOIB_LEN;
		break;
	default:
		*min = IPOIB_ENCAP_LEN + IPV4_HDR_LEN + ICMP_HDR_LEN;
		break;
	}
}

/* Datagram @seq of the run into @msg; returns its length. */
static size_t build_msg(const struct ctx *c, const struct options *o,
			u8 *msg, unsigned int seq)
{
	size_t len = o->length >= 0 ? (size_t)o->length :
		     default_length(c, o->kind);

	switch (o->kind) {
	case KIND_EMPTY:
		return 0;
	case KIND_SHORT:
		/* an encapsulation header (Type IPv4) cut at 1, 2 or 3 octets */
		if (o->length < 0)
			len = 1 + seq % (IPOIB_ENCAP_LEN - 1);
		memset(msg, 0, len);
		msg[0] = IPOIB_TYPE_IPV4 >> 8;
		return len;
	case KIND_BADTYPE:
		ipoib_encap_pack(msg, BAD_TYPE);
		fill_pattern(msg + IPOIB_ENCAP_LEN, len - IPOIB_ENCAP_LEN, seq);
		return len;
	case KIND_ECHO:
	case KIND_OVERSIZED:
		return build_echo(o, msg, len, 0, seq);
	case KIND_RESERVED:
		return build_echo(o, msg, len, BAD_RESERVED, seq);
	case KIND_ARP:
		return build_arp(c, o, msg, len, IPOIB_ADDR_LEN);
	case KIND_ARP_HLEN:
		return build_arp(c, o, msg, len, ARP_BAD_HLEN);
	}
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static const char *gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid->raw, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

static void print_lladdr(const u8 *a)
{
	int i;

	printf("lladdr=");
	for (i = 0; i < IPOIB_ADDR_LEN; i++)
		printf("%02x%s", a[i], i == IPOIB_ADDR_LEN - 1 ? "" : ":");
}

static int modify_qp(struct ibv_qp *qp, enum ibv_qp_state state,
		     const struct options *o)
{
	struct ibv_qp_attr attr = { .qp_state = state };
	int mask = IBV_QP_STATE;

	if (state == IBV_QPS_INIT) {
		attr.pkey_index = 0;
		attr.port_num = (u8)o->port;
		attr.qkey = o->qkey;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	} else if (state == IBV_QPS_RTS) {
		attr.sq_psn = 0;
		mask |= IBV_QP_SQ_PSN;
	}
	return ibv_modify_qp(qp, &attr, mask);
}

static int post_recv(struct ctx *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->buf + MAX_MSG_LEN + slot * RECV_BUF_LEN),
		.length = RECV_BUF_LEN,
		.lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = slot,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	return ibv_post_recv(c->qp, &wr, &bad);
}

static struct ibv_qp *create_qp(struct ctx *c)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = c->send_cq,
		.recv_cq = c->recv_cq,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = RECV_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_UD,
	};

	return ibv_create_qp(c->pd, &attr);
}

/* RoCE needs a GRH on every address handle; IB takes one too. */
static struct ibv_ah *create_ah(struct ctx *c, const struct options *o)
{
	struct ibv_ah_attr attr = {
		.is_global = 1,
		.grh = {
			.dgid = o->dgid,
			.sgid_index = (u8)o->gid_index,
			.hop_limit = HOP_LIMIT,
		},
		.dlid = o->dlid,
		.port_num = (u8)o->port,
	};

	return ibv_create_ah(c->pd, &attr);
}

static int open_port(struct ctx *c, const struct options *o)
{
	struct ibv_device **list;
	struct ibv_port_attr pattr;
	struct ipoib_lladdr ll = { 0 };
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), o->dev_name))
			break;
	if (i == n) {
		fprintf(stderr, "no RDMA device %s\n", o->dev_name);
		ibv_free_device_list(list);
		return -1;
	}
	c->verbs = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!c->verbs) {
		fprintf(stderr, "cannot open %s\n", o->dev_name);
		return -1;
	}
	if (ibv_query_gid(c->verbs, (u8)o->port, o->gid_index, &c->gid)) {
		fprintf(stderr, "cannot query %s port %d GID %d\n",
			o->dev_name, o->port, o->gid_index);
		return -1;
	}
	/*
	 * Only when needed: on some kernels every port query of a RoCE
	 * port whose NIC has no link speed logs a warning.
	 */
	if (o->kind == KIND_OVERSIZED && o->length < 0) {
		if (ibv_query_port(c->verbs, (u8)o->port, &pattr)) {
			fprintf(stderr, "cannot query %s port %d\n",
				o->dev_name, o->port);
			return -1;
		}
		c->mtu = 128u << pattr.active_mtu;
	}

	c->pd = ibv_alloc_pd(c->verbs);
	c->send_cq = ibv_create_cq(c->verbs, 16, NULL, NULL, 0);
	c->recv_cq = ibv_create_cq(c->verbs, RECV_DEPTH, NULL, NULL, 0);
	c->buf = calloc(1, MAX_MSG_LEN + RECV_DEPTH * RECV_BUF_LEN);
	if (!c->pd || !c->send_cq || !c->recv_cq || !c->buf) {
		fprintf(stderr, "cannot allocate PD, CQs and buffers\n");
		return -1;
	}
	c->mr = ibv_reg_mr(c->pd, c->buf,
			   MAX_MSG_LEN + RECV_DEPTH * RECV_BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr) {
		perror("ibv_reg_mr");
		return -1;
	}

	c->qp = create_qp(c);
	if (!c->qp) {
		perror("ibv_create_qp");
		return -1;
	}
	if (modify_qp(c->qp, IBV_QPS_INIT, o) ||
	    modify_qp(c->qp, IBV_QPS_RTR, o) ||
	    modify_qp(c->qp, IBV_QPS_RTS, o)) {
		perror("ibv_modify_qp");
		return -1;
	}
	for (i = 0; i < RECV_DEPTH; i++) {
		if (post_recv(c, i)) {
			perror("ibv_post_recv");
			return -1;
		}
	}

	c->ah = create_ah(c, o);
	if (!c->ah) {
		perror("ibv_create_ah");
		return -1;
	}

	ll.qpn = c->qp->qp_num;
	memcpy(ll.gid, c->gid.raw, IPOIB_GID_LEN);
	ipoib_lladdr_pack(c->lladdr, &ll);
	return 0;
}

static void close_port(struct ctx *c)
{
	if (c->ah)
		ibv_destroy_ah(c->ah);
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->recv_cq)
		ibv_destroy_cq(c->recv_cq);
	if (c->send_cq)
		ibv_destroy_cq(c->send_cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->verbs)
		ibv_close_device(c->verbs);
	if (c->sock >= 0)
		close(c->sock);
	free(c->buf);
}

/* Post one send and wait for its completion: 0 success, 1 error, -1 fail */
static int send_verbs(struct ctx *c, const struct options *o, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf,
		.length = (u32)len,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = {
			.ah = c->ah,
			.remote_qpn = o->dqpn,
			.remote_qkey = o->remote_qkey,
		},
	}, *bad;
	long deadline = now_ms() + CQ_TIMEOUT_MS;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(c->qp, &wr, &bad)) {
		perror("ibv_post_send");
		return -1;
	}
	do {
		n = ibv_poll_cq(c->send_cq, 1, &wc);
		if (n < 0) {
			fprintf(stderr, "ibv_poll_cq failed\n");
			return -1;
		}
		if (n)
			break;
		usleep(100);
	} while (now_ms() < deadline);
	if (!n) {
		fprintf(stderr, "no send completion in %d ms\n", CQ_TIMEOUT_MS);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		printf("send_error status=%d (%s)\n", wc.status,
		       ibv_wc_status_str(wc.status));
		return 1;
	}
	return 0;
}

/* Name of the netdev behind a RoCE GID, from sysfs. */
static int gid_ndev(const struct options *o, char *name, size_t len)
{
	char path[256];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d",
		 o->dev_name, o->port, o->gid_index);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = !!fgets(name, (int)len, f);
	fclose(f);
	if (!ok)
		return -1;
	name[strcspn(name, "\n")] = '\0';
	return 0;
}

/*
 * A UDP socket to port 4791 of the destination GID, and the IPv6 and UDP
 * header fields that the ICRC covers, as the kernel will send them.
 */
static int open_raw(struct ctx *c, const struct options *o)
{
	struct sockaddr_in6 dst = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(ROCE_V2_PORT),
	};
	struct sockaddr_in6 src;
	socklen_t slen = sizeof(src);
	int pmtu = IPV6_PMTUDISC_DO;
	char ndev[IF_NAMESIZE + 1];

	if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)o->dgid.raw)) {
		fprintf(stderr, "--raw: only IPv6 GIDs (RoCE v2 over IPv6)\n");
		return -1;
	}
	memcpy(&dst.sin6_addr, o->dgid.raw, sizeof(dst.sin6_addr));
	if (IN6_IS_ADDR_LINKLOCAL(&dst.sin6_addr)) {
		if (gid_ndev(o, ndev, sizeof(ndev))) {
			fprintf(stderr, "--raw: no netdev behind GID %d\n",
				o->gid_index);
			return -1;
		}
		dst.sin6_scope_id = if_nametoindex(ndev);
	}
	c->sock = socket(AF_INET6, SOCK_DGRAM, 0);
	if (c->sock < 0 ||
	    setsockopt(c->sock, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu,
		       sizeof(pmtu)) ||
	    connect(c->sock, (struct sockaddr *)&dst, sizeof(dst)) ||
	    getsockname(c->sock, (struct sockaddr *)&src, &slen)) {
		perror("--raw: UDP socket");
		return -1;
	}
	/* version 6; traffic class, flow label and hop limit are masked */
	memset(c->raw_hdr, 0, sizeof(c->raw_hdr));
	c->raw_hdr[0] = 0x60;
	c->raw_hdr[6] = IPPROTO_UDP;
	memcpy(c->raw_hdr + 8, &src.sin6_addr, 16);
	memcpy(c->raw_hdr + 24, &dst.sin6_addr, 16);
	memcpy(c->raw_hdr + IPV6_HDR_LEN, &src.sin6_port, 2);
	memcpy(c->raw_hdr + IPV6_HDR_LEN + 2, &dst.sin6_port, 2);
	return 0;
}

/*
 * The ICRC (IBA Annex A17.3.3): CRC-32 over a masked LRH (8 octets of
 * ones), the IPv6 header with traffic class, flow label and hop limit
 * masked, the UDP header with the checksum masked, the BTH with its
 * reserved octet masked, then the rest of the packet. Sent inverted, in
 * the byte order rxe uses (least significant octet first).
 */
static u32 roce_icrc(struct ctx *c, const u8 *pkt, size_t len)
{
	static const u8 ones[8] = { 0xff, 0xff, 0xff, 0xff,
				    0xff, 0xff, 0xff, 0xff };
	u8 hdr[IPV6_HDR_LEN + UDP_HDR_LEN + BTH_LEN];
	u32 crc;

	memcpy(hdr, c->raw_hdr, IPV6_HDR_LEN + UDP_HDR_LEN);
	hdr[0] |= 0x0f;
	memset(hdr + 1, 0xff, 3);
	put16(hdr + 4, (u16)(UDP_HDR_LEN + len + ICRC_LEN));
	hdr[7] = 0xff;
	put16(hdr + IPV6_HDR_LEN + 4, (u16)(UDP_HDR_LEN + len + ICRC_LEN));
	put16(hdr + IPV6_HDR_LEN + 6, 0xffff);
	memcpy(hdr + IPV6_HDR_LEN + UDP_HDR_LEN, pkt, BTH_LEN);
	hdr[IPV6_HDR_LEN + UDP_HDR_LEN + 4] = 0xff;

	crc = crc32_update(0xffffffffu, ones, sizeof(ones));
	crc = crc32_update(crc, hdr, sizeof(hdr));
	crc = crc32_update(crc, pkt + BTH_LEN, len - BTH_LEN);
	return ~crc;
}

/* One UD SEND Only packet carrying c->buf[0..len) to o->dqpn. */
static int send_raw(struct ctx *c, const struct options *o, size_t len,
		    unsigned int seq)
{
	static u8 pkt[RAW_PKT_MAX];
	size_t pad = (4 - len % 4) % 4;
	size_t n = BTH_LEN + DETH_LEN + len + pad;
	u32 icrc;

	memset(pkt, 0, n);
	pkt[0] = OPCODE_UD_SEND_ONLY;
	pkt[1] = (u8)(pad << 4);	/* SE 0, M 0, PadCnt, TVer 0 */
	put16(pkt + 2, DEFAULT_PKEY);
	put24(pkt + 5, o->dqpn);
	put24(pkt + 9, seq);		/* PSN: not checked on UD */
	put32(pkt + BTH_LEN, o->remote_qkey);
	put24(pkt + BTH_LEN + 5, c->qp->qp_num);
	memcpy(pkt + BTH_LEN + DETH_LEN, c->buf, len);
	icrc = roce_icrc(c, pkt, n);
	pkt[n++] = (u8)icrc;
	pkt[n++] = (u8)(icrc >> 8);
	pkt[n++] = (u8)(icrc >> 16);
	pkt[n++] = (u8)(icrc >> 24);
	if (send(c->sock, pkt, n, 0) != (ssize_t)n) {
		perror("--raw: send");
		return -1;
	}
	return 0;
}

/* Describe one received datagram (GRH area first). */
static void print_recv(const struct ctx *c, const struct ibv_wc *wc)
{
	const u8 *p = c->buf + MAX_MSG_LEN + wc->wr_id * RECV_BUF_LEN;
	size_t len = wc->byte_len;
	u16 type;

	printf("recv len=%u src_qpn=0x%06x", wc->byte_len, wc->src_qp);
	if (len < GRH_LEN + IPOIB_ENCAP_LEN) {
		printf("\n");
		return;
	}
	p += GRH_LEN;
	len -= GRH_LEN;
	type = get16(p);
	printf(" type=0x%04x", type);
	if (type == IPOIB_TYPE_ARP && len >= IPOIB_ENCAP_LEN + ARP_HDR_LEN)
		printf(" arp_op=%u", get16(p + IPOIB_ENCAP_LEN + 6));
	if (type == IPOIB_TYPE_IPV4 &&
	    len >= IPOIB_ENCAP_LEN + IPV4_HDR_LEN + ICMP_HDR_LEN &&
	    p[IPOIB_ENCAP_LEN + 9] == IPPROTO_ICMP_NUM)
		printf(" icmp_type=%u",
		       p[IPOIB_ENCAP_LEN + (p[IPOIB_ENCAP_LEN] & 0xf) * 4]);
	printf("\n");
}

/* Receive for o->wait_ms (or until o->expect datagrams); returns the count */
static int receive(struct ctx *c, const struct options *o)
{
	long deadline = now_ms() + o->wait_ms;
	struct ibv_wc wc;
	int got = 0, n;

	while (now_ms() < deadline && (o->expect < 0 || got < o->expect)) {
		n = ibv_poll_cq(c->recv_cq, 1, &wc);
		if (n < 0)
			return -1;
		if (!n) {
			usleep(1000);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			printf("recv_error status=%d (%s)\n", wc.status,
			       ibv_wc_status_str(wc.status));
		} else {
			print_recv(c, &wc);
			got++;
		}
		if (post_recv(c, (unsigned int)wc.wr_id))
			return -1;
	}
	return got;
}

static void show_help(FILE *f)
{
	size_t i;

	fprintf(f, "usage: ipoib_inject [options] KIND DGID QPN\n");
	fprintf(f,
		"  -d, --device NAME    RDMA device (rxe0)\n"
		"  -i, --port N         port (1)\n"
		"  -g, --gid-index N    source GID index (0)\n"
		"  -q, --qkey Q         Q_Key of our QP and of the sends (0x0b1b)\n"
		"  -r, --remote-qkey Q  Q_Key of the sends only\n"
		"  -n, --count N        datagrams to send (1)\n"
		"  -l, --length L       datagram octets, header included\n"
		"  -L, --dlid LID       destination LID (InfiniBand only)\n"
		"  -s, --src-ip A       IPv4 sender of echo and ARP (10.20.0.1)\n"
		"  -t, --dst-ip A       IPv4 target of echo and ARP (10.20.0.2)\n"
		"  -w, --wait MS        then receive for MS ms, print datagrams\n"
		"  -e, --expect N       stop receiving after N datagrams\n"
		"  -R, --raw            send RoCE v2 packets over UDP, not verbs\n"
		"KIND:\n");
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		fprintf(f, "  %-10s %s\n", kinds[i].name, kinds[i].help);
	fprintf(f, "DGID: fe80::1 or 16 colon-separated octets; QPN: 0x11 or 17\n");
}

static int parse_u32(const char *s, u32 max, u32 *v)
{
	unsigned long x;
	char *end;

	errno = 0;
	x = strtoul(s, &end, 0);
	if (errno || end == s || *end || x > max)
		return -1;
	*v = (u32)x;
	return 0;
}

/* fe80::1, or 16 colon-separated hexadecimal octets */
static int parse_gid(const char *s, union ibv_gid *gid)
{
	const char *p = s;
	unsigned long x;
	char *end;
	int i;

	if (inet_pton(AF_INET6, s, gid->raw) == 1)
		return 0;
	for (i = 0; i < IPOIB_GID_LEN; i++) {
		errno = 0;
		x = strtoul(p, &end, 16);
		if (errno || end == p || end - p > 2 || x > 0xff ||
		    *end != (i == IPOIB_GID_LEN - 1 ? '\0' : ':'))
			return -1;
		gid->raw[i] = (u8)x;
		p = end + 1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'i' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "qkey", required_argument, NULL, 'q' },
		{ "remote-qkey", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'n' },
		{ "length", required_argument, NULL, 'l' },
		{ "dlid", required_argument, NULL, 'L' },
		{ "src-ip", required_argument, NULL, 's' },
		{ "dst-ip", required_argument, NULL, 't' },
		{ "wait", required_argument, NULL, 'w' },
		{ "expect", required_argument, NULL, 'e' },
		{ "raw", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool remote_qkey_set = false;
	u32 v;
	size_t i;
	int opt;

	while ((opt = getopt_long(argc, argv, "d:i:g:q:r:n:l:L:s:t:w:e:Rh",
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			o->dev_name = optarg;
			break;
		case 'i':
			if (parse_u32(optarg, 255, &v) || !v)
				goto bad;
			o->port = (int)v;
			break;
		case 'g':
			if (parse_u32(optarg, 255, &v))
				goto bad;
			o->gid_index = (int)v;
			break;
		case 'q':
			if (parse_u32(optarg, 0xffffffffu, &o->qkey))
				goto bad;
			break;
		case 'r':
			if (parse_u32(optarg, 0xffffffffu, &o->remote_qkey))
				goto bad;
			remote_qkey_set = true;
			break;
		case 'n':
			if (parse_u32(optarg, 1000000, &o->count))
				goto bad;
			break;
		case 'l':
			if (parse_u32(optarg, MAX_MSG_LEN, &v))
				goto bad;
			o->length = (int)v;
			break;
		case 'L':
			if (parse_u32(optarg, 0xffff, &v))
				goto bad;
			o->dlid = (u16)v;
			break;
		case 's':
			if (inet_pton(AF_INET, optarg, &o->src_ip) != 1)
				goto bad;
			break;
		case 't':
			if (inet_pton(AF_INET, optarg, &o->dst_ip) != 1)
				goto bad;
			break;
		case 'w':
			if (parse_u32(optarg, 600000, &v))
				goto bad;
			o->wait_ms = (int)v;
			break;
		case 'e':
			if (parse_u32(optarg, 1000000, &v))
				goto bad;
			o->expect = (int)v;
			break;
		case 'R':
			o->raw = true;
			break;
		case 'h':
			show_help(stdout);
			exit(0);
		default:
			show_help(stderr);
			return -1;
		}
	}
	if (!remote_qkey_set)
		o->remote_qkey = o->qkey;
	if (argc - optind != 3) {
		show_help(stderr);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(argv[optind], kinds[i].name))
			break;
	if (i == ARRAY_SIZE(kinds)) {
		fprintf(stderr, "unknown KIND %s\n", argv[optind]);
		return -1;
	}
	o->kind = (enum kind)i;
	if (parse_gid(argv[optind + 1], &o->dgid)) {
		fprintf(stderr, "bad DGID %s\n", argv[optind + 1]);
		return -1;
	}
	if (parse_u32(argv[optind + 2], IPOIB_QPN_MASK, &o->dqpn)) {
		fprintf(stderr, "bad QPN %s\n", argv[optind + 2]);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "bad value for -%c: %s\n", opt, optarg);
	return -1;
}

int main(int argc, char **argv)
{
	struct options o = {
		.dev_name = "rxe0",
		.port = 1,
		.qkey = IPOIB_DEFAULT_QKEY,
		.count = 1,
		.length = -1,
		.expect = -1,
	};
	struct ctx c = { .sock = -1 };
	unsigned int i, ok = 0, errors = 0;
	size_t min, max, len = 0, bytes = 0;
	char g1[INET6_ADDRSTRLEN], g2[INET6_ADDRSTRLEN];
	int ret = 1, r;

	inet_pton(AF_INET, "10.20.0.1", &o.src_ip);
	inet_pton(AF_INET, "10.20.0.2", &o.dst_ip);
	if (parse_args(argc, argv, &o))
		return 2;
	length_limits(o.kind, &min, &max);
	if (o.length >= 0 && ((size_t)o.length < min || (size_t)o.length > max)) {
		fprintf(stderr, "%s: length must be %zu..%zu\n",
			kinds[o.kind].name, min, max);
		return 2;
	}
	if (open_port(&c, &o) || (o.raw && open_raw(&c, &o)))
		goto out;
	printf("local dev=%s port=%d gid=%s qpn=0x%06x ",
	       o.dev_name, o.port, gid_str(&c.gid, g1, sizeof(g1)),
	       c.qp->qp_num);
	if (c.mtu)
		printf("mtu=%u ", c.mtu);
	print_lladdr(c.lladdr);
	printf("\n");
	printf("dest gid=%s qpn=0x%06x qkey=0x%x via=%s\n",
	       gid_str(&o.dgid, g2, sizeof(g2)), o.dqpn, o.remote_qkey,
	       o.raw ? "udp" : "verbs");

	for (i = 0; i < o.count; i++) {
		len = build_msg(&c, &o, c.buf, i);
		if (o.raw)
			r = send_raw(&c, &o, len, i);
		else
			r = send_verbs(&c, &o, len);
		if (r < 0)
			goto out;
		if (r)
			errors++;
		else
			ok++;
		bytes += len;
	}
	printf("sent kind=%s count=%u ok=%u errors=%u bytes=%zu last_len=%zu\n",
	       kinds[o.kind].name, o.count, ok, errors, bytes, len);
	fflush(stdout);
	if (o.wait_ms) {
		r = receive(&c, &o);
		if (r < 0) {
			fprintf(stderr, "receive failed\n");
			goto out;
		}
		printf("received count=%d\n", r);
	}
	ret = errors ? 1 : 0;
out:
	close_port(&c);
	return ret;
}
