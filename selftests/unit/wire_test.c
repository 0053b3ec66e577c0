// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for ipoib_wire.c, the RFC 4391 / RFC 4755 wire formats.
 * Self-contained, prints KTAP (the plan first: the results are kept until
 * all have run), exits non-zero on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ipoib_wire.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define POISON		0xaa

static int n_tests;
static int n_failed;
static FILE *out;	/* the results and their diagnostics, until the plan */

static int check(int cond, const char *desc)
{
	n_tests++;
	if (!cond)
		n_failed++;
	fprintf(out, "%sok %d %s\n", cond ? "" : "not ", n_tests, desc);
	return cond;
}

static void dump(const char *what, const u8 *p, size_t len)
{
	size_t i;

	fprintf(out, "#   %-4s", what);
	for (i = 0; i < len; i++)
		fprintf(out, "%s%02x", i ? ":" : " ", p[i]);
	fprintf(out, "\n");
}

static void check_bytes(const u8 *got, const u8 *want, size_t len,
			const char *desc)
{
	if (!check(!memcmp(got, want, len), desc)) {
		dump("got", got, len);
		dump("want", want, len);
	}
}

static int all_equal(const u8 *p, u8 val, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != val)
			return 0;
	return 1;
}

static int all_poison(const u8 *p, size_t len)
{
	return all_equal(p, POISON, len);
}

/* RFC 4391 s6 */
static void test_encap(void)
{
	static const u8 want_v4[] = { 0x08, 0x00, 0x00, 0x00 };
	static const u8 rx_v6[] = { 0x86, 0xdd, 0xff, 0xff };
	static const u16 known[] = {
		IPOIB_TYPE_IPV4, IPOIB_TYPE_ARP, IPOIB_TYPE_RARP,
		IPOIB_TYPE_IPV6,
	};
	static const u16 unknown[] = {
		0x0000, 0x0801, 0x0805, 0x8100, 0x88b5, 0x86de, 0xffff,
		0x0008, 0xdd86,
	};
	u8 buf[8];
	u16 type;
	size_t i;
	int ok;

	memset(buf, POISON, sizeof(buf));
	ipoib_encap_pack(buf, IPOIB_TYPE_IPV4);
	check_bytes(buf, want_v4, sizeof(want_v4),
		    "encap pack: IPv4 type big-endian, Reserved zero on send");
	check(all_poison(buf + IPOIB_ENCAP_LEN, sizeof(buf) - IPOIB_ENCAP_LEN),
	      "encap pack: writes exactly 4 octets");

	type = 0;
	check(ipoib_encap_parse(rx_v6, sizeof(rx_v6), &type) == 0 &&
	      type == IPOIB_TYPE_IPV6,
	      "encap parse: IPv6, non-zero Reserved ignored on receive");

	type = 0x1234;
	check(ipoib_encap_parse(rx_v6, IPOIB_ENCAP_LEN - 1, &type) == -1 &&
	      type == 0x1234,
	      "encap parse: 3 octets rejected, output untouched");
	check(ipoib_encap_parse(rx_v6, 0, &type) == -1,
	      "encap parse: 0 octets rejected");

	ipoib_encap_pack(buf, 0xa55a);
	check(ipoib_encap_parse(buf, IPOIB_ENCAP_LEN, &type) == 0 &&
	      type == 0xa55a, "encap: pack/parse round trip");

	ok = 1;
	for (i = 0; i < ARRAY_SIZE(known); i++)
		ok &= ipoib_type_known(known[i]);
	check(ok, "type_known: IPv4, ARP, RARP, IPv6");

	ok = 1;
	for (i = 0; i < ARRAY_SIZE(unknown); i++)
		ok &= !ipoib_type_known(unknown[i]);
	check(ok, "type_known: other and byte-swapped EtherTypes rejected");
}

static const u8 gid_a[IPOIB_GID_LEN] = {
	0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x02, 0xc9, 0x03, 0x00, 0x0a, 0xbc, 0xde,
};

