// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: port attributes derived from the bound netdev.
 *
 * These helpers are pure functions of netdev facts so that query_port,
 * the netdev notifier and the KUnit suite (port_test.c) agree on one
 * definition of "the port is ACTIVE" and "the active MTU".
 */
#include <rdma/ib_verbs.h>

#include "softhca.h"

/**
 * softhca_mtu_from_netdev - largest IB MTU whose RoCEv2 packets fit
 * @netdev_mtu: the netdev's MTU in bytes
 *
 * Return: an enum ib_mtu, or 0 when not even a 256-byte payload fits
 * (the port is then reported DOWN, see softhca_port_state()).
 */
enum ib_mtu softhca_mtu_from_netdev(unsigned int netdev_mtu)
{
	unsigned int payload;

	if (netdev_mtu < SOFTHCA_ROCE_OVERHEAD + 256)
		return 0;
	payload = netdev_mtu - SOFTHCA_ROCE_OVERHEAD;
	if (payload >= 4096)
		return IB_MTU_4096;
	if (payload >= 2048)
		return IB_MTU_2048;
	if (payload >= 1024)
		return IB_MTU_1024;
	if (payload >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

/**
 * softhca_port_state - logical port state from netdev facts
 * @running: netif_running()
 * @carrier: netif_carrier_ok()
 * @netdev_mtu: the netdev MTU
 *
 * A RoCE port is ACTIVE when its netdev is up with carrier and can carry
 * the smallest IB MTU; otherwise it is DOWN.
 */
enum ib_port_state softhca_port_state(bool running, bool carrier,
				      unsigned int netdev_mtu)
{
	if (running && carrier && softhca_mtu_from_netdev(netdev_mtu))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

/* Physical port state as IBTA encodes it: 5 = LinkUp, 3 = Disabled. */
u8 softhca_phys_state(bool running, bool carrier)
{
	if (!running)
		return IB_PORT_PHYS_STATE_DISABLED;
	return carrier ? IB_PORT_PHYS_STATE_LINK_UP :
			 IB_PORT_PHYS_STATE_POLLING;
}

/**
 * softhca_guid_from_mac - modified EUI-64 from a 48-bit MAC address
 * @mac: six bytes
 * @guid: result, big endian as GUIDs travel
 *
 * Inserts ff:fe in the middle and flips the universal/local bit, the
 * same mapping IPv6 uses, so the node GUID of a softhca device is stable
 * across reboots and unique whenever the MAC is.
 */
void softhca_guid_from_mac(const u8 *mac, __be64 *guid)
{
	u8 eui[8];

	eui[0] = mac[0] ^ 2;
	eui[1] = mac[1];
	eui[2] = mac[2];
	eui[3] = 0xff;
	eui[4] = 0xfe;
	eui[5] = mac[3];
	eui[6] = mac[4];
	eui[7] = mac[5];
	memcpy(guid, eui, sizeof(eui));
}
