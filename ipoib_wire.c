// SPDX-License-Identifier: GPL-2.0
/*
 * IPoIB wire formats: RFC 4391 (IPoIB over UD) and RFC 4755 (IPoIB-CM).
 *
 * Pure functions over byte buffers. Nothing here depends on the kernel or
 * on libc, so the same file is linked into the module and into the
 * userspace unit tests and fuzzers. RFC 4391 s4: all addresses and fields
 * are in network byte order, so every multi-byte field is handled with
 * explicit big-endian byte helpers, independent of host endianness and
 * alignment.
 */
#include "ipoib_wire.h"

/* Link-layer address octets (RFC 4391 s9.1.1, RFC 4755 s3.1) */
#define LL_OFF_FLAGS		0
#define LL_OFF_QPN		1
#define LL_OFF_GID		4

/* MGID octets (RFC 4391 s4, Figures 1 and 2) */
#define MGID_PREFIX		0xff
#define MGID_FLAGS_T		0x1	/* flags nibble: T (transient) only */
#define MGID_SCOPE_MASK		0x0f
#define MGID_OFF_SIG		2
#define MGID_OFF_PKEY		4
#define MGID_OFF_V6_GROUP	6	/* lower 80 bits of the IPv6 group */
#define MGID_OFF_ZERO		6	/* IPv4: 48 zero bits ... */
#define MGID_ZERO_LEN		6
#define MGID_OFF_V4_GROUP	12	/* ... then 32 bits holding the group */
#define MGID_V4_GROUP_MASK	0x0fffffffu

/* CM private data octets (RFC 4755 s6) */
#define PDATA_OFF_RSVD		0
#define PDATA_OFF_QPN		1
#define PDATA_OFF_MTU		4
#define PDATA_OFF_MAGIC		8	/* our extension */
#define PDATA_OFF_CAPS		12

/* Immediate data of a checksum-pending packet */
#define CSUM_IMM_OFF_START	0
#define CSUM_IMM_OFF_OFFSET	2

#define PKEY_BASE_MASK		0x7fff

/* InformInfo (IBA vol. 1 s15.2.5.12) */
#define INFORM_OFF_LID_BEGIN	16
#define INFORM_OFF_LID_END	18
#define INFORM_OFF_GENERIC	22
#define INFORM_OFF_SUBSCRIBE	23
#define INFORM_OFF_TYPE		24
#define INFORM_OFF_TRAP		26
#define INFORM_OFF_QPN		28	/* QPN, then RespTimeValue */
/* 4.096 us << 18: about a second for our ReportResp */
#define INFORM_RESP_TIME	18
#define INFORM_OFF_PRODUCER	33
#define INFORM_ANY16		0xffff
#define INFORM_ANY24		0xffffffu

/* MCMemberRecord (IBA vol. 1 s15.2.5.17): MGID first */
#define MCMEMBER_OFF_PKEY	40

/* Notice (IBA vol. 1 s13.4.8.2) */
#define NOTICE_OFF_TYPE		0	/* IsGeneric, then Type */
#define NOTICE_OFF_TRAP		4
#define NOTICE_OFF_DETAILS	10
#define NOTICE_GENERIC		0x80
#define NOTICE_DETAILS_GID	6	/* traps 64-67: 6 reserved octets */
#define NOTICE_TRAP_GID_FIRST	64	/* GID in service */

static void ipw_put16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static u16 ipw_get16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

/* 24-bit QPN: only the low 24 bits of @v reach the wire */
static void ipw_put24(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 16);
	p[1] = (u8)(v >> 8);
	p[2] = (u8)v;
}

static u32 ipw_get24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | (u32)p[2];
}

static void ipw_put32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static u32 ipw_get32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 |
	       (u32)p[3];
}

static void ipw_copy(u8 *dst, const u8 *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = src[i];
}

static void ipw_fill(u8 *dst, u8 val, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = val;
}