/* RFC 4391 s9.1.1, RFC 4755 s3.1 */
static void test_lladdr(void)
{
	static const u8 want[IPOIB_ADDR_LEN] = {
		0xc0, 0x34, 0x56, 0x78,
		0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x02, 0xc9, 0x03, 0x00, 0x0a, 0xbc, 0xde,
	};
	struct ipoib_lladdr a, b;
	u8 buf[IPOIB_ADDR_LEN + 4];
	u8 rx[IPOIB_ADDR_LEN + 1];

	memset(&a, 0, sizeof(a));
	a.flags = 0xff;
	a.qpn = 0x12345678;
	memcpy(a.gid, gid_a, sizeof(a.gid));
	memset(buf, POISON, sizeof(buf));
	ipoib_lladdr_pack(buf, &a);
	check_bytes(buf, want, IPOIB_ADDR_LEN,
		    "lladdr pack: reserved flag bits zero on send, QPN 24 bits, GID");
	check(all_poison(buf + IPOIB_ADDR_LEN, sizeof(buf) - IPOIB_ADDR_LEN),
	      "lladdr pack: writes exactly 20 octets");

	a.flags = IPOIB_FLAG_UC | 0x20;
	ipoib_lladdr_pack(buf, &a);
	check(buf[0] == IPOIB_FLAG_UC, "lladdr pack: UC only -> 0x40");
	a.flags = IPOIB_FLAG_RC | 0x08;
	ipoib_lladdr_pack(buf, &a);
	check(buf[0] == IPOIB_FLAG_RC, "lladdr pack: RC only -> 0x80");

	memcpy(rx, want, IPOIB_ADDR_LEN);
	rx[0] = IPOIB_FLAG_RC | 0x3f;
	rx[IPOIB_ADDR_LEN] = 0x99;
	memset(&b, POISON, sizeof(b));
	check(ipoib_lladdr_parse(rx, IPOIB_ADDR_LEN, &b) == 0 &&
	      b.flags == IPOIB_FLAG_RC,
	      "lladdr parse: reserved flag bits ignored on receive");
	check(b.qpn == 0x345678 && !memcmp(b.gid, gid_a, IPOIB_GID_LEN),
	      "lladdr parse: QPN and GID");

	rx[0] = 0xff;
	check(ipoib_lladdr_parse(rx, sizeof(rx), &b) == 0 &&
	      b.flags == IPOIB_FLAGS_MASK,
	      "lladdr parse: 21 octets accepted, RC|UC kept");

	memset(&b, POISON, sizeof(b));
	check(ipoib_lladdr_parse(rx, IPOIB_ADDR_LEN - 1, &b) == -1 &&
	      b.flags == POISON && b.gid[0] == POISON,
	      "lladdr parse: 19 octets rejected, output untouched");
	check(ipoib_lladdr_parse(rx, 0, &b) == -1,
	      "lladdr parse: 0 octets rejected");

	rx[0] = 0x7f;
	ipoib_lladdr_parse(rx, IPOIB_ADDR_LEN, &b);
	ipoib_lladdr_pack(buf, &b);
	rx[0] = IPOIB_FLAG_UC;
	check_bytes(buf, rx, IPOIB_ADDR_LEN,
		    "lladdr: pack(parse(x)) == x with reserved flags cleared");
}

/* RFC 4755 s3.3 */
static void test_lladdr_cmp(void)
{
	u8 a[IPOIB_ADDR_LEN], b[IPOIB_ADDR_LEN];

	memcpy(a + 4, gid_a, IPOIB_GID_LEN);
	a[0] = IPOIB_FLAG_RC | IPOIB_FLAG_UC;
	a[1] = 0x00;
	a[2] = 0x00;
	a[3] = 0x48;
	memcpy(b, a, sizeof(b));
	b[0] = 0;
	check(ipoib_lladdr_cmp(a, b) == 0 && ipoib_lladdr_cmp(b, a) == 0,
	      "lladdr cmp: addresses differing only in flags are equal");

	b[0] = 0x3f;	/* reserved bits are "flags" too, zeroed */
	check(ipoib_lladdr_cmp(a, b) == 0,
	      "lladdr cmp: whole flags octet zeroed");

	b[0] = 0;
	b[3] = 0x49;
	check(ipoib_lladdr_cmp(a, b) < 0 && ipoib_lladdr_cmp(b, a) > 0,
	      "lladdr cmp: lower QPN, higher flags -> smaller; antisymmetric");

	memcpy(b, a, sizeof(b));
	b[IPOIB_ADDR_LEN - 1]--;
	check(ipoib_lladdr_cmp(a, b) > 0 && ipoib_lladdr_cmp(b, a) < 0,
	      "lladdr cmp: last GID octet is significant");

	/* QPN is more significant than the GID: a has higher QPN, lower GID */
	memcpy(b, a, sizeof(b));
	a[1] = 0x01;
	b[4] = 0xff;
	check(ipoib_lladdr_cmp(a, b) > 0 && ipoib_lladdr_cmp(b, a) < 0,
	      "lladdr cmp: most significant octet first");

	/* unsigned octets: 0x80 > 0x7f */
	memcpy(b, a, sizeof(b));
	a[10] = 0x80;
	b[10] = 0x7f;
	check(ipoib_lladdr_cmp(a, b) > 0,
	      "lladdr cmp: octets compare unsigned");
}

