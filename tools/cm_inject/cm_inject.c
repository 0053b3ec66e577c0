// SPDX-License-Identifier: GPL-2.0
/*
 * cm_inject - send hand-made InfiniBand CM REQ MADs to a peer's connection
 * manager, to see how an IPoIB-CM (RFC 4755) receiver copes with good and
 * bad private data.
 *
 *   cm_inject [options] VARIANT DGID [SID]
 *
 * Each REQ is a complete 256-octet CM MAD (class 0x07, version 2, method
 * Send, attribute REQ 0x0010) asking for an RC (or UC) connection to
 * service SID at DGID, with a RoCE v2 primary path: local and remote port
 * GIDs, P_Key 0xffff, path MTU, hop limit and timeouts as a kernel
 * requester fills them in. The local QPN, starting PSN and communication
 * ID it claims belong to no real QP: the tool only talks to the CM. The
 * private data is the RFC 4755 section 6 layout (Reserved, UD QPN,
 * Receive MTU) or a broken variant of it (see show_help()).
 *
 * The MADs go out through libibumad on QP1 of the local port (on rxe: as
 * RoCE v2 UDP packets to port 4791, with a GRH built from DGID and the
 * source GID index), from a send-only MAD agent: no local CM is needed,
 * and any SID and communication ID can be used.
 *
 * What it can observe:
 * - whether the local MAD layer accepted each send (write() to umad);
 * - with --wait, the peer's CM answers (REJ, REP, MRA) to its REQs, by
 *   sniffing UDP port 4791 on the netdev behind the source GID with a
 *   packet socket (needs CAP_NET_RAW). They cannot be read through umad:
 *   CM messages all use method Send, so the MAD layer hands them to
 *   whoever registered for CM Sends, i.e. the local kernel ib_cm if it is
 *   loaded (it drops them: it knows none of our communication IDs).
 * What it cannot observe:
 * - wire-level delivery of the REQ, retransmissions and ICRC errors (no
 *   send completions reach userspace for MADs without a response timeout);
 * - replies over InfiniBand proper (there is no netdev to sniff);
 * - what the peer's consumer did with the private data, other than
 *   through the answer. After a REP the peer waits for an RTU;
 *   --reject-rep sends it a REJ instead, to end the attempt at once, and
 *   --rtu the RTU, after which the peer's end of the connection is live
 *   (ours has no QP: it never sends or acknowledges anything). With
 *   --peers, REQ k claims UD QPN + k, so --count N looks like N peers.
 *
 * A DGID is an IPv6-style GID (fe80::5054:ff:fe12:3402, ::ffff:10.10.0.2)
 * or an IPv4 address (10.10.0.2, taken as the IPv4-mapped GID). By default
 * the source GID is the first RoCE v2 GID of the port of the same kind
 * (IPv4-mapped or not) as DGID.
 *
 * Output is one "key=value" line per event, for scripts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/umad.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "data_qp.h"
#include "ipoib_wire.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define SYSFS_IB		"/sys/class/infiniband"
#define MAX_GID_INDEX		256

/* MAD header (IBA 13.4.3) and the CM class (IBA chapter 12) */
#define MAD_LEN			256
#define MAD_HDR_LEN		24
#define MAD_BASE_VERSION	1
#define MAD_CLASS_CM		0x07
#define MAD_CM_CLASS_VERSION	2
#define MAD_METHOD_SEND		0x03
#define MAD_OFF_CLASS		1
#define MAD_OFF_METHOD		3
#define MAD_OFF_TID		8
#define MAD_OFF_ATTR		16
#define CM_ATTR_REQ		0x0010
#define CM_ATTR_MRA		0x0011
#define CM_ATTR_REJ		0x0012
#define CM_ATTR_REP		0x0013
#define CM_ATTR_RTU		0x0014
/* what a REQ of ours has had from the peer (struct ctx answered) */
#define ANSWERED_REP		0x01
#define ANSWERED_REJ		0x02
#define ANSWERED_MRA		0x04
#define QP1_QKEY		0x80010000u
#define GSI_QPN			1

/* REQ fields, octet offsets from the start of the CM message */
#define REQ_LOCAL_COMM_ID	0
#define REQ_SERVICE_ID		8
#define REQ_LOCAL_CA_GUID	16
#define REQ_LOCAL_QKEY		28
#define REQ_LOCAL_QPN		32	/* 24 bits, then responder resources */
#define REQ_RESP_RESOURCES	35
#define REQ_INIT_DEPTH		39
#define REQ_TIMEOUT_TYPE_FC	43	/* remote CM timeout:5 type:2 fc:1 */
#define REQ_STARTING_PSN	44	/* 24 bits */
#define REQ_TIMEOUT_RETRY	47	/* local CM timeout:5 retry count:3 */
#define REQ_PKEY		48
#define REQ_MTU_RDC_RNR		50	/* path MTU:4 RDC:1 RNR retry:3 */
#define REQ_CMRETRY_SRQ_EXT	51	/* max CM retries:4 SRQ:1 ext:3 */
#define REQ_PRI_LOCAL_LID	52
#define REQ_PRI_REMOTE_LID	54
#define REQ_PRI_LOCAL_GID	56
#define REQ_PRI_REMOTE_GID	72
#define REQ_PRI_FLOW_RATE	88	/* flow label:20 rsvd:6 rate:6 */
#define REQ_PRI_TCLASS		92
#define REQ_PRI_HOP_LIMIT	93
#define REQ_PRI_SL_SUBNET	94	/* SL:4 subnet local:1 rsvd:3 */
#define REQ_PRI_ACK_TIMEOUT	95	/* local ACK timeout:5 rsvd:3 */
#define REQ_PRIVATE_DATA	140
#define REQ_PDATA_LEN		92

