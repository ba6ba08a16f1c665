// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: port attribute derivation (port.c).
 *
 * The rules under test decide what every user of the device sees as the
 * port state and MTU, so the boundaries are spelled out one by one.
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "softhca.h"

static void mtu_boundaries(struct kunit *test)
{
	static const struct {
		unsigned int netdev_mtu;
		enum ib_mtu want;
	} cases[] = {
		{ 0, 0 },
		{ 68, 0 },			/* IPv4 minimum */
		{ SOFTHCA_ROCE_OVERHEAD + 255, 0 },
		{ SOFTHCA_ROCE_OVERHEAD + 256, IB_MTU_256 },
		{ SOFTHCA_ROCE_OVERHEAD + 511, IB_MTU_256 },
		{ SOFTHCA_ROCE_OVERHEAD + 512, IB_MTU_512 },
		{ SOFTHCA_ROCE_OVERHEAD + 1023, IB_MTU_512 },
		{ SOFTHCA_ROCE_OVERHEAD + 1024, IB_MTU_1024 },
		{ 1500, IB_MTU_1024 },		/* standard Ethernet */
		{ SOFTHCA_ROCE_OVERHEAD + 2047, IB_MTU_1024 },
		{ SOFTHCA_ROCE_OVERHEAD + 2048, IB_MTU_2048 },
		{ 4200, IB_MTU_4096 },
		{ 9000, IB_MTU_4096 },		/* jumbo */
		{ 65535, IB_MTU_4096 },
		{ UINT_MAX, IB_MTU_4096 },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    softhca_mtu_from_netdev(cases[i].netdev_mtu),
				    cases[i].want, "netdev mtu %u",
				    cases[i].netdev_mtu);
}

static void mtu_payload_fits(struct kunit *test)
{
	unsigned int mtu;
	enum ib_mtu m;

	/* Whatever the netdev MTU, headers plus payload must fit in it. */
	for (mtu = 0; mtu <= 10000; mtu++) {
		m = softhca_mtu_from_netdev(mtu);
		if (!m)
			continue;
		KUNIT_ASSERT_LE(test,
				ib_mtu_enum_to_int(m) + SOFTHCA_ROCE_OVERHEAD,
				mtu);
	}
}

static void port_state_rules(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softhca_port_state(true, true, 1500),
			IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, softhca_port_state(true, false, 1500),
			IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, softhca_port_state(false, true, 1500),
			IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, softhca_port_state(false, false, 1500),
			IB_PORT_DOWN);
	/* Up with carrier but too small an MTU for any IB MTU. */
	KUNIT_EXPECT_EQ(test, softhca_port_state(true, true, 300),
			IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test,
			softhca_port_state(true, true,
					   SOFTHCA_ROCE_OVERHEAD + 256),
			IB_PORT_ACTIVE);
}

static void phys_state_rules(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, softhca_phys_state(true, true),
			IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_EQ(test, softhca_phys_state(true, false),
			IB_PORT_PHYS_STATE_POLLING);
	KUNIT_EXPECT_EQ(test, softhca_phys_state(false, true),
			IB_PORT_PHYS_STATE_DISABLED);
}

static void guid_is_modified_eui64(struct kunit *test)
{
	const u8 mac[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	const u8 want[8] = { 0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56 };
	const u8 local[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 1 };
	__be64 guid;

	softhca_guid_from_mac(mac, &guid);
	KUNIT_EXPECT_EQ(test, memcmp(&guid, want, sizeof(want)), 0);

	/* The U/L bit flips both ways. */
	softhca_guid_from_mac(local, &guid);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(guid), 0x000000fffe000001ULL);
}

static struct kunit_case softhca_port_cases[] = {
	KUNIT_CASE(mtu_boundaries),
	KUNIT_CASE(mtu_payload_fits),
	KUNIT_CASE(port_state_rules),
	KUNIT_CASE(phys_state_rules),
	KUNIT_CASE(guid_is_modified_eui64),
	{}
};

static struct kunit_suite softhca_port_suite = {
	.name = "softhca_port",
	.test_cases = softhca_port_cases,
};

kunit_test_suite(softhca_port_suite);