/* RFC 4391 s4.1 */
static void test_pkey(void)
{
	check(ipoib_pkey_full(0x7fff) == 0xffff &&
	      ipoib_pkey_full(0x0001) == 0x8001 &&
	      ipoib_pkey_full(0x8002) == 0x8002,
	      "pkey_full: sets only the membership bit");
	check(!ipoib_pkey_valid(0x0000), "pkey_valid: P_Key 0 invalid");
	check(!ipoib_pkey_valid(0x8000), "pkey_valid: P_Key 0x8000 invalid");
	check(ipoib_pkey_valid(0xffff) && ipoib_pkey_valid(0x7fff) &&
	      ipoib_pkey_valid(0x0001) && ipoib_pkey_valid(0x8001),
	      "pkey_valid: any partition bit makes it valid");
}

/* RFC 4391 s4, Figures 1 and 2 */
static void test_mgid(void)
{
	static const u8 v4_group[4] = { 224, 0, 0, 2 };
	static const u8 v4_ssdp[4] = { 239, 255, 255, 250 };
	static const u8 v6_group[16] = {
		0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
	};
	static const u8 v6_wide[16] = {
		0xff, 0x05, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33,
		0x44, 0x44, 0x55, 0x55, 0x66, 0x66, 0x77, 0x77,
	};
	/* FF12:401B:8000::2 */
	static const u8 want_v4[16] = {
		0xff, 0x12, 0x40, 0x1b, 0x80, 0x00, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0x02,
	};
	static const u8 want_ssdp[16] = {
		0xff, 0x18, 0x40, 0x1b, 0xc0, 0x01, 0, 0, 0, 0, 0, 0,
		0x0f, 0xff, 0xff, 0xfa,
	};
	/* FF12:601B:8000::2 */
	static const u8 want_v6[16] = {
		0xff, 0x12, 0x60, 0x1b, 0x80, 0x00, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0x02,
	};
	static const u8 want_v6_wide[16] = {
		0xff, 0x15, 0x60, 0x1b, 0xff, 0xff, 0x33, 0x33,
		0x44, 0x44, 0x55, 0x55, 0x66, 0x66, 0x77, 0x77,
	};
	static const u8 want_bcast[16] = {
		0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff,
	};
	static const u8 want_bcast_ll[IPOIB_ADDR_LEN] = {
		0x00, 0xff, 0xff, 0xff, 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
	};
	u8 mgid[IPOIB_GID_LEN + 4];
	u8 ll[IPOIB_ADDR_LEN + 4];
	u8 scope;
	u16 sig, pkey;

	memset(mgid, POISON, sizeof(mgid));
	ipoib_mgid_ipv4(mgid, IPOIB_SCOPE_LINK, 0x8000, v4_group);
	check_bytes(mgid, want_v4, IPOIB_GID_LEN,
		    "mgid ipv4: RFC 4391 example FF12:401B:8000::2");
	check(all_poison(mgid + IPOIB_GID_LEN, 4),
	      "mgid ipv4: writes exactly 16 octets");

	memset(mgid, POISON, sizeof(mgid));
	ipoib_mgid_ipv4(mgid, 0x8, 0xc001, v4_ssdp);
	check_bytes(mgid, want_ssdp, IPOIB_GID_LEN,
		    "mgid ipv4: only the low 28 group bits, rest zero");

	memset(mgid, POISON, sizeof(mgid));
	ipoib_mgid_ipv6(mgid, IPOIB_SCOPE_LINK, 0x8000, v6_group);
	check_bytes(mgid, want_v6, IPOIB_GID_LEN,
		    "mgid ipv6: RFC 4391 example FF12:601B:8000::2");
	check(all_poison(mgid + IPOIB_GID_LEN, 4),
	      "mgid ipv6: writes exactly 16 octets");

	memset(mgid, POISON, sizeof(mgid));
	ipoib_mgid_ipv6(mgid, 0xf5, 0xffff, v6_wide);
	check_bytes(mgid, want_v6_wide, IPOIB_GID_LEN,
		    "mgid ipv6: low 80 group bits copied, scope masked to 4 bits");

	memset(mgid, POISON, sizeof(mgid));
	ipoib_mgid_broadcast(mgid, IPOIB_SCOPE_LINK, 0xffff);
	check_bytes(mgid, want_bcast, IPOIB_GID_LEN,
		    "mgid broadcast: ff12:401b:ffff:0:0:0:ffff:ffff");
	check(all_poison(mgid + IPOIB_GID_LEN, 4),
	      "mgid broadcast: writes exactly 16 octets");

	ipoib_mgid_broadcast(mgid, 0x25, 0x8000);
	check(mgid[1] == 0x15 && mgid[4] == 0x80 && mgid[5] == 0x00,
	      "mgid broadcast: T flag set, scope masked, P_Key as given");

	memset(ll, POISON, sizeof(ll));
	ipoib_bcast_lladdr(ll, IPOIB_SCOPE_LINK, 0xffff);
	check_bytes(ll, want_bcast_ll, IPOIB_ADDR_LEN,
		    "bcast lladdr: flags 0, QPN 0xffffff, broadcast-GID");
	check(all_poison(ll + IPOIB_ADDR_LEN, 4),
	      "bcast lladdr: writes exactly 20 octets");

	scope = 0;
	sig = 0;
	pkey = 0;
	check(ipoib_mgid_parse(want_bcast, &scope, &sig, &pkey) == 0 &&
	      scope == 2 && sig == IPOIB_SIG_IPV4 && pkey == 0xffff,
	      "mgid parse: broadcast-GID");
	check(ipoib_mgid_parse(want_v6_wide, &scope, &sig, &pkey) == 0 &&
	      scope == 5 && sig == IPOIB_SIG_IPV6 && pkey == 0xffff,
	      "mgid parse: IPv6 MGID");
	memcpy(mgid, want_v4, IPOIB_GID_LEN);
	mgid[4] = 0x12;
	mgid[5] = 0x34;
	check(ipoib_mgid_parse(mgid, &scope, &sig, &pkey) == 0 &&
	      scope == 2 && sig == IPOIB_SIG_IPV4 && pkey == 0x1234,
	      "mgid parse: limited-member P_Key returned as is");
	check(ipoib_mgid_parse(want_ssdp, NULL, NULL, NULL) == 0,
	      "mgid parse: NULL outputs allowed");

	memcpy(mgid, want_v4, IPOIB_GID_LEN);
	mgid[0] = 0xfe;
	check(ipoib_mgid_parse(mgid, &scope, &sig, &pkey) == -1,
	      "mgid parse: rejects first octet != 0xff");

	memcpy(mgid, want_v4, IPOIB_GID_LEN);
	mgid[1] = 0x02;
	check(ipoib_mgid_parse(mgid, NULL, NULL, NULL) == -1,
	      "mgid parse: rejects flags nibble 0 (permanent MGID)");
	mgid[1] = 0x32;
	check(ipoib_mgid_parse(mgid, NULL, NULL, NULL) == -1,
	      "mgid parse: rejects flags nibble 3");

	memcpy(mgid, want_v4, IPOIB_GID_LEN);
	mgid[3] = 0x1c;
	scope = 0x77;
	check(ipoib_mgid_parse(mgid, &scope, NULL, NULL) == -1 &&
	      scope == 0x77, "mgid parse: rejects signature 0x401c");
	mgid[2] = 0x41;
	mgid[3] = 0x1b;
	check(ipoib_mgid_parse(mgid, NULL, NULL, NULL) == -1,
	      "mgid parse: rejects signature 0x411b");
}

