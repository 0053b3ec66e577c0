// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for ipoib_wire.c. Every parser sees the input from
 * octet 0 with the input's own length, so an over-read of a short input
 * hits ASan's redzone. Invariants are checked with __builtin_trap().
 */
#include <string.h>

#include "../../ipoib_wire.h"

/*
 * The libFuzzer entry point's name is CamelCase, which checkpatch rejects;
 * the Makefile passes it in as FUZZ_ENTRY.
 */
#ifndef FUZZ_ENTRY
#error "build with -DFUZZ_ENTRY=<libFuzzer entry point>, see Makefile"
#endif

#define FUZZ_ASSERT(cond)			\
	do {					\
		if (!(cond))			\
			__builtin_trap();	\
	} while (0)

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static u16 be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static u32 be24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

static u32 be32(const u8 *p)
{
	return (u32)p[0] << 24 | be24(p + 1);
}

static int all_equal(const u8 *p, u8 val, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != val)
			return 0;
	return 1;
}

static void fuzz_encap(const u8 *data, size_t size)
{
	u8 buf[IPOIB_ENCAP_LEN];
	u16 type = 0, type2 = 0;
	int ret;

	ret = ipoib_encap_parse(data, size, &type);
	FUZZ_ASSERT(ret == (size < IPOIB_ENCAP_LEN ? -1 : 0));
	if (ret)
		return;
	FUZZ_ASSERT(type == be16(data));

	memset(buf, 0xaa, sizeof(buf));
	ipoib_encap_pack(buf, type);
	FUZZ_ASSERT(!memcmp(buf, data, 2) && buf[2] == 0 && buf[3] == 0);
	FUZZ_ASSERT(ipoib_encap_parse(buf, sizeof(buf), &type2) == 0);
	FUZZ_ASSERT(type2 == type);

	FUZZ_ASSERT(ipoib_type_known(type) ==
		    (type == 0x0800 || type == 0x0806 || type == 0x8035 ||
		     type == 0x86dd));
}

static void fuzz_lladdr(const u8 *data, size_t size)
{
	struct ipoib_lladdr a, b;
	u8 buf[IPOIB_ADDR_LEN];
	int ret;

	ret = ipoib_lladdr_parse(data, size, &a);
	FUZZ_ASSERT(ret == (size < IPOIB_ADDR_LEN ? -1 : 0));
	if (ret)
		return;
	FUZZ_ASSERT(!(a.flags & ~IPOIB_FLAGS_MASK));
	FUZZ_ASSERT(a.flags == (data[0] & IPOIB_FLAGS_MASK));
	FUZZ_ASSERT(a.qpn <= IPOIB_QPN_MASK);
	FUZZ_ASSERT(a.qpn == be24(data + 1));

	/* parse(pack(parse(x))) == parse(x); pack only clears reserved */
	memset(buf, 0xaa, sizeof(buf));
	ipoib_lladdr_pack(buf, &a);
	FUZZ_ASSERT(buf[0] == (data[0] & IPOIB_FLAGS_MASK));
	FUZZ_ASSERT(!memcmp(buf + 1, data + 1, IPOIB_ADDR_LEN - 1));
	FUZZ_ASSERT(ipoib_lladdr_parse(buf, sizeof(buf), &b) == 0);
	FUZZ_ASSERT(b.flags == a.flags && b.qpn == a.qpn &&
		    !memcmp(b.gid, a.gid, IPOIB_GID_LEN));

	/* the flags octet never takes part in the comparison */
	FUZZ_ASSERT(ipoib_lladdr_cmp(data, data) == 0);
	FUZZ_ASSERT(ipoib_lladdr_cmp(data, buf) == 0);
	FUZZ_ASSERT(ipoib_lladdr_cmp(buf, data) == 0);
}

static void fuzz_lladdr_cmp(const u8 *data, size_t size)
{
	const u8 *x = data, *y = data + IPOIB_ADDR_LEN;
	const u8 *z = data + 2 * IPOIB_ADDR_LEN;
	int xy, yx, yz, xz, want;

	if (size < 2 * IPOIB_ADDR_LEN)
		return;
	xy = sign(ipoib_lladdr_cmp(x, y));
	yx = sign(ipoib_lladdr_cmp(y, x));
	FUZZ_ASSERT(xy == -yx);

	/* same order as memcmp over QPN and GID, i.e. flags zeroed */
	want = sign(memcmp(x + 1, y + 1, IPOIB_ADDR_LEN - 1));
	FUZZ_ASSERT(xy == want);
	FUZZ_ASSERT((xy == 0) == !memcmp(x + 1, y + 1, IPOIB_ADDR_LEN - 1));

	if (size < 3 * IPOIB_ADDR_LEN)
		return;
	yz = sign(ipoib_lladdr_cmp(y, z));
	xz = sign(ipoib_lladdr_cmp(x, z));
	/* transitivity */
	if (xy <= 0 && yz <= 0)
		FUZZ_ASSERT(xz <= 0);
	if (xy >= 0 && yz >= 0)
		FUZZ_ASSERT(xz >= 0);
}