/**
 * ipoib_encap_pack - write the 4-octet encapsulation header
 * @buf: destination, at least %IPOIB_ENCAP_LEN octets
 * @type: EtherType of the payload
 */
void ipoib_encap_pack(u8 *buf, u16 type)
{
	ipw_put16(buf, type);
	/* RFC 4391 s6: Reserved MUST be set to zero on send */
	ipw_put16(buf + 2, 0);
}

/**
 * ipoib_encap_parse - read the 4-octet encapsulation header
 * @buf: received octets
 * @len: number of octets available at @buf
 * @type: set to the EtherType on success
 *
 * Return: 0 on success, -1 if @len is too short.
 */
int ipoib_encap_parse(const u8 *buf, size_t len, u16 *type)
{
	if (len < IPOIB_ENCAP_LEN)
		return -1;
	/* RFC 4391 s6: Reserved MUST be ignored on receive */
	*type = ipw_get16(buf);
	return 0;
}

/**
 * ipoib_type_known - is @type one of the protocols of RFC 4391 s6 Table 1
 * @type: EtherType from the encapsulation header
 *
 * Return: true for IPv4, ARP, RARP and IPv6.
 */
bool ipoib_type_known(u16 type)
{
	return type == IPOIB_TYPE_IPV4 || type == IPOIB_TYPE_ARP ||
	       type == IPOIB_TYPE_RARP || type == IPOIB_TYPE_IPV6;
}

/**
 * ipoib_lladdr_pack - write a 20-octet link-layer address
 * @buf: destination, at least %IPOIB_ADDR_LEN octets
 * @a: address; only the RC/UC flags and the low 24 bits of the QPN are used
 */
void ipoib_lladdr_pack(u8 *buf, const struct ipoib_lladdr *a)
{
	/* RFC 4755 s3.1: reserved flag bits MUST be set to 0 on transmit */
	buf[LL_OFF_FLAGS] = (u8)(a->flags & IPOIB_FLAGS_MASK);
	ipw_put24(buf + LL_OFF_QPN, a->qpn);
	ipw_copy(buf + LL_OFF_GID, a->gid, IPOIB_GID_LEN);
}

/**
 * ipoib_lladdr_parse - read a 20-octet link-layer address
 * @buf: received octets
 * @len: number of octets available at @buf
 * @a: filled in on success
 *
 * Return: 0 on success, -1 if @len is too short.
 */
int ipoib_lladdr_parse(const u8 *buf, size_t len, struct ipoib_lladdr *a)
{
	if (len < IPOIB_ADDR_LEN)
		return -1;
	/* RFC 4755 s3.1: reserved flag bits MUST be ignored on receive */
	a->flags = (u8)(buf[LL_OFF_FLAGS] & IPOIB_FLAGS_MASK);
	a->qpn = ipw_get24(buf + LL_OFF_QPN);
	ipw_copy(a->gid, buf + LL_OFF_GID, IPOIB_GID_LEN);
	return 0;
}

/**
 * ipoib_lladdr_cmp - order two link-layer addresses for REQ crossing
 * @a: first address, %IPOIB_ADDR_LEN octets
 * @b: second address, %IPOIB_ADDR_LEN octets
 *
 * RFC 4755 s3.3: the addresses are compared with the connection-mode
 * flags zeroed, from the most significant octet to the least. Zeroing
 * the whole flags octet in both makes it compare equal, so the
 * comparison starts at the QPN.
 *
 * Return: <0, 0 or >0 as @a is below, equal to or above @b.
 */
int ipoib_lladdr_cmp(const u8 *a, const u8 *b)
{
	size_t i;

	for (i = LL_OFF_QPN; i < IPOIB_ADDR_LEN; i++) {
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	}
	return 0;
}

/**
 * ipoib_pkey_full - set the full-membership bit of a P_Key
 * @pkey: P_Key
 *
 * RFC 4391 s4.1: the broadcast-GID MUST use a full-membership P_Key.
 *
 * Return: @pkey with the high-order bit set.
 */