/* RFC 4755 s6, then our extension */
static void test_pdata(void)
{
	static const u8 want[IPOIB_CM_PDATA_EXT_LEN] = {
		0x00, 0xab, 0xcd, 0xef, 0x00, 0x01, 0xff, 0xfc,
		'I', 'P', 'O', 'C', 0x00, 0x00, 0x00, 0x01,
	};
	u8 buf[256];
	struct ipoib_cm_pdata pd, out;

	pd.qpn = 0xffabcdef;
	pd.mtu = 0x0001fffc;
	pd.caps = IPOIB_CM_CAP_BIDIR;
	memset(buf, POISON, sizeof(buf));
	ipoib_cm_pdata_pack(buf, &pd);
	check_bytes(buf, want, sizeof(want),
		    "pdata pack: Reserved zero on send, QPN 24 bits, MTU, magic, caps");
	check(all_poison(buf + IPOIB_CM_PDATA_EXT_LEN, 4),
	      "pdata pack: writes exactly 16 octets");

	buf[0] = 0xff;
	memset(&out, 0, sizeof(out));
	check(ipoib_cm_pdata_parse(buf, sizeof(buf), &out) == 0 &&
	      out.qpn == 0xabcdef && out.mtu == 0x0001fffc &&
	      out.caps == IPOIB_CM_CAP_BIDIR,
	      "pdata parse: padded area accepted, Reserved ignored on receive");

	memset(&out, POISON, sizeof(out));
	check(ipoib_cm_pdata_parse(buf, IPOIB_CM_PDATA_EXT_LEN - 1, &out) == 0 &&
	      out.qpn == 0xabcdef && out.caps == 0,
	      "pdata parse: extension cut short reads as no capabilities");

	memset(&out, POISON, sizeof(out));
	buf[IPOIB_CM_PDATA_LEN + 3] ^= 1;
	check(ipoib_cm_pdata_parse(buf, sizeof(buf), &out) == 0 &&
	      out.caps == 0,
	      "pdata parse: wrong magic reads as no capabilities");

	/* the in-tree driver's REQ: 8 octets, CM pads with zeros */
	memset(buf + IPOIB_CM_PDATA_LEN, 0, 84);
	memset(&out, POISON, sizeof(out));
	check(ipoib_cm_pdata_parse(buf, 92, &out) == 0 && out.caps == 0 &&
	      out.qpn == 0xabcdef,
	      "pdata parse: RFC-only private data, zero padded, has no caps");

	memset(&out, POISON, sizeof(out));
	check(ipoib_cm_pdata_parse(buf, IPOIB_CM_PDATA_LEN - 1, &out) == -1 &&
	      out.qpn == 0xaaaaaaaa,
	      "pdata parse: 7 octets rejected, output untouched");

	pd.qpn = 0x000001;
	pd.mtu = 65520;
	pd.caps = 0xfffffffe;
	ipoib_cm_pdata_pack(buf, &pd);
	check(ipoib_cm_pdata_parse(buf, IPOIB_CM_PDATA_EXT_LEN, &out) == 0 &&
	      out.qpn == pd.qpn && out.mtu == pd.mtu && out.caps == pd.caps,
	      "pdata: pack/parse round trip");
}

