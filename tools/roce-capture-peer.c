// SPDX-License-Identifier: GPL-2.0-only
/*
 * roce-capture-peer: the far side of tools/roce-capture, in the child
 * network namespace on veth1 (10.0.0.2, fd00::2).  It is no RDMA
 * device: it captures frames and builds them.
 *
 *   roce-capture-peer sniff IFNAME FILE SECONDS
 *	writes every RoCEv2 frame (UDP port 4791 either way) seen on
 *	IFNAME, in or out, to the pcap FILE until SIGTERM or SECONDS;
 *   roce-capture-peer send IFNAME DSTMAC INFO
 *	builds requests to the rxe QPs that INFO describes (written by
 *	roce-capture-rxe) with softhca's own packet layer,
 *	drivers/softhca/roce_hdr.c compiled for user space: BTH, extension
 *	headers and ICRC; IP, UDP and Ethernet headers are built here.
 *	rxe drops a frame whose ICRC is wrong without a word, so every
 *	answer it sends proves the frame right.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "roce_hdr.h"

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* --- sniff ---------------------------------------------------------------- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int is_roce(const uint8_t *p, ssize_t n)
{
	uint16_t type, sport, dport;
	int l3;

	if (n < 14 + 40 + 8)
		return 0;
	type = p[12] << 8 | p[13];
	if (type == 0x0800 && p[14 + 9] == 17)
		l3 = 14 + (p[14] & 15) * 4;
	else if (type == 0x86dd && p[14 + 6] == 17)
		l3 = 14 + 40;
	else
		return 0;
	sport = p[l3] << 8 | p[l3 + 1];
	dport = p[l3 + 2] << 8 | p[l3 + 3];
	return sport == SOFTHCA_ROCE_UDP_PORT || dport == SOFTHCA_ROCE_UDP_PORT;
}

static int sniff(const char *ifname, const char *file, int secs)
{
	struct { uint32_t magic; uint16_t maj, min; int32_t zone;
		 uint32_t sigfigs, snaplen, linktype; } gh = {
		0xa1b2c3d4, 2, 4, 0, 0, 65535, 1 };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	struct sigaction sa = { .sa_handler = on_signal };
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	uint8_t frame[65536];
	time_t end = time(NULL) + secs;
	int fd, count = 0;
	FILE *out;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0)
		die("socket(AF_PACKET)");
	sll.sll_ifindex = if_nametoindex(ifname);
	if (!sll.sll_ifindex || bind(fd, (void *)&sll, sizeof(sll)))
		die(ifname);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	out = fopen(file, "w");
	if (!out)
		die(file);
	fwrite(&gh, sizeof(gh), 1, out);
	fflush(out);
	/* ready: the caller waits for the file before sending anything */
	while (!stop && time(NULL) < end) {
		struct { uint32_t sec, usec, incl, orig; } rh;
		struct timeval now;
		ssize_t n = recv(fd, frame, sizeof(frame), 0);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("recv");
		}
		if (!is_roce(frame, n))
			continue;
		gettimeofday(&now, NULL);
		rh.sec = now.tv_sec;
		rh.usec = now.tv_usec;
		rh.incl = rh.orig = n;
		fwrite(&rh, sizeof(rh), 1, out);
		fwrite(frame, n, 1, out);
		fflush(out);
		count++;
	}
	fclose(out);
	fprintf(stderr, "sniff: %d RoCEv2 frames\n", count);
	return 0;
}

/* --- send ----------------------------------------------------------------- */

struct target {
	uint32_t rc_qpn, ud_qpn, rkey, psn, qkey, peer_qpn;
	uint64_t write, read, atomic;
};

static int fd_tx, ifindex;
static uint8_t dmac[6], smac[6];
static uint16_t ip_id = 0x4000;

static uint16_t csum(const uint8_t *p, int n)
{
	uint32_t s = 0;
	int i;

	for (i = 0; i + 1 < n; i += 2)
		s += p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;
}

/*
 * One frame: Ethernet, IP (v6 when @v6), UDP, then the RoCE packet that
 * softhca_roce_build() heads, @pay, zero pad and the ICRC that
 * softhca_icrc_fill() computes.
 */