static void fuzz_mgid(const u8 *data, size_t size)
{
	u8 mgid[IPOIB_GID_LEN], ll[IPOIB_ADDR_LEN];
	u8 scope = 0, scope2 = 0;
	u16 sig = 0, sig2 = 0, pkey = 0, pkey2 = 0;
	int ret;

	if (size < IPOIB_GID_LEN)
		return;
	ret = ipoib_mgid_parse(data, &scope, &sig, &pkey);
	FUZZ_ASSERT(ipoib_mgid_parse(data, NULL, NULL, NULL) == ret);
	FUZZ_ASSERT(ret == ((data[0] == 0xff && (data[1] >> 4) == 1 &&
			     (be16(data + 2) == IPOIB_SIG_IPV4 ||
			      be16(data + 2) == IPOIB_SIG_IPV6)) ? 0 : -1));

	/* generators always produce parseable MGIDs, whatever the input */
	ipoib_mgid_broadcast(mgid, data[1], be16(data + 4));
	FUZZ_ASSERT(ipoib_mgid_parse(mgid, &scope2, &sig2, &pkey2) == 0);
	FUZZ_ASSERT(scope2 == (data[1] & 0xf) && sig2 == IPOIB_SIG_IPV4 &&
		    pkey2 == be16(data + 4));
	FUZZ_ASSERT(all_equal(mgid + 6, 0, 6) && all_equal(mgid + 12, 0xff, 4));

	ipoib_mgid_ipv4(mgid, data[1], be16(data + 4), data + 12);
	FUZZ_ASSERT(ipoib_mgid_parse(mgid, &scope2, &sig2, &pkey2) == 0);
	FUZZ_ASSERT(scope2 == (data[1] & 0xf) && sig2 == IPOIB_SIG_IPV4 &&
		    pkey2 == be16(data + 4));
	FUZZ_ASSERT(all_equal(mgid + 6, 0, 6));
	FUZZ_ASSERT(be32(mgid + 12) == (be32(data + 12) & 0x0fffffff));

	ipoib_mgid_ipv6(mgid, data[1], be16(data + 4), data);
	FUZZ_ASSERT(ipoib_mgid_parse(mgid, &scope2, &sig2, &pkey2) == 0);
	FUZZ_ASSERT(scope2 == (data[1] & 0xf) && sig2 == IPOIB_SIG_IPV6 &&
		    pkey2 == be16(data + 4));
	FUZZ_ASSERT(!memcmp(mgid + 6, data + 6, 10));

	ipoib_bcast_lladdr(ll, data[1], be16(data + 4));
	FUZZ_ASSERT(ll[0] == 0 && be24(ll + 1) == IPOIB_MCAST_QPN);
	ipoib_mgid_broadcast(mgid, data[1], be16(data + 4));
	FUZZ_ASSERT(!memcmp(ll + 4, mgid, IPOIB_GID_LEN));

	if (ret)
		return;
	FUZZ_ASSERT(scope == (data[1] & 0xf) && scope <= 0xf);
	FUZZ_ASSERT(pkey == be16(data + 4));

	/* rebuild the parsed MGID: parse -> generate -> same octets */
	if (sig == IPOIB_SIG_IPV6) {
		ipoib_mgid_ipv6(mgid, scope, pkey, data);
		FUZZ_ASSERT(!memcmp(mgid, data, IPOIB_GID_LEN));
	} else if (all_equal(data + 6, 0, 6) && !(data[12] & 0xf0)) {
		ipoib_mgid_ipv4(mgid, scope, pkey, data + 12);
		FUZZ_ASSERT(!memcmp(mgid, data, IPOIB_GID_LEN));
	}
}

static void fuzz_pdata(const u8 *data, size_t size)
{
	struct ipoib_cm_pdata pd, pd2;
	u8 buf[IPOIB_CM_PDATA_EXT_LEN];
	bool ext;
	int ret;

	ret = ipoib_cm_pdata_parse(data, size, &pd);
	FUZZ_ASSERT(ret == (size < IPOIB_CM_PDATA_LEN ? -1 : 0));
	if (ret)
		return;
	FUZZ_ASSERT(pd.qpn <= IPOIB_QPN_MASK);
	FUZZ_ASSERT(pd.qpn == be24(data + 1) && pd.mtu == be32(data + 4));
	ext = size >= IPOIB_CM_PDATA_EXT_LEN &&
	      be32(data + 8) == IPOIB_CM_EXT_MAGIC;
	FUZZ_ASSERT(pd.caps == (ext ? be32(data + 12) : 0));

	memset(buf, 0xaa, sizeof(buf));
	ipoib_cm_pdata_pack(buf, &pd);
	FUZZ_ASSERT(buf[0] == 0);
	FUZZ_ASSERT(!memcmp(buf + 1, data + 1, IPOIB_CM_PDATA_LEN - 1));
	FUZZ_ASSERT(be32(buf + 8) == IPOIB_CM_EXT_MAGIC);
	FUZZ_ASSERT(ipoib_cm_pdata_parse(buf, sizeof(buf), &pd2) == 0);
	FUZZ_ASSERT(pd2.qpn == pd.qpn && pd2.mtu == pd.mtu &&
		    pd2.caps == pd.caps);
}