/* our checksum-pending immediate data: start, then offset, big-endian */
static void test_csum_imm(void)
{
	static const u8 tcp4[4] = { 0x00, 0x14, 0x00, 0x10 };
	static const u8 start16[4] = { 0x00, 0x10, 0x00, 0x06 };
	static const u8 ones[4] = { 0xff, 0xff, 0xff, 0xff };
	static const u8 off_big[4] = { 0x00, 0x28, 0xff, 0xf0 };
	u8 buf[8];
	u16 start, off;

	memset(buf, POISON, sizeof(buf));
	check(ipoib_cm_csum_imm_pack(buf, 20, 16) == 0, "csum imm pack: TCP over IPv4");
	check_bytes(buf, tcp4, sizeof(tcp4),
		    "csum imm pack: start then offset, network order");
	check(all_poison(buf + 4, 4), "csum imm pack: writes exactly 4 octets");

	check(ipoib_cm_csum_imm_parse(buf, 60, &start, &off) == 0 &&
	      start == 20 && off == 16,
	      "csum imm parse: TCP over IPv4 round trip");
	check(ipoib_cm_csum_imm_parse(buf, 38, &start, &off) == 0,
	      "csum imm parse: field ending at the packet's end accepted");
	start = 0xaaaa;
	off = 0xaaaa;
	check(ipoib_cm_csum_imm_parse(buf, 37, &start, &off) == -1 &&
	      start == 0xaaaa && off == 0xaaaa,
	      "csum imm parse: field past the packet's end rejected, untouched");

	memset(buf, POISON, sizeof(buf));
	check(ipoib_cm_csum_imm_pack(buf, 19, 6) == -1 && all_poison(buf, 8),
	      "csum imm pack: start inside the smallest IP header refused");
	check(ipoib_cm_csum_imm_pack(buf, 240, 16) == -1 && all_poison(buf, 8),
	      "csum imm pack: field ending beyond 256 octets refused");
	check(ipoib_cm_csum_imm_pack(buf, 238, 16) == 0 &&
	      ipoib_cm_csum_imm_parse(buf, 65520, &start, &off) == 0 &&
	      start == 238 && off == 16,
	      "csum imm: field ending at octet 256 accepted both ways");
	check(ipoib_cm_csum_imm_pack(buf, 20, 0x10000 + 16) == -1,
	      "csum imm pack: offset wider than 16 bits refused");
	check(ipoib_cm_csum_imm_pack(buf, 0xffffffff, 0) == -1,
	      "csum imm pack: a start that would wrap the end refused");

	check(ipoib_cm_csum_imm_parse(start16, 1000, &start, &off) == -1,
	      "csum imm parse: start 16 rejected");
	check(ipoib_cm_csum_imm_parse(ones, 65520, &start, &off) == -1,
	      "csum imm parse: all ones rejected (no wrap-around)");
	check(ipoib_cm_csum_imm_parse(off_big, 65520, &start, &off) == -1,
	      "csum imm parse: offset 0xfff0 rejected");
}