static void send_frame(int v6, const struct softhca_roce_fields *f,
		       const void *pay, uint32_t paylen)
{
	uint8_t frame[2048] = { 0 };
	int l3 = v6 ? 40 : 20, hlen, roce, len;
	uint8_t *ip = frame + 14, *udp = ip + l3, *bth = udp + 8;

	hlen = softhca_roce_build(bth, sizeof(frame) - 14 - l3 - 8, f, paylen);
	if (hlen < 0) {
		fprintf(stderr, "softhca_roce_build(%#x): %d\n", f->opcode,
			hlen);
		exit(1);
	}
	memcpy(bth + hlen, pay, paylen);
	roce = hlen + ((paylen + 3) & ~3u) + SOFTHCA_ICRC_LEN;
	len = 14 + l3 + 8 + roce;

	memcpy(frame, dmac, 6);
	memcpy(frame + 6, smac, 6);
	frame[12] = v6 ? 0x86 : 0x08;
	frame[13] = v6 ? 0xdd : 0x00;
	if (v6) {
		ip[0] = 0x60;
		ip[4] = (8 + roce) >> 8;
		ip[5] = (8 + roce) & 0xff;
		ip[6] = 17;
		ip[7] = 64;
		inet_pton(AF_INET6, "fd00::2", ip + 8);
		inet_pton(AF_INET6, "fd00::1", ip + 24);
	} else {
		uint16_t c;

		ip[0] = 0x45;
		ip[2] = (20 + 8 + roce) >> 8;
		ip[3] = (20 + 8 + roce) & 0xff;
		ip[4] = ip_id >> 8;
		ip[5] = ip_id++ & 0xff;
		ip[6] = 0x40;			/* DF, as rxe sends */
		ip[8] = 64;
		ip[9] = 17;
		inet_pton(AF_INET, "10.0.0.2", ip + 12);
		inet_pton(AF_INET, "10.0.0.1", ip + 16);
		c = csum(ip, 20);
		ip[10] = c >> 8;
		ip[11] = c & 0xff;
	}
	udp[0] = 0xc1;				/* any source port */
	udp[1] = 0x23;
	udp[2] = SOFTHCA_ROCE_UDP_PORT >> 8;
	udp[3] = SOFTHCA_ROCE_UDP_PORT & 0xff;
	udp[4] = (8 + roce) >> 8;
	udp[5] = (8 + roce) & 0xff;		/* checksum 0, as rxe sends */

	if (softhca_icrc_fill(ip, len - 14) ||
	    softhca_icrc_verify(ip, len - 14)) {
		fprintf(stderr, "ICRC of opcode %#x failed\n", f->opcode);
		exit(1);
	}
	{
		struct sockaddr_ll sll = { .sll_family = AF_PACKET,
					   .sll_ifindex = ifindex,
					   .sll_halen = 6 };

		memcpy(sll.sll_addr, dmac, 6);
		if (sendto(fd_tx, frame, len, 0, (void *)&sll, sizeof(sll)) !=
		    len)
			die("sendto");
	}
	usleep(100000);		/* let rxe answer before the next one */
}

static void rc_base(struct softhca_roce_fields *f, const struct target *t,
		    uint8_t opcode, uint32_t psn)
{
	memset(f, 0, sizeof(*f));
	f->opcode = opcode;
	f->pkey = SOFTHCA_ROCE_DEF_PKEY;
	f->dqpn = t->rc_qpn;
	f->psn = softhca_psn_add(psn, 0);
	f->ackreq = true;
}