u16 ipoib_pkey_full(u16 pkey)
{
	return (u16)(pkey | IPOIB_PKEY_FULL);
}

/**
 * ipoib_pkey_valid - does a P_Key name a partition
 * @pkey: P_Key, with or without the membership bit
 *
 * Return: false if the 15 partition bits are all zero, true otherwise.
 */
bool ipoib_pkey_valid(u16 pkey)
{
	return (pkey & PKEY_BASE_MASK) != 0;
}

/* Octets 0-5 of an IPoIB MGID: prefix, flags/scope, signature, P_Key */
static void ipw_mgid_head(u8 *mgid, u8 scope, u16 sig, u16 pkey)
{
	mgid[0] = MGID_PREFIX;
	/* RFC 4391 s4: the T flag MUST be 1 in every IPoIB MGID */
	mgid[1] = (u8)(MGID_FLAGS_T << 4 | (scope & MGID_SCOPE_MASK));
	/* RFC 4391 s4: signature MUST be 0x401B (IPv4) or 0x601B (IPv6) */
	ipw_put16(mgid + MGID_OFF_SIG, sig);
	ipw_put16(mgid + MGID_OFF_PKEY, pkey);
}

/**
 * ipoib_mgid_broadcast - build the broadcast-GID (RFC 4391 s4, Figure 2)
 * @mgid: destination, %IPOIB_GID_LEN octets
 * @scope: scope bits, only the low 4 bits are used
 * @pkey: P_Key, written as given (callers pass it with the full bit)
 */
void ipoib_mgid_broadcast(u8 *mgid, u8 scope, u16 pkey)
{
	ipw_mgid_head(mgid, scope, IPOIB_SIG_IPV4, pkey);
	ipw_fill(mgid + MGID_OFF_ZERO, 0, MGID_ZERO_LEN);
	ipw_fill(mgid + MGID_OFF_V4_GROUP, 0xff, 4);
}

/**
 * ipoib_mgid_ipv4 - map an IPv4 multicast group to an MGID (RFC 4391 s4)
 * @mgid: destination, %IPOIB_GID_LEN octets
 * @scope: scope bits, only the low 4 bits are used
 * @pkey: P_Key, written as given
 * @group: IPv4 group address, 4 octets in network order
 *
 * The low 28 bits of the group go into the low 28 bits of the MGID, the
 * remaining group ID bits are 0.
 */
void ipoib_mgid_ipv4(u8 *mgid, u8 scope, u16 pkey, const u8 *group)
{
	/* read first: @group may overlap @mgid */
	u32 g = ipw_get32(group) & MGID_V4_GROUP_MASK;

	ipw_mgid_head(mgid, scope, IPOIB_SIG_IPV4, pkey);
	ipw_fill(mgid + MGID_OFF_ZERO, 0, MGID_ZERO_LEN);
	ipw_put32(mgid + MGID_OFF_V4_GROUP, g);
}

/**
 * ipoib_mgid_ipv6 - map an IPv6 multicast group to an MGID (RFC 4391 s4)
 * @mgid: destination, %IPOIB_GID_LEN octets
 * @scope: scope bits, only the low 4 bits are used
 * @pkey: P_Key, written as given
 * @group: IPv6 group address, 16 octets
 *
 * The low 80 bits of the group go unchanged into the low 80 bits of the
 * MGID.
 */
void ipoib_mgid_ipv6(u8 *mgid, u8 scope, u16 pkey, const u8 *group)
{
	/* group bits first, so that @group == @mgid works */
	ipw_copy(mgid + MGID_OFF_V6_GROUP, group + MGID_OFF_V6_GROUP,
		 IPOIB_GID_LEN - MGID_OFF_V6_GROUP);
	ipw_mgid_head(mgid, scope, IPOIB_SIG_IPV6, pkey);
}

/**
 * ipoib_bcast_lladdr - build the link-layer broadcast address
 * @buf: destination, %IPOIB_ADDR_LEN octets
 * @scope: scope bits of the broadcast-GID
 * @pkey: P_Key, written as given
 *
 * Flags 0, the multicast QPN 0xFFFFFF and the broadcast-GID.
 */