/* RFC 4755 s3.5 */
static void test_sid(void)
{
	static const u64 bad[] = {
		0x0000000000123456ull,	/* no prefix */
		0x0101000000123456ull,	/* Type != 0 */
		0x0100000001123456ull,	/* Reserved != 0 */
		0x0100800000000000ull,	/* Reserved high bit */
		0x1000000001000000ull,	/* Linux form, bit above QPN */
		0x1100000000123456ull,	/* both prefixes */
		0x0200000000123456ull,	/* other IETF-ish prefix */
		0xffffffffffffffffull,
	};
	u32 qpn;
	size_t i;
	int ok;

	check(ipoib_sid_rfc(0x123456) == 0x0100000000123456ull &&
	      ipoib_sid_rfc(0xff123456) == 0x0100000000123456ull,
	      "sid rfc: 0x01, Type 0, Reserved 0, QPN masked to 24 bits");
	check(ipoib_sid_linux(0xabcdef) == 0x1000000000abcdefull &&
	      ipoib_sid_linux(0x01000000) == 0x1000000000000000ull,
	      "sid linux: 0x10 prefix, QPN masked to 24 bits");

	qpn = 0;
	check(ipoib_sid_qpn(0x0100000000fedcbaull, &qpn) == 0 &&
	      qpn == 0xfedcba, "sid qpn: accepts RFC form");
	qpn = 0;
	check(ipoib_sid_qpn(0x1000000000000048ull, &qpn) == 0 &&
	      qpn == 0x48, "sid qpn: accepts Linux form");
	check(ipoib_sid_qpn(ipoib_sid_rfc(0xffffff), &qpn) == 0 &&
	      qpn == 0xffffff, "sid qpn: round trip of the largest QPN");

	ok = 1;
	qpn = 0x5a5a5a;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (ipoib_sid_qpn(bad[i], &qpn) != -1) {
			fprintf(out, "# accepted 0x%016llx\n", bad[i]);
			ok = 0;
		}
	}
	check(ok && qpn == 0x5a5a5a,
	      "sid qpn: rejects non-zero Type/Reserved and other prefixes");
}

