/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: the sequencing rules of connected QPs on the wire (wire_seq.c).
 *
 * Pure logic, no state of its own, no locks, any context: which BTH
 * opcode each packet of a message carries, how a message is cut into
 * path-MTU packets, and what a receiver does with each packet of a
 * connected (so far: UC) QP given the PSN it expects.  The transport
 * files (wire_conn.c sends, wire_resp.c receives) keep the state;
 * wire_seq_test.c checks the rules.
 */
#ifndef SOFTHCA_WIRE_SEQ_H
#define SOFTHCA_WIRE_SEQ_H

#include <linux/types.h>

/**
 * struct softhca_seq_rx - a connected QP's receive sequence state
 * @epsn: the PSN expected next
 * @cur: SOFTHCA_H_SEND or SOFTHCA_H_WRITE while a message is half
 *	received (its FIRST was taken, its LAST not yet), else 0
 * @drop: a packet of the message in progress was lost or refused: every
 *	packet is dropped until the next FIRST or ONLY
 */
struct softhca_seq_rx {
	u32 epsn;
	u32 cur;
	bool drop;
};

/* What a receiver does with one packet (softhca_seq_rx_step()). */
enum softhca_seq_verdict {
	/* in order: deliver it */
	SOFTHCA_SEQ_TAKE,
	/*
	 * a FIRST/ONLY after a PSN jump no GAP reported: packets before it
	 * were lost; deliver it
	 */
	SOFTHCA_SEQ_RESYNC,
	/* a PSN gap inside a message: it is lost, drop to the next FIRST */
	SOFTHCA_SEQ_GAP,
	/* the rest of a lost message, or an opcode out of sequence */
	SOFTHCA_SEQ_DROP,
	/* payload not what the path MTU allows: the message is dropped */
	SOFTHCA_SEQ_BAD_LEN,
};

int softhca_seq_opcode(u8 tp, u8 wr_opcode, bool first, bool last);
u32 softhca_seq_npkts(u64 len, u32 mtu);
u32 softhca_seq_chunk(u32 chunk, u32 mtu);
bool softhca_seq_paylen_ok(u32 mask, u32 paylen, u32 mtu);
void softhca_seq_rx_reset(struct softhca_seq_rx *s, u32 psn);
enum softhca_seq_verdict softhca_seq_rx_step(struct softhca_seq_rx *s,
					     u32 mask, u32 psn, u32 paylen,
					     u32 mtu);
__be16 softhca_seq_sport(u32 a, u32 b);

#endif /* SOFTHCA_WIRE_SEQ_H */