/* REJ, REP and MRA fields */
#define CM_LOCAL_COMM_ID	0
#define CM_REMOTE_COMM_ID	4
#define REJ_MSG_REJECTED	8	/* top 2 bits */
#define REJ_ARI_LEN		9	/* top 7 bits */
#define REJ_REASON		10
#define REJ_PRIVATE_DATA	84	/* after the 72-octet ARI */
#define REP_LOCAL_QPN		12
#define REP_STARTING_PSN	20
#define REP_PRIVATE_DATA	36
#define RTU_PRIVATE_DATA	8
#define REJ_MSG_REQ		0
#define REJ_MSG_REP		1
#define REJ_CONSUMER		28

/* What a kernel requester puts in a REQ, more or less */
#define CM_RESPONSE_TIMEOUT	20	/* 4.096 us * 2^20: about 4 s */
#define CM_MAX_RETRIES		15
#define QP_RETRY_COUNT		7
#define QP_RNR_RETRY_COUNT	7
#define ACK_TIMEOUT		18	/* about 1 s */
#define RATE_10_GBPS		3
#define LID_PERMISSIVE		0xffff
#define TRANSPORT_RC		0
#define TRANSPORT_UC		1

/* RoCE v2 as it arrives on the netdev */
#define ROCE_V2_PORT		4791
#define BTH_LEN			12
#define DETH_LEN		8
#define OPCODE_UD_SEND_ONLY	0x64
#define IPV6_HDR_LEN		40
#define IPV4_HDR_MIN		20
#define UDP_HDR_LEN		8
#define IPPROTO_UDP_NUM		17
#define PKT_BUF_LEN		4096

/*
 * RFC 4755 section 5: the default IPoIB-CM link MTU is 2048 octets, the
 * 4-octet encapsulation header included. The link MTU must carry the
 * smallest datagram each protocol allows (IPv4: 68 octets, RFC 791;
 * IPv6: 1280, RFC 8200), so no Receive MTU below 68 + 4 is ever valid.
 */
#define DEFAULT_RECV_MTU	2048
#define TINY_RECV_MTU		64
#define SHORT_PDATA_LEN		3
#define BAD_RESERVED		0xa5

enum variant {
	VAR_VALID,
	VAR_NONE,
	VAR_SHORT,
	VAR_GARBAGE,
	VAR_BAD_QPN,
	VAR_TINY_MTU,
	VAR_RESERVED,
};

struct variant_desc {
	const char *name;
	const char *help;
};

static const struct variant_desc variants[] = {
	[VAR_VALID]	= { "valid", "Reserved 0, UD QPN, Receive MTU (RFC 4755 s6)" },
	[VAR_NONE]	= { "none", "no private data: all 92 octets zero" },
	[VAR_SHORT]	= { "short", "only 3 octets (Reserved, 2 of the UD QPN)" },
	[VAR_GARBAGE]	= { "garbage", "92 random octets (see --seed)" },
	[VAR_BAD_QPN]	= { "bad-qpn", "valid layout, UD QPN 0" },
	[VAR_TINY_MTU]	= { "tiny-mtu", "valid layout, Receive MTU 64 (< 68 + 4)" },
	[VAR_RESERVED]	= { "reserved", "valid, Reserved 0xa5 (ignored on receive)" },
};

struct options {
	const char *dev_name;
	int port;
	int gid_index;		/* -1: choose */
	enum variant variant;
	u8 dgid[IPOIB_GID_LEN];
	u64 sid;
	bool sid_set;
	u32 local_qpn;
	u32 ud_qpn;
	u32 recv_mtu;
	bool recv_mtu_set;
	unsigned int count;
	u32 comm_id;
	bool comm_id_set;
	u16 pkey;
	unsigned int path_mtu;	/* octets */
	u8 hop_limit;
	u8 transport;
	unsigned int seed;
	bool seed_set;
	int wait_ms;
	int expect;		/* -1: --count */
	int retry_ms;		/* resend unanswered REQs after; 0: never */
	bool reject_rep;
	bool rtu;		/* answer REPs with an RTU */
	bool peers;		/* REQ k claims QPNs + k: one peer each */
	bool dry_run;
	const char *data;	/* --data LIST: messages after the RTU */
};