static void send_all(int v6, const struct target *t)
{
	static const char hello[] = "peer-send-13b";
	uint8_t data[100];
	struct softhca_roce_fields f;
	uint32_t p = t->psn;
	int i;

	for (i = 0; i < 100; i++)
		data[i] = 0xa0 + i;

	rc_base(&f, t, SOFTHCA_RC(SEND_ONLY), p);
	send_frame(v6, &f, hello, 13);				/* ACK */

	rc_base(&f, t, SOFTHCA_RC(RDMA_WRITE_ONLY), softhca_psn_add(p, 1));
	f.va = t->write;
	f.rkey = t->rkey;
	f.dma_len = 100;
	send_frame(v6, &f, data, 100);				/* ACK */

	/* 2500 bytes, 3 PSNs: READ RESPONSE FIRST, MIDDLE, LAST */
	rc_base(&f, t, SOFTHCA_RC(RDMA_READ_REQUEST), softhca_psn_add(p, 2));
	f.va = t->read;
	f.rkey = t->rkey;
	f.dma_len = 2500;
	send_frame(v6, &f, NULL, 0);

	rc_base(&f, t, SOFTHCA_RC(COMPARE_SWAP), softhca_psn_add(p, 5));
	f.va = t->atomic;
	f.rkey = t->rkey;
	f.compare = 0x1111111111111111ull;
	f.swap_add = 0x2222222222222222ull;
	send_frame(v6, &f, NULL, 0);				/* ATOMIC ACK */

	rc_base(&f, t, SOFTHCA_RC(FETCH_ADD), softhca_psn_add(p, 6));
	f.va = t->atomic;
	f.rkey = t->rkey;
	f.swap_add = 5;
	send_frame(v6, &f, NULL, 0);				/* ATOMIC ACK */

	rc_base(&f, t, SOFTHCA_RC(SEND_ONLY_WITH_IMMEDIATE),
		softhca_psn_add(p, 7));
	f.imm = htonl(0xfeedbeef);
	send_frame(v6, &f, data, 8);				/* ACK */

	/* no receive left: RNR NAK */
	rc_base(&f, t, SOFTHCA_RC(SEND_ONLY), softhca_psn_add(p, 8));
	send_frame(v6, &f, hello, 13);

	/* a PSN ahead of the expected one: PSN sequence error NAK */
	rc_base(&f, t, SOFTHCA_RC(SEND_ONLY), softhca_psn_add(p, 20));
	send_frame(v6, &f, hello, 13);

	/* UD: DETH with the receiving QP's Q_Key; completes on rxe */
	memset(&f, 0, sizeof(f));
	f.opcode = SOFTHCA_UD(SEND_ONLY_WITH_IMMEDIATE);
	f.pkey = SOFTHCA_ROCE_DEF_PKEY;
	f.dqpn = t->ud_qpn;
	f.psn = 0x42;
	f.qkey = t->qkey;
	f.sqpn = 0x999;
	f.imm = htonl(0xabad1dea);
	send_frame(v6, &f, data, 21);
}

static int send_cmd(const char *ifname, const char *mac, const char *file)
{
	char line[512], fam[8];
	struct ifreq ifr;
	FILE *in;

	if (sscanf(mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dmac[0], &dmac[1],
		   &dmac[2], &dmac[3], &dmac[4], &dmac[5]) != 6) {
		fprintf(stderr, "bad MAC %s\n", mac);
		return 2;
	}
	fd_tx = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd_tx < 0)
		die("socket(AF_PACKET)");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd_tx, SIOCGIFHWADDR, &ifr))
		die("SIOCGIFHWADDR");
	memcpy(smac, ifr.ifr_hwaddr.sa_data, 6);
	ifindex = if_nametoindex(ifname);

	in = fopen(file, "r");
	if (!in)
		die(file);
	while (fgets(line, sizeof(line), in)) {
		struct target t;

		if (sscanf(line, "%7s rc_qpn=%u ud_qpn=%u rkey=%u write=%lu "
			   "read=%lu atomic=%lu psn=%u qkey=%u peer_qpn=%u",
			   fam, &t.rc_qpn, &t.ud_qpn, &t.rkey, &t.write,
			   &t.read, &t.atomic, &t.psn, &t.qkey,
			   &t.peer_qpn) != 10) {
			fprintf(stderr, "bad info line: %s", line);
			return 1;
		}
		send_all(!strcmp(fam, "v6"), &t);
	}
	fclose(in);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "sniff"))
		return sniff(argv[2], argv[3], atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "send"))
		return send_cmd(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: %s sniff IFNAME FILE SECONDS\n"
		"       %s send IFNAME DSTMAC INFO\n", argv[0], argv[0]);
	return 2;
}