/* The layouts as IBA vol. 1 tables 174 (InformInfo) and 171 (Notice) draw them */
static void test_sa(void)
{
	static const u8 want_inform[IPOIB_SA_INFORM_LEN] = {
		[16] = 0xff, [17] = 0xff,		/* LIDRangeBegin: any */
		[22] = 1, [23] = 1,			/* IsGeneric, Subscribe */
		[24] = 0xff, [25] = 0xff,		/* Type: any */
		[26] = 0x00, [27] = 66,			/* TrapNumber */
		[30] = 0x01,				/* QPN 1 */
		[31] = 18,				/* RespTime ~1 s */
		[33] = 0xff, [34] = 0xff, [35] = 0xff,	/* ProducerType: any */
	};
	u8 buf[IPOIB_SA_MCMEMBER_LEN + 4], notice[IPOIB_SA_NOTICE_LEN];
	u8 gid[IPOIB_GID_LEN], mgid[IPOIB_GID_LEN];
	u16 trap = 0;
	size_t i;

	memset(buf, POISON, sizeof(buf));
	ipoib_sa_inform_pack(buf, IPOIB_TRAP_MCG_CREATED, true, 1);
	check_bytes(buf, want_inform, IPOIB_SA_INFORM_LEN,
		    "inform pack: MCG created, any issuer, type and producer");
	check(all_poison(buf + IPOIB_SA_INFORM_LEN, 4),
	      "inform pack: writes exactly 36 octets");
	ipoib_sa_inform_pack(buf, IPOIB_TRAP_MCG_DELETED, false, 0x1abcdef);
	check(buf[23] == 0 && buf[27] == 67 && buf[16] == 0xff &&
	      buf[28] == 0xab && buf[29] == 0xcd && buf[30] == 0xef &&
	      buf[31] == 18, "inform pack: cancel of MCG deleted, QPN masked");

	/* what opensm reports: generic, type 4 (subnet management), producer 4 */
	memset(notice, 0, sizeof(notice));
	notice[0] = 0x84;
	notice[3] = 4;
	notice[5] = 66;
	notice[6] = 0x00;
	notice[7] = 0x01;				/* IssuerLID */
	for (i = 0; i < IPOIB_GID_LEN; i++) {
		mgid[i] = (u8)(0xf0 + i);
		notice[16 + i] = mgid[i];		/* details + 6 */
		notice[64 + i] = 0xaa;			/* IssuerGID: the SM */
	}
	memset(gid, 0, sizeof(gid));
	check(ipoib_sa_notice_parse(notice, sizeof(notice), &trap, gid) == 0 &&
	      trap == 66 && !memcmp(gid, mgid, IPOIB_GID_LEN),
	      "notice parse: trap 66 names the MGID in its details, not the issuer");
	notice[5] = 67;
	check(ipoib_sa_notice_parse(notice, sizeof(notice), &trap, gid) == 0 &&
	      trap == 67, "notice parse: trap 67");
	check(ipoib_sa_notice_parse(notice, IPOIB_SA_NOTICE_LEN - 1, &trap,
				    gid) == -1, "notice parse: 79 octets rejected");
	notice[5] = 128;
	check(ipoib_sa_notice_parse(notice, sizeof(notice), &trap, gid) == -1,
	      "notice parse: trap 128 (link state) rejected");
	notice[5] = 63;
	check(ipoib_sa_notice_parse(notice, sizeof(notice), &trap, gid) == -1,
	      "notice parse: trap 63 rejected");
	memset(buf, POISON, sizeof(buf));
	ipoib_sa_mcmember_query_pack(buf, 0x8123);
	check(buf[40] == 0x81 && buf[41] == 0x23 && all_poison(buf + 52, 4),
	      "mcmember query: P_Key at octet 40, 52 octets written");
	buf[40] = 0;
	buf[41] = 0;
	check(all_equal(buf, 0, IPOIB_SA_MCMEMBER_LEN),
	      "mcmember query: all else zero");
	/* opensm pads 52-octet records to 56 (AttributeOffset 7) */
	check(ipoib_sa_table_count(200, 7) == 3 &&
	      ipoib_sa_table_count(56 * 40, 7) == 40 &&
	      ipoib_sa_table_count(55, 7) == 0,
	      "table count: whole 56-octet records only");
	check(ipoib_sa_table_count(200, 6) == 0 &&
	      ipoib_sa_table_count(200, 0) == 0,
	      "table count: a stride shorter than a record gives none");
	notice[5] = 66;
	notice[0] = 0x04;
	check(ipoib_sa_notice_parse(notice, sizeof(notice), &trap, gid) == -1,
	      "notice parse: vendor notice (IsGeneric 0) rejected");
}

int main(void)
{
	char *buf;
	size_t len;

	out = open_memstream(&buf, &len);
	if (!out)
		return 2;
	test_encap();
	test_lladdr();
	test_lladdr_cmp();
	test_pkey();
	test_mgid();
	test_pdata();
	test_csum_imm();
	test_sid();
	test_sa();
	if (fclose(out))
		return 2;
	printf("KTAP version 1\n1..%d\n", n_tests);
	fwrite(buf, 1, len, stdout);
	free(buf);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       n_tests - n_failed, n_failed);
	return n_failed ? 1 : 0;
}