struct ctx {
	int fd;			/* umad port; -1: none */
	int agent;
	int sock;		/* packet socket for --wait; -1: none */
	u8 sgid[IPOIB_GID_LEN];
	int gid_index;
	u64 node_guid;
	char ndev[IF_NAMESIZE + 1];
	void *umad;		/* umad_size() + MAD_LEN */
	u32 tid;		/* low 32 bits of the next TID */
	u32 psn;
	unsigned int rng;
	struct data_qp *data;	/* --data: the real QP behind the REQ */
	u8 *answered;		/* [count]: ANSWERED_* bits of REQ k */
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

static void put64(u8 *p, u64 v)
{
	put32(p, (u32)(v >> 32));
	put32(p + 4, (u32)v);
}

static u16 get16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static u32 get24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

static u32 get32(const u8 *p)
{
	return (u32)get16(p) << 16 | get16(p + 2);
}

/* xorshift32: reproducible garbage for a given --seed */
static u32 rng_next(unsigned int *state)
{
	u32 x = *state ? *state : 0x2545f491u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

static u32 random32(void)
{
	u32 v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (u32)time(NULL) ^ (u32)getpid() << 16;
	return v;
}

static void hex(char *out, const u8 *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * len] = '\0';
}

static bool gid_v4mapped(const u8 *gid)
{
	static const u8 prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				       0xff, 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

static const char *gid_str(const u8 *gid, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* IBA path MTU code of an MTU in octets: 256 -> 1 ... 4096 -> 5; 0 if none */
static u8 mtu_code(unsigned int octets)
{
	u8 code = 1;
	unsigned int m;

	for (m = 256; m <= 4096; m <<= 1, code++)
		if (m == octets)
			return code;
	return 0;
}

/* Read one line of a sysfs file into @buf, without its newline. */
static int read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = !!fgets(buf, (int)len, f);
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_port_attr(const struct options *o, const char *what,
			  int index, char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), SYSFS_IB "/%s/ports/%d/%s/%d",
		 o->dev_name, o->port, what, index);
	return read_sysfs(path, buf, len);
}

/* A GID of the port; 1 if the entry is empty or not RoCE v2, -1 past end */
static int read_gid(const struct options *o, int index, u8 *gid)
{
	static const u8 zero[IPOIB_GID_LEN];
	char buf[64];

	if (read_port_attr(o, "gids", index, buf, sizeof(buf)) ||
	    inet_pton(AF_INET6, buf, gid) != 1)
		return -1;
	if (!memcmp(gid, zero, sizeof(zero)))
		return 1;
	/* no types file (IB): fine; unreadable entry (unused): skip */
	if (!read_port_attr(o, "gid_attrs/types", index, buf, sizeof(buf)) &&
	    strcmp(buf, "RoCE v2"))
		return 1;
	return 0;
}

static int find_sgid(const struct options *o, struct ctx *c)
{
	int i, r;

	if (o->gid_index >= 0) {
		if (read_gid(o, o->gid_index, c->sgid) < 0) {
			fprintf(stderr, "no GID %d on %s port %d\n",
				o->gid_index, o->dev_name, o->port);
			return -1;
		}
		c->gid_index = o->gid_index;
		return 0;
	}
	for (i = 0; i < MAX_GID_INDEX; i++) {
		r = read_gid(o, i, c->sgid);
		if (r < 0)
			break;
		if (!r && gid_v4mapped(c->sgid) == gid_v4mapped(o->dgid)) {
			c->gid_index = i;
			return 0;
		}
	}
	fprintf(stderr, "no RoCE v2 %s GID on %s port %d\n",
		gid_v4mapped(o->dgid) ? "IPv4-mapped" : "IPv6",
		o->dev_name, o->port);
	return -1;
}

static int read_node_guid(const struct options *o, struct ctx *c)
{
	unsigned int w[4];
	char path[256], buf[64];

	snprintf(path, sizeof(path), SYSFS_IB "/%s/node_guid", o->dev_name);
	if (read_sysfs(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%x:%x:%x:%x", &w[0], &w[1], &w[2], &w[3]) != 4) {
		fprintf(stderr, "cannot read %s\n", path);
		return -1;
	}
	c->node_guid = (u64)w[0] << 48 | (u64)w[1] << 32 |
		       (u64)w[2] << 16 | w[3];
	return 0;
}

static void mad_header(u8 *mad, u16 attr, u32 tid)
{
	memset(mad, 0, MAD_LEN);
	mad[0] = MAD_BASE_VERSION;
	mad[MAD_OFF_CLASS] = MAD_CLASS_CM;
	mad[2] = MAD_CM_CLASS_VERSION;
	mad[MAD_OFF_METHOD] = MAD_METHOD_SEND;
	/* the kernel puts its agent's number in the high 32 bits */
	put64(mad + MAD_OFF_TID, tid);
	put16(mad + MAD_OFF_ATTR, attr);
}

/* The variant's private data into @pd (REQ_PDATA_LEN octets); its length */
static size_t build_pdata(struct ctx *c, const struct options *o, u8 *pd,
			  unsigned int seq)
{
	struct ipoib_cm_pdata v = {
		.qpn = (o->ud_qpn + (o->peers ? seq : 0)) & IPOIB_QPN_MASK,
		.mtu = o->recv_mtu,
	};
	size_t i;

	memset(pd, 0, REQ_PDATA_LEN);
	switch (o->variant) {
	case VAR_NONE:
		return 0;
	case VAR_SHORT:
		ipoib_cm_pdata_pack(pd, &v);
		memset(pd + SHORT_PDATA_LEN, 0,
		       IPOIB_CM_PDATA_LEN - SHORT_PDATA_LEN);
		return SHORT_PDATA_LEN;
	case VAR_GARBAGE:
		for (i = 0; i < REQ_PDATA_LEN; i++)
			pd[i] = (u8)rng_next(&c->rng);
		return REQ_PDATA_LEN;
	case VAR_BAD_QPN:
		v.qpn = 0;
		break;
	case VAR_TINY_MTU:
		if (!o->recv_mtu_set)
			v.mtu = TINY_RECV_MTU;
		break;
	case VAR_VALID:
	case VAR_RESERVED:
		break;
	}
	ipoib_cm_pdata_pack(pd, &v);
	if (o->variant == VAR_RESERVED)
		pd[0] = BAD_RESERVED;
	return IPOIB_CM_PDATA_LEN;
}

/* REQ @seq of the run into @mad; returns the private data's length. */
static size_t build_req(struct ctx *c, const struct options *o, u8 *mad,
			unsigned int seq)
{
	u8 *m = mad + MAD_HDR_LEN;
	bool routed = o->hop_limit > 1;

	mad_header(mad, CM_ATTR_REQ, c->tid + seq);
	put32(m + REQ_LOCAL_COMM_ID, o->comm_id + seq);
	put64(m + REQ_SERVICE_ID, o->sid);
	put64(m + REQ_LOCAL_CA_GUID, c->node_guid);
	put32(m + REQ_LOCAL_QKEY, 0);
	put24(m + REQ_LOCAL_QPN, o->local_qpn + (o->peers ? seq : 0));
	m[REQ_RESP_RESOURCES] = 0;
	m[REQ_INIT_DEPTH] = 0;
	m[REQ_TIMEOUT_TYPE_FC] = (u8)(CM_RESPONSE_TIMEOUT << 3 |
				      o->transport << 1);
	put24(m + REQ_STARTING_PSN, (c->psn + seq) & IPOIB_QPN_MASK);
	m[REQ_TIMEOUT_RETRY] = (u8)(CM_RESPONSE_TIMEOUT << 3 | QP_RETRY_COUNT);
	put16(m + REQ_PKEY, o->pkey);
	m[REQ_MTU_RDC_RNR] = (u8)(mtu_code(o->path_mtu) << 4 |
				  QP_RNR_RETRY_COUNT);
	m[REQ_CMRETRY_SRQ_EXT] = (u8)(CM_MAX_RETRIES << 4);
	/* RoCE has no LIDs; a routed path has permissive ones */
	put16(m + REQ_PRI_LOCAL_LID, routed ? LID_PERMISSIVE : 0);
	put16(m + REQ_PRI_REMOTE_LID, routed ? LID_PERMISSIVE : 0);
	memcpy(m + REQ_PRI_LOCAL_GID, c->sgid, IPOIB_GID_LEN);
	memcpy(m + REQ_PRI_REMOTE_GID, o->dgid, IPOIB_GID_LEN);
	put32(m + REQ_PRI_FLOW_RATE, RATE_10_GBPS);	/* flow label 0 */
	m[REQ_PRI_TCLASS] = 0;
	m[REQ_PRI_HOP_LIMIT] = o->hop_limit;
	m[REQ_PRI_SL_SUBNET] = (u8)(!routed << 3);	/* SL 0 */
	m[REQ_PRI_ACK_TIMEOUT] = ACK_TIMEOUT << 3;
	/* no alternate path: all zero */
	return build_pdata(c, o, m + REQ_PRIVATE_DATA, seq);
}

/* REJ of the REP in @rep (a received CM message): Consumer Reject */
static void build_rej_of_rep(u8 *mad, const u8 *rep, u32 tid)
{
	u8 *m = mad + MAD_HDR_LEN;

	mad_header(mad, CM_ATTR_REJ, tid);
	put32(m + CM_LOCAL_COMM_ID, get32(rep + CM_REMOTE_COMM_ID));
	put32(m + CM_REMOTE_COMM_ID, get32(rep + CM_LOCAL_COMM_ID));
	m[REJ_MSG_REJECTED] = REJ_MSG_REP << 6;
	put16(m + REJ_REASON, REJ_CONSUMER);
}

/* RTU of the REP in @rep: the connection is established on its side */
static void build_rtu_of_rep(u8 *mad, const u8 *rep, u32 tid)
{
	u8 *m = mad + MAD_HDR_LEN;

	mad_header(mad, CM_ATTR_RTU, tid);
	put32(m + CM_LOCAL_COMM_ID, get32(rep + CM_REMOTE_COMM_ID));
	put32(m + CM_REMOTE_COMM_ID, get32(rep + CM_LOCAL_COMM_ID));
	memset(m + RTU_PRIVATE_DATA, 0, MAD_LEN - MAD_HDR_LEN - RTU_PRIVATE_DATA);
}

static int open_umad(struct ctx *c, const struct options *o)
{
	if (umad_init() < 0) {
		fprintf(stderr, "umad_init failed: is ib_umad loaded?\n");
		return -1;
	}
	c->fd = umad_open_port(o->dev_name, o->port);
	if (c->fd < 0) {
		fprintf(stderr, "cannot open umad port %s:%d (%s)\n",
			o->dev_name, o->port, strerror(-c->fd));
		c->fd = -1;
		return -1;
	}
	/* class 0: a send-only agent that takes no receives from anyone */
	c->agent = umad_register(c->fd, 0, 0, 0, NULL);
	if (c->agent < 0) {
		fprintf(stderr, "cannot register a MAD agent\n");
		return -1;
	}
	c->umad = calloc(1, umad_size() + MAD_LEN);
	if (!c->umad) {
		fprintf(stderr, "out of memory\n");
		return -1;
	}
	return 0;
}

/* Send the MAD in the umad buffer to QP1 at @dgid: 0 or -1 */
static int send_mad(struct ctx *c, const struct options *o, const u8 *dgid)
{
	ib_mad_addr_t *a = umad_get_mad_addr(c->umad);

	memset(a, 0, sizeof(*a));
	a->qpn = htonl(GSI_QPN);
	a->qkey = htonl(QP1_QKEY);
	a->grh_present = 1;
	a->gid_index = (u8)c->gid_index;
	a->hop_limit = o->hop_limit;
	memcpy(a->gid, dgid, IPOIB_GID_LEN);
	umad_set_pkey(c->umad, 0);
	/* no response timeout: CM answers are not MAD responses */
	if (umad_send(c->fd, c->agent, c->umad, MAD_LEN, 0, 0) < 0) {
		printf("send_error errno=%d (%s)\n", errno, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_sniffer(struct ctx *c, const struct options *o)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	int one = 1, rcvbuf = 8 << 20;

	if (read_port_attr(o, "gid_attrs/ndevs", c->gid_index, c->ndev,
			   sizeof(c->ndev))) {
		fprintf(stderr, "--wait: no netdev behind GID %d\n",
			c->gid_index);
		return -1;
	}
	sll.sll_ifindex = (int)if_nametoindex(c->ndev);
	c->sock = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
	if (!sll.sll_ifindex || c->sock < 0 ||
	    bind(c->sock, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("--wait: packet socket");
		return -1;
	}
	/*
	 * A burst of answers must not overflow the socket while we are still
	 * sending (the default buffer holds about a hundred small frames):
	 * skip our own frames, take a large buffer, and count what was lost.
	 */
	if (setsockopt(c->sock, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
		       sizeof(one)) ||
	    (setsockopt(c->sock, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
			sizeof(rcvbuf)) &&
	     setsockopt(c->sock, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			sizeof(rcvbuf)))) {
		perror("--wait: packet socket options");
		return -1;
	}
	return 0;
}

/* Frames the sniffer's socket dropped since it was opened, or -1 */
static long sniffer_drops(const struct ctx *c)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (getsockopt(c->sock, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		return -1;
	return st.tp_drops;
}

static const char *rej_reason_name(u16 reason)
{
	switch (reason) {
	case 1: return "no-qp";
	case 2: return "no-eec";
	case 3: return "no-resources";
	case 4: return "timeout";
	case 5: return "unsupported";
	case 6: return "invalid-comm-id";
	case 7: return "invalid-comm-instance";
	case 8: return "invalid-service-id";
	case 9: return "invalid-transport-type";
	case 10: return "stale-conn";
	case 12: return "invalid-gid";
	case 26: return "invalid-mtu";
	case 28: return "consumer-reject";
	case 30: return "duplicate-local-comm-id";
	}
	return "other";
}

/*
 * The CM message of a RoCE v2 packet (network header first, as a
 * SOCK_DGRAM packet socket gives it) if it is a CM MAD to QP1; else NULL.
 * Its source GID goes to @sgid.
 */
static const u8 *cm_of_packet(const u8 *p, size_t len, u16 proto, u8 *sgid)
{
	size_t hlen;

	if (proto == ETH_P_IPV6) {
		if (len < IPV6_HDR_LEN || p[0] >> 4 != 6 ||
		    p[6] != IPPROTO_UDP_NUM)
			return NULL;
		memcpy(sgid, p + 8, IPOIB_GID_LEN);
		hlen = IPV6_HDR_LEN;
	} else if (proto == ETH_P_IP) {
		hlen = (size_t)(p[0] & 0xf) * 4;
		if (len < IPV4_HDR_MIN || p[0] >> 4 != 4 ||
		    hlen < IPV4_HDR_MIN || p[9] != IPPROTO_UDP_NUM)
			return NULL;
		memset(sgid, 0, IPOIB_GID_LEN);
		sgid[10] = 0xff;
		sgid[11] = 0xff;
		memcpy(sgid + 12, p + 12, 4);
	} else {
		return NULL;
	}
	if (len < hlen + UDP_HDR_LEN + BTH_LEN + DETH_LEN + MAD_LEN)
		return NULL;
	p += hlen;
	if (get16(p + 2) != ROCE_V2_PORT)
		return NULL;
	p += UDP_HDR_LEN;
	if (p[0] != OPCODE_UD_SEND_ONLY || get24(p + 5) != GSI_QPN)
		return NULL;
	p += BTH_LEN + DETH_LEN;
	if (p[MAD_OFF_CLASS] != MAD_CLASS_CM ||
	    p[MAD_OFF_METHOD] != MAD_METHOD_SEND)
		return NULL;
	return p;
}

/*
 * --data: one IPoIB-CM message, the 4-octet encapsulation header and an
 * IPv4 UDP datagram (192.0.2.1 -> 255.255.255.255, port 9, 64 zero
 * octets) whose checksum field holds only the pseudo-header sum, as a
 * sender leaving the checksum to the receiver has it.
 */
#define DATA_IP_LEN		(IPV4_HDR_MIN + UDP_HDR_LEN + 64)
#define DATA_LIST_MAX		256

/* A --data item: 'plain' (*imm false) or 32 bits of hexadecimal */
static int parse_data_item(const char *item, bool *imm, u32 *v)
{
	unsigned long x;
	char *end;

	*imm = strcmp(item, "plain");
	*v = 0;
	if (!*imm)
		return 0;
	errno = 0;
	x = strtoul(item, &end, 16);
	if (errno || end == item || *end || x > UINT32_MAX)
		return -1;
	*v = (u32)x;
	return 0;
}

static bool data_list_valid(const char *list)
{
	char buf[DATA_LIST_MAX], *item, *save;
	bool imm;
	u32 v;

	snprintf(buf, sizeof(buf), "%s", list);
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save))
		if (parse_data_item(item, &imm, &v))
			return false;
	return true;
}

static size_t build_data_msg(u8 *msg)
{
	u8 *ip = msg + IPOIB_ENCAP_LEN, *udp = ip + IPV4_HDR_MIN;
	u32 sum = 0;
	unsigned int i;

	memset(msg, 0, IPOIB_ENCAP_LEN + DATA_IP_LEN);
	ipoib_encap_pack(msg, ETH_P_IP);
	ip[0] = 0x45;
	put16(ip + 2, DATA_IP_LEN);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP_NUM;
	put32(ip + 12, 0xc0000201);
	put32(ip + 16, 0xffffffff);
	for (i = 0; i < IPV4_HDR_MIN; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, (u16)~sum);
	put16(udp, 9);
	put16(udp + 2, 9);
	put16(udp + 4, UDP_HDR_LEN + 64);
	/* pseudo header: addresses, protocol, UDP length */
	sum = 0xc000 + 0x0201 + 0xffff + 0xffff + IPPROTO_UDP_NUM +
	      UDP_HDR_LEN + 64;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(udp + 6, (u16)sum);
	return IPOIB_ENCAP_LEN + DATA_IP_LEN;
}

/* After our RTU: connect the real QP and send what --data lists. */
static void send_data(struct ctx *c, const struct options *o, const u8 *rep,
		      const u8 *dgid, unsigned int seq)
{
	u8 msg[IPOIB_ENCAP_LEN + DATA_IP_LEN];
	char list[DATA_LIST_MAX], imm_str[16], *item, *save;
	size_t len = build_data_msg(msg);
	unsigned int n = 0;
	bool imm, failed;
	u32 v;

	if (data_qp_connect(c->data, get24(rep + REP_LOCAL_QPN),
			    get24(rep + REP_STARTING_PSN),
			    (c->psn + seq) & IPOIB_QPN_MASK, dgid,
			    c->gid_index, o->hop_limit, o->path_mtu)) {
		printf("data connect=failed\n");
		return;
	}
	snprintf(list, sizeof(list), "%s", o->data);
	for (item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save), n++) {
		parse_data_item(item, &imm, &v);	/* checked at start */
		if (imm)
			snprintf(imm_str, sizeof(imm_str), "0x%08x", v);
		else
			snprintf(imm_str, sizeof(imm_str), "none");
		/* a send that did not complete may still use the buffer */
		failed = data_qp_send(c->data, msg, len, imm, v);
		printf("sent type=DATA n=%u len=%zu imm=%s status=%s\n",
		       n, len, imm_str, failed ? "failed" : "ok");
		fflush(stdout);
		if (failed)
			break;
	}
}

/* Print a CM answer to one of our REQs; 1 if it was one, else 0. */
static int handle_answer(struct ctx *c, const struct options *o,
			 const u8 *mad, const u8 *sgid)
{
	const u8 *m = mad + MAD_HDR_LEN;
	u16 attr = get16(mad + MAD_OFF_ATTR);
	u32 rid = get32(m + CM_REMOTE_COMM_ID);
	char g[INET6_ADDRSTRLEN], pd[2 * IPOIB_CM_PDATA_LEN + 1];
	u16 reason;

	unsigned int seq = rid - o->comm_id;
	u8 bit, before;
	bool again;

	if (seq >= o->count)
		return 0;
	bit = attr == CM_ATTR_REJ ? ANSWERED_REJ :
	      attr == CM_ATTR_REP ? ANSWERED_REP :
	      attr == CM_ATTR_MRA ? ANSWERED_MRA : 0;
	if (!bit)
		return 0;
	before = c->answered[seq];
	c->answered[seq] |= bit;
	/* the peer resends a REP it has no RTU for: one answer */
	again = before & bit;
	switch (attr) {
	case CM_ATTR_REJ:
		reason = get16(m + REJ_REASON);
		hex(pd, m + REJ_PRIVATE_DATA, IPOIB_CM_PDATA_LEN);
		printf("%s type=REJ comm_id=0x%08x remote_comm_id=0x%08x ",
		       again ? "again" : "reply", rid,
		       get32(m + CM_LOCAL_COMM_ID));
		printf("reason=%u reason_name=%s msg_rejected=%u ari_len=%u pdata=%s from=%s\n",
		       reason, rej_reason_name(reason),
		       m[REJ_MSG_REJECTED] >> 6, m[REJ_ARI_LEN] >> 1, pd,
		       gid_str(sgid, g, sizeof(g)));
		break;
	case CM_ATTR_REP:
		hex(pd, m + REP_PRIVATE_DATA, IPOIB_CM_PDATA_LEN);
		printf("%s type=REP comm_id=0x%08x remote_comm_id=0x%08x ",
		       again ? "again" : "reply", rid,
		       get32(m + CM_LOCAL_COMM_ID));
		printf("qpn=0x%06x pdata=%s from=%s\n",
		       get24(m + REP_LOCAL_QPN), pd,
		       gid_str(sgid, g, sizeof(g)));
		if (o->reject_rep) {
			build_rej_of_rep(umad_get_mad(c->umad), m,
					 c->tid + o->count + rid - o->comm_id);
			if (!send_mad(c, o, sgid))
				printf("%s type=REJ comm_id=0x%08x reason=%u\n",
				       again ? "resent" : "sent", rid,
				       REJ_CONSUMER);
		} else if (o->rtu) {
			build_rtu_of_rep(umad_get_mad(c->umad), m,
					 c->tid + o->count + rid - o->comm_id);
			if (!send_mad(c, o, sgid)) {
				printf("%s type=RTU comm_id=0x%08x\n",
				       again ? "resent" : "sent", rid);
				if (c->data && !again)
					send_data(c, o, m, sgid, seq);
			}
		}
		break;
	case CM_ATTR_MRA:
		printf("reply type=MRA comm_id=0x%08x remote_comm_id=0x%08x from=%s\n",
		       rid, get32(m + CM_LOCAL_COMM_ID),
		       gid_str(sgid, g, sizeof(g)));
		return 0;	/* not an answer yet: REP or REJ follows */
	}
	/* a REQ's answer is its first REP or REJ (a REJ may follow a REP) */
	return !(before & (ANSWERED_REP | ANSWERED_REJ));
}

/*
 * --retry: send again the REQs the peer said nothing to yet (not even an
 * MRA), as a CM would; the garbage variant draws new bytes for them
 */
static void resend_unanswered(struct ctx *c, const struct options *o)
{
	u8 *mad = umad_get_mad(c->umad);
	unsigned int i;

	for (i = 0; i < o->count; i++) {
		if (c->answered[i])
			continue;
		build_req(c, o, mad, i);
		if (!send_mad(c, o, o->dgid))
			printf("resent type=REQ seq=%u comm_id=0x%08x\n", i,
			       o->comm_id + i);
	}
	fflush(stdout);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Watch for answers for o->wait_ms (or until o->expect); their count */
static int receive(struct ctx *c, const struct options *o)
{
	static u8 buf[PKT_BUF_LEN];
	long deadline = now_ms() + o->wait_ms, left;
	long retry_at = o->retry_ms ? now_ms() + o->retry_ms : deadline;
	struct pollfd pfd = { .fd = c->sock, .events = POLLIN };
	struct sockaddr_ll from;
	socklen_t flen;
	u8 sgid[IPOIB_GID_LEN];
	const u8 *mad;
	ssize_t n;
	int got = 0;

	while (got < o->expect) {
		left = deadline - now_ms();
		if (left <= 0)
			break;
		if (o->retry_ms && retry_at - now_ms() <= 0) {
			resend_unanswered(c, o);
			retry_at = now_ms() + o->retry_ms;
		}
		if (retry_at < deadline)
			left = retry_at - now_ms();
		if (poll(&pfd, 1, left > 0 ? (int)left : 0) < 0) {
			perror("poll");
			return -1;
		}
		if (!(pfd.revents & POLLIN))
			continue;
		flen = sizeof(from);
		n = recvfrom(c->sock, buf, sizeof(buf), 0,
			     (struct sockaddr *)&from, &flen);
		if (n < 0) {
			perror("recvfrom");
			return -1;
		}
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		mad = cm_of_packet(buf, (size_t)n, ntohs(from.sll_protocol),
				   sgid);
		if (mad)
			got += handle_answer(c, o, mad, sgid);
	}
	return got;
}

static void close_all(struct ctx *c)
{
	if (c->fd >= 0)
		umad_close_port(c->fd);
	if (c->sock >= 0)
		close(c->sock);
	data_qp_close(c->data);
	free(c->umad);
	free(c->answered);
}

static void show_help(FILE *f)
{
	size_t i;

	fprintf(f, "usage: cm_inject [options] VARIANT DGID [SID]\n");
	fprintf(f,
		"  -d, --device NAME     RDMA device (rxe0)\n"
		"  -i, --port N          port (1)\n"
		"  -g, --gid-index N     source GID index (first RoCE v2 GID\n"
		"                        of the same family as DGID)\n"
		"  -S, --sid-linux QPN   SID 0x1000000000000000 | QPN\n"
		"  -R, --sid-rfc QPN     SID 0x0100000000000000 | QPN (RFC 4755)\n"
		"  -l, --local-qpn QPN   QPN the REQ claims as ours (0x12)\n"
		"  -u, --ud-qpn QPN      UD QPN in the private data (0x11)\n"
		"  -m, --mtu N           Receive MTU in the private data (2048)\n"
		"  -n, --count N         REQs to send (1)\n"
		"  -c, --comm-id ID      first local communication ID (random);\n"
		"                        REQ k uses ID + k\n"
		"  -k, --pkey P          partition key of the REQ (0xffff)\n"
		"  -P, --path-mtu N      path MTU, 256..4096 (1024)\n"
		"  -H, --hop-limit N     GRH and path hop limit (64)\n"
		"  -U, --uc              ask for UC, not RC\n"
		"  -s, --seed N          seed of the garbage variant (random)\n"
		"  -w, --wait MS         then watch the netdev for the answers\n"
		"                        (REJ, REP, MRA) for up to MS ms\n"
		"  -e, --expect N        stop watching after N answers (count)\n"
		"  -r, --retry MS        with -w: every MS ms, send again the\n"
		"                        REQs with no REP or REJ yet\n"
		"  -j, --reject-rep      answer each REP with a REJ (with -w)\n"
		"  -t, --rtu             answer each REP with an RTU (with -w):\n"
		"                        the peer's end goes live\n"
		"  -N, --peers           REQ k claims local and UD QPN + k, so\n"
		"                        that each looks like another peer\n"
		"  -D, --dry-run         print the MADs (mad=...), send nothing\n"
		"  -M, --data LIST       with --rtu and one RC REQ, on RoCE\n"
		"                        (P_Key index 0): a real RC QP\n"
		"                        makes the REQ (its QPN replaces -l);\n"
		"                        after the RTU it sends one IPv4 UDP\n"
		"                        message per item: 'plain' (Send) or\n"
		"                        hexadecimal immediate data (Send with\n"
		"                        Immediate: a checksum-pending packet)\n"
		"VARIANT (private data):\n");
	for (i = 0; i < ARRAY_SIZE(variants); i++)
		fprintf(f, "  %-10s %s\n", variants[i].name, variants[i].help);
	fprintf(f,
		"DGID: fe80::1, ::ffff:10.0.0.2 or 10.0.0.2; SID: hexadecimal\n");
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

static int parse_sid(const char *s, u64 *sid)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(s, &end, 16);
	if (errno || end == s || *end)
		return -1;
	*sid = x;
	return 0;
}

static int parse_gid(const char *s, u8 *gid)
{
	struct in_addr a;

	if (inet_pton(AF_INET6, s, gid) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &a) != 1)
		return -1;
	memset(gid, 0, IPOIB_GID_LEN);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, &a, 4);
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'i' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "sid-linux", required_argument, NULL, 'S' },
		{ "sid-rfc", required_argument, NULL, 'R' },
		{ "local-qpn", required_argument, NULL, 'l' },
		{ "ud-qpn", required_argument, NULL, 'u' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'n' },
		{ "comm-id", required_argument, NULL, 'c' },
		{ "pkey", required_argument, NULL, 'k' },
		{ "path-mtu", required_argument, NULL, 'P' },
		{ "hop-limit", required_argument, NULL, 'H' },
		{ "uc", no_argument, NULL, 'U' },
		{ "seed", required_argument, NULL, 's' },
		{ "wait", required_argument, NULL, 'w' },
		{ "expect", required_argument, NULL, 'e' },
		{ "retry", required_argument, NULL, 'r' },
		{ "reject-rep", no_argument, NULL, 'j' },
		{ "rtu", no_argument, NULL, 't' },
		{ "data", required_argument, NULL, 'M' },
		{ "peers", no_argument, NULL, 'N' },
		{ "dry-run", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	u32 v;
	size_t i;
	int opt;

	while ((opt = getopt_long(argc, argv,
				  "d:i:g:S:R:l:u:m:n:c:k:P:H:Us:w:e:r:jtNDM:h",
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
			if (parse_u32(optarg, MAX_GID_INDEX - 1, &v))
				goto bad;
			o->gid_index = (int)v;
			break;
		case 'S':
		case 'R':
			if (parse_u32(optarg, IPOIB_QPN_MASK, &v))
				goto bad;
			o->sid = opt == 'S' ? ipoib_sid_linux(v) :
					      ipoib_sid_rfc(v);
			o->sid_set = true;
			break;
		case 'l':
			if (parse_u32(optarg, IPOIB_QPN_MASK, &o->local_qpn))
				goto bad;
			break;
		case 'u':
			if (parse_u32(optarg, IPOIB_QPN_MASK, &o->ud_qpn))
				goto bad;
			break;
		case 'm':
			if (parse_u32(optarg, 0xffffffffu, &o->recv_mtu))
				goto bad;
			o->recv_mtu_set = true;
			break;
		case 'n':
			if (parse_u32(optarg, 1000000, &o->count) || !o->count)
				goto bad;
			break;
		case 'c':
			if (parse_u32(optarg, 0xffffffffu, &o->comm_id))
				goto bad;
			o->comm_id_set = true;
			break;
		case 'k':
			if (parse_u32(optarg, 0xffff, &v))
				goto bad;
			o->pkey = (u16)v;
			break;
		case 'P':
			if (parse_u32(optarg, 4096, &o->path_mtu) ||
			    !mtu_code(o->path_mtu))
				goto bad;
			break;
		case 'H':
			if (parse_u32(optarg, 255, &v))
				goto bad;
			o->hop_limit = (u8)v;
			break;
		case 'U':
			o->transport = TRANSPORT_UC;
			break;
		case 's':
			if (parse_u32(optarg, 0xffffffffu, &o->seed))
				goto bad;
			o->seed_set = true;
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
		case 'r':
			if (parse_u32(optarg, 600000, &v) || !v)
				goto bad;
			o->retry_ms = (int)v;
			break;
		case 'j':
			o->reject_rep = true;
			break;
		case 't':
			o->rtu = true;
			break;
		case 'M':
			o->data = optarg;
			break;
		case 'N':
			o->peers = true;
			break;
		case 'D':
			o->dry_run = true;
			break;
		case 'h':
			show_help(stdout);
			exit(0);
		default:
			show_help(stderr);
			return -1;
		}
	}
	if (argc - optind != 3 - o->sid_set) {
		show_help(stderr);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(variants); i++)
		if (!strcmp(argv[optind], variants[i].name))
			break;
	if (i == ARRAY_SIZE(variants)) {
		fprintf(stderr, "unknown VARIANT %s\n", argv[optind]);
		return -1;
	}
	o->variant = (enum variant)i;
	if (parse_gid(argv[optind + 1], o->dgid)) {
		fprintf(stderr, "bad DGID %s\n", argv[optind + 1]);
		return -1;
	}
	if (!o->sid_set && parse_sid(argv[optind + 2], &o->sid)) {
		fprintf(stderr, "bad SID %s\n", argv[optind + 2]);
		return -1;
	}
	if ((o->reject_rep || o->rtu || o->retry_ms) && !o->wait_ms) {
		fprintf(stderr, "--reject-rep, --rtu and --retry need --wait\n");
		return -1;
	}
	if (o->data && (!o->rtu || o->count != 1 || o->dry_run ||
			o->transport != TRANSPORT_RC)) {
		fprintf(stderr, "--data needs --rtu, a single REQ and RC\n");
		return -1;
	}
	if (o->data && (strlen(o->data) >= DATA_LIST_MAX ||
			!data_list_valid(o->data))) {
		fprintf(stderr, "--data: 'plain' or hex immediate data, comma-separated, < %d\n",
			DATA_LIST_MAX);
		return -1;
	}
	if (o->expect < 0)
		o->expect = (int)o->count;
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
		.gid_index = -1,
		.local_qpn = 0x12,
		.ud_qpn = 0x11,
		.recv_mtu = DEFAULT_RECV_MTU,
		.count = 1,
		.pkey = 0xffff,
		.path_mtu = 1024,
		.hop_limit = 64,
		.transport = TRANSPORT_RC,
		.expect = -1,
	};
	struct ctx c = { .fd = -1, .sock = -1 };
	static u8 dry_mad[MAD_LEN];
	char g1[INET6_ADDRSTRLEN], g2[INET6_ADDRSTRLEN];
	char pd[2 * REQ_PDATA_LEN + 1], madhex[2 * MAD_LEN + 1];
	unsigned int i, ok = 0, errors = 0;
	size_t pdlen;
	u8 *mad;
	int ret = 1, r;

	if (parse_args(argc, argv, &o))
		return 2;
	if (!o.comm_id_set)
		o.comm_id = random32();
	if (!o.seed_set)
		o.seed = random32();
	c.rng = o.seed;
	c.tid = random32();
	c.psn = random32() & IPOIB_QPN_MASK;

	if (find_sgid(&o, &c) || read_node_guid(&o, &c))
		goto out;
	if (o.data) {
		c.data = data_qp_open(o.dev_name, o.port);
		if (!c.data)
			goto out;
		o.local_qpn = data_qp_num(c.data);
	}
	if (!o.dry_run && open_umad(&c, &o))
		goto out;
	if (!o.dry_run && o.wait_ms && open_sniffer(&c, &o))
		goto out;
	c.answered = calloc(o.count, sizeof(*c.answered));
	if (!c.answered) {
		perror("calloc");
		goto out;
	}
	printf("local dev=%s port=%d gid_index=%d gid=%s node_guid=0x%016llx\n",
	       o.dev_name, o.port, c.gid_index,
	       gid_str(c.sgid, g1, sizeof(g1)), c.node_guid);
	printf("dest gid=%s sid=0x%016llx transport=%s variant=%s seed=%u\n",
	       gid_str(o.dgid, g2, sizeof(g2)), o.sid,
	       o.transport == TRANSPORT_UC ? "uc" : "rc",
	       variants[o.variant].name, o.seed);

	mad = o.dry_run ? dry_mad : umad_get_mad(c.umad);
	for (i = 0; i < o.count; i++) {
		pdlen = build_req(&c, &o, mad, i);
		hex(pd, mad + MAD_HDR_LEN + REQ_PRIVATE_DATA, pdlen);
		printf("req seq=%u comm_id=0x%08x tid=0x%08x sid=0x%016llx ",
		       i, o.comm_id + i, c.tid + i, o.sid);
		printf("qpn=0x%06x pdata_len=%zu pdata=%s\n",
		       o.local_qpn + (o.peers ? i : 0), pdlen, pd);
		if (o.dry_run) {
			hex(madhex, mad, MAD_LEN);
			printf("mad=%s\n", madhex);
			ok++;
			continue;
		}
		if (send_mad(&c, &o, o.dgid))
			errors++;
		else
			ok++;
	}
	printf("sent variant=%s count=%u ok=%u errors=%u\n",
	       variants[o.variant].name, o.count, ok, errors);
	fflush(stdout);
	if (!o.dry_run && o.wait_ms) {
		r = receive(&c, &o);
		if (r < 0)
			goto out;
		printf("received count=%d sniffer_drops=%ld\n", r,
		       sniffer_drops(&c));
	}
	ret = errors ? 1 : 0;
out:
	close_all(&c);
	return ret;
}