void ipoib_bcast_lladdr(u8 *buf, u8 scope, u16 pkey)
{
	buf[LL_OFF_FLAGS] = 0;
	ipw_put24(buf + LL_OFF_QPN, IPOIB_MCAST_QPN);
	ipoib_mgid_broadcast(buf + LL_OFF_GID, scope, pkey);
}

/**
 * ipoib_mgid_parse - recognise an IPoIB MGID
 * @mgid: %IPOIB_GID_LEN octets
 * @scope: if not NULL, set to the 4 scope bits
 * @sig: if not NULL, set to the IPoIB signature
 * @pkey: if not NULL, set to the P_Key
 *
 * Outputs are written only on success.
 *
 * Return: 0 for an IPoIB MGID (prefix 0xFF, flags T only, signature
 * 0x401B or 0x601B), -1 otherwise.
 */
int ipoib_mgid_parse(const u8 *mgid, u8 *scope, u16 *sig, u16 *pkey)
{
	u16 s;

	if (mgid[0] != MGID_PREFIX || (mgid[1] >> 4) != MGID_FLAGS_T)
		return -1;
	s = ipw_get16(mgid + MGID_OFF_SIG);
	if (s != IPOIB_SIG_IPV4 && s != IPOIB_SIG_IPV6)
		return -1;
	if (scope)
		*scope = (u8)(mgid[1] & MGID_SCOPE_MASK);
	if (sig)
		*sig = s;
	if (pkey)
		*pkey = ipw_get16(mgid + MGID_OFF_PKEY);
	return 0;
}

/**
 * ipoib_cm_pdata_pack - write the IPoIB-CM private data (RFC 4755 s6)
 * @buf: destination, at least %IPOIB_CM_PDATA_EXT_LEN octets
 * @pd: UD QPN (low 24 bits used), receive MTU and capabilities
 *
 * The RFC's 8 octets are followed by the magic word and @pd->caps; a
 * peer that knows only the RFC reads the first 8 and ignores the rest.
 */
void ipoib_cm_pdata_pack(u8 *buf, const struct ipoib_cm_pdata *pd)
{
	/* RFC 4755 s6: Reserved MUST be set to zero on transmit */
	buf[PDATA_OFF_RSVD] = 0;
	ipw_put24(buf + PDATA_OFF_QPN, pd->qpn);
	ipw_put32(buf + PDATA_OFF_MTU, pd->mtu);
	ipw_put32(buf + PDATA_OFF_MAGIC, IPOIB_CM_EXT_MAGIC);
	ipw_put32(buf + PDATA_OFF_CAPS, pd->caps);
}

/**
 * ipoib_cm_pdata_parse - read the IPoIB-CM private data (RFC 4755 s6)
 * @buf: received private data
 * @len: its length; CM pads private data, so more than
 *	%IPOIB_CM_PDATA_LEN octets is fine
 * @pd: filled in on success
 *
 * Capabilities are read only when @len covers the extension and its
 * magic word matches; otherwise they are 0.
 *
 * Return: 0 on success, -1 if @len is too short.
 */
int ipoib_cm_pdata_parse(const u8 *buf, size_t len, struct ipoib_cm_pdata *pd)
{
	if (len < IPOIB_CM_PDATA_LEN)
		return -1;
	/* RFC 4755 s6: Reserved MUST be ignored on receive */
	pd->qpn = ipw_get24(buf + PDATA_OFF_QPN);
	pd->mtu = ipw_get32(buf + PDATA_OFF_MTU);
	pd->caps = 0;
	if (len >= IPOIB_CM_PDATA_EXT_LEN &&
	    ipw_get32(buf + PDATA_OFF_MAGIC) == IPOIB_CM_EXT_MAGIC)
		pd->caps = ipw_get32(buf + PDATA_OFF_CAPS);
	return 0;
}