static void fuzz_csum_imm(const u8 *data, size_t size)
{
	u16 start = 0, off = 0, s2 = 0, o2 = 0;
	size_t ip_len;
	u8 buf[4];
	int ret;

	if (size < 6)
		return;
	ip_len = be16(data + 4);
	ret = ipoib_cm_csum_imm_parse(data, ip_len, &start, &off);
	FUZZ_ASSERT(ret == 0 || ret == -1);
	FUZZ_ASSERT((ret == 0) ==
		    (be16(data) >= IPOIB_CM_CSUM_MIN_START &&
		     (u32)be16(data) + be16(data + 2) + 2 <= IPOIB_CM_CSUM_MAX_END &&
		     (u32)be16(data) + be16(data + 2) + 2 <= ip_len));
	if (ret)
		return;
	/* what a receiver accepts, a sender can write: same octets */
	FUZZ_ASSERT(start == be16(data) && off == be16(data + 2));
	FUZZ_ASSERT(ipoib_cm_csum_imm_pack(buf, start, off) == 0);
	FUZZ_ASSERT(!memcmp(buf, data, 4));
	FUZZ_ASSERT(ipoib_cm_csum_imm_parse(buf, ip_len, &s2, &o2) == 0 &&
		    s2 == start && o2 == off);
}

static void fuzz_sid(const u8 *data, size_t size)
{
	u64 sid = 0;
	u32 qpn = 0, qpn2 = 0;
	size_t i;
	int ret;

	if (size < 8)
		return;
	for (i = 0; i < 8; i++)
		sid = sid << 8 | data[i];

	ret = ipoib_sid_qpn(sid, &qpn);
	FUZZ_ASSERT(ret == 0 || ret == -1);
	FUZZ_ASSERT((ret == 0) ==
		    (sid == ipoib_sid_rfc((u32)sid) ||
		     sid == ipoib_sid_linux((u32)sid)));
	if (ret == 0) {
		FUZZ_ASSERT(qpn <= IPOIB_QPN_MASK);
		FUZZ_ASSERT(qpn == (sid & IPOIB_QPN_MASK));
	}

	/* generators always produce accepted SIDs with the 24-bit QPN */
	FUZZ_ASSERT(ipoib_sid_qpn(ipoib_sid_rfc((u32)sid), &qpn2) == 0);
	FUZZ_ASSERT(qpn2 == (sid & IPOIB_QPN_MASK));
	FUZZ_ASSERT(ipoib_sid_qpn(ipoib_sid_linux((u32)(sid >> 32)),
				  &qpn2) == 0);
	FUZZ_ASSERT(qpn2 == ((sid >> 32) & IPOIB_QPN_MASK));
	FUZZ_ASSERT(ipoib_sid_rfc((u32)sid) != ipoib_sid_linux((u32)sid));
}

static void fuzz_sa(const u8 *data, size_t size)
{
	u8 buf[IPOIB_SA_INFORM_LEN], gid[IPOIB_GID_LEN];
	u16 trap;

	if (ipoib_sa_notice_parse(data, size, &trap, gid) == 0) {
		FUZZ_ASSERT(size >= IPOIB_SA_NOTICE_LEN && (data[0] & 0x80));
		FUZZ_ASSERT(trap >= 64 && trap <= IPOIB_TRAP_MCG_DELETED &&
			    trap == be16(data + 4));
		FUZZ_ASSERT(!memcmp(gid, data + 16, IPOIB_GID_LEN));
	}
	if (size < 4)
		return;
	FUZZ_ASSERT(ipoib_sa_table_count(size, be16(data)) * be16(data) * 8 <=
		    size);
	FUZZ_ASSERT(be16(data) * 8 >= IPOIB_SA_MCMEMBER_LEN ||
		    !ipoib_sa_table_count(size, be16(data)));
	ipoib_sa_inform_pack(buf, be16(data), data[2] & 1, be32(data));
	FUZZ_ASSERT(be16(buf + 26) == be16(data) && buf[23] == (data[2] & 1));
	FUZZ_ASSERT(be24(buf + 28) == (be32(data) & IPOIB_QPN_MASK) && buf[31] == 18);
	FUZZ_ASSERT(all_equal(buf, 0, 16) && buf[22] == 1);
}

int FUZZ_ENTRY(const u8 *data, size_t size)
{
	fuzz_encap(data, size);
	fuzz_lladdr(data, size);
	fuzz_lladdr_cmp(data, size);
	fuzz_mgid(data, size);
	fuzz_pdata(data, size);
	fuzz_csum_imm(data, size);
	fuzz_sid(data, size);
	fuzz_sa(data, size);
	return 0;
}