/* where a checksum starts and where its 2-octet field ends, in bounds */
static int ipw_csum_span_ok(u32 start, u32 offset, size_t ip_len)
{
	u32 end = start + offset + 2;

	/* both bounded first: the sum cannot wrap */
	if (start < IPOIB_CM_CSUM_MIN_START || start > IPOIB_CM_CSUM_MAX_END ||
	    offset > IPOIB_CM_CSUM_MAX_END)
		return 0;
	return end <= IPOIB_CM_CSUM_MAX_END && end <= ip_len;
}

/**
 * ipoib_cm_csum_imm_pack - immediate data of a checksum-pending packet
 * @buf: 4 octets, the work request's immediate data as it goes on the wire
 * @start: where the checksum starts, octets from the start of the IP packet
 * @offset: where its field is, octets from @start
 *
 * Return: 0, or -1 (nothing written) if the field would not end within
 * %IPOIB_CM_CSUM_MAX_END octets: the sender must then complete the
 * checksum itself.
 */
int ipoib_cm_csum_imm_pack(u8 *buf, u32 start, u32 offset)
{
	if (!ipw_csum_span_ok(start, offset, IPOIB_CM_CSUM_MAX_END))
		return -1;
	ipw_put16(buf + CSUM_IMM_OFF_START, (u16)start);
	ipw_put16(buf + CSUM_IMM_OFF_OFFSET, (u16)offset);
	return 0;
}

/**
 * ipoib_cm_csum_imm_parse - read the immediate data of a received packet
 * @buf: the 4 octets of immediate data
 * @ip_len: length of the IP packet it came with
 * @start: where the checksum starts (octets from the IP header)
 * @offset: where its field is, from @start
 *
 * Return: 0, or -1 (outputs untouched) if the field does not lie within
 * the packet and the first %IPOIB_CM_CSUM_MAX_END octets, or starts inside
 * the smallest IP header.
 */
int ipoib_cm_csum_imm_parse(const u8 *buf, size_t ip_len, u16 *start,
			    u16 *offset)
{
	u16 s = ipw_get16(buf + CSUM_IMM_OFF_START);
	u16 o = ipw_get16(buf + CSUM_IMM_OFF_OFFSET);

	if (!ipw_csum_span_ok(s, o, ip_len))
		return -1;
	*start = s;
	*offset = o;
	return 0;
}

/**
 * ipoib_sid_rfc - the RFC 4755 s3.5 Service-ID for a UD QPN
 * @qpn: UD QPN, only the low 24 bits are used
 *
 * Return: 0x01 prefix, Type 0, Reserved 0, then the QPN.
 */
u64 ipoib_sid_rfc(u32 qpn)
{
	return IPOIB_SID_RFC_BASE | (qpn & IPOIB_QPN_MASK);
}

/**
 * ipoib_sid_linux - the Service-ID Linux/OFED IPoIB-CM uses for a UD QPN
 * @qpn: UD QPN, only the low 24 bits are used
 *
 * Return: 0x10 prefix, zeros, then the QPN.
 */
u64 ipoib_sid_linux(u32 qpn)
{
	return IPOIB_SID_LINUX_BASE | (qpn & IPOIB_QPN_MASK);
}

/**
 * ipoib_sid_qpn - extract the UD QPN from an IPoIB-CM Service-ID
 * @sid: Service-ID from a CM REQ
 * @qpn: set to the QPN on success
 *
 * Return: 0 if @sid is exactly one of the two forms built by
 * ipoib_sid_rfc() and ipoib_sid_linux(), -1 otherwise.
 */
int ipoib_sid_qpn(u64 sid, u32 *qpn)
{
	u64 base = sid & ~(u64)IPOIB_QPN_MASK;

	/* RFC 4755 s3.5: Type MUST be 0 and Reserved MUST be zeros */
	if (base != IPOIB_SID_RFC_BASE && base != IPOIB_SID_LINUX_BASE)
		return -1;
	*qpn = (u32)(sid & IPOIB_QPN_MASK);
	return 0;
}

/**
 * ipoib_sa_inform_pack - the InformInfo of a generic trap subscription
 * @buf: %IPOIB_SA_INFORM_LEN octets
 * @trap: the trap number, for example %IPOIB_TRAP_MCG_CREATED
 * @subscribe: true to subscribe, false to cancel
 * @qpn: the QP the Reports go to (only the low 24 bits are used)
 *
 * The GID is zero and the LID range 0xFFFF, so that the trap matches
 * whoever issues it (the SM issues 66 and 67 for every group); Type and
 * ProducerType are wildcards, RespTimeValue about 1 s. An SA takes the
 * QPN of a subscription from the request's source and matches a cancel
 * by all of these fields, the QPN included.
 */
void ipoib_sa_inform_pack(u8 *buf, u16 trap, bool subscribe, u32 qpn)
{
	ipw_fill(buf, 0, IPOIB_SA_INFORM_LEN);
	ipw_put16(buf + INFORM_OFF_LID_BEGIN, INFORM_ANY16);
	ipw_put16(buf + INFORM_OFF_LID_END, 0);
	buf[INFORM_OFF_GENERIC] = 1;
	buf[INFORM_OFF_SUBSCRIBE] = subscribe;
	ipw_put16(buf + INFORM_OFF_TYPE, INFORM_ANY16);
	ipw_put16(buf + INFORM_OFF_TRAP, trap);
	ipw_put24(buf + INFORM_OFF_QPN, qpn & IPOIB_QPN_MASK);
	buf[INFORM_OFF_QPN + 3] = INFORM_RESP_TIME;
	ipw_put24(buf + INFORM_OFF_PRODUCER, INFORM_ANY24);
}

/**
 * ipoib_sa_notice_parse - read a generic MCG or GID trap out of a Notice
 * @buf: the Notice, the data of a SubnAdmReport
 * @len: octets in @buf
 * @trap: set to the trap number
 * @gid: %IPOIB_GID_LEN octets, set to the GID the trap names
 *
 * Return: 0 for a generic notice of trap 64 to 67, which carry a GID in
 * their details; -1 for a short buffer or any other notice.
 */
int ipoib_sa_notice_parse(const u8 *buf, size_t len, u16 *trap, u8 *gid)
{
	u16 t;

	if (len < IPOIB_SA_NOTICE_LEN || !(buf[NOTICE_OFF_TYPE] & NOTICE_GENERIC))
		return -1;
	t = ipw_get16(buf + NOTICE_OFF_TRAP);
	if (t < NOTICE_TRAP_GID_FIRST || t > IPOIB_TRAP_MCG_DELETED)
		return -1;
	*trap = t;
	ipw_copy(gid, buf + NOTICE_OFF_DETAILS + NOTICE_DETAILS_GID,
		 IPOIB_GID_LEN);
	return 0;
}

/**
 * ipoib_sa_mcmember_query_pack - an MCMemberRecord that asks for a P_Key
 * @buf: %IPOIB_SA_MCMEMBER_LEN octets
 * @pkey: the partition whose groups a GetTable lists (its component
 *	mask names only the P_Key)
 */
void ipoib_sa_mcmember_query_pack(u8 *buf, u16 pkey)
{
	ipw_fill(buf, 0, IPOIB_SA_MCMEMBER_LEN);
	ipw_put16(buf + MCMEMBER_OFF_PKEY, pkey);
}

/**
 * ipoib_sa_table_count - how many MCMemberRecords a GetTableResp holds
 * @data_len: octets of data after the SA header, all segments together
 * @attr_offset: the SA header's AttributeOffset, in units of 8 octets
 *
 * Return: the number of whole records; 0 if the stride is shorter than a
 * record (the SA pads each record to the stride, it never truncates).
 */
size_t ipoib_sa_table_count(size_t data_len, u16 attr_offset)
{
	size_t stride = (size_t)attr_offset * 8;

	if (stride < IPOIB_SA_MCMEMBER_LEN)
		return 0;
	return data_len / stride;
}
