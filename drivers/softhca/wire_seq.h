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
/*
 * Packets of one RC chunk in flight at most: a chunk leaves in one go and
 * lands in the receiving CPU's backlog (netdev_max_backlog, 1000 by
 * default) before the responder's softirq takes it, so well under that.
 */
#define SOFTHCA_SEQ_CHUNK_PKTS	512

u32 softhca_seq_chunk(u32 pkts, u32 mtu);
bool softhca_seq_paylen_ok(u32 mask, u32 paylen, u32 mtu);
void softhca_seq_rx_reset(struct softhca_seq_rx *s, u32 psn);
enum softhca_seq_verdict softhca_seq_rx_step(struct softhca_seq_rx *s,
					     u32 mask, u32 psn, u32 paylen,
					     u32 mtu);
__be16 softhca_seq_sport(u32 a, u32 b);

/*
 * RC (wire_rc_seq.c).  The responder's receive state: unlike UC, an RC
 * receiver never skips a PSN; it takes the expected one only, and what
 * is behind it is a duplicate the requester sent again.
 *
 * @epsn: the PSN expected next
 * @msn: messages taken whole (the MSN its ACKs carry)
 * @cur: SOFTHCA_H_SEND or SOFTHCA_H_WRITE while a message is half
 *	received, else 0
 * @nak_sent: a NAK (sequence or RNR) for @epsn went out: later packets
 *	ahead of it are dropped silently until @epsn arrives (but see
 *	softhca_rc_rx_ask_again())
 * @nak_seq: that NAK is a sequence NAK
 * @nak_asked: a packet dropped since asked for an answer, at @nak_ask
 * @nak_ask: the PSN of the last such packet
 */
struct softhca_rc_rx {
	u32 epsn;
	u32 msn;
	u32 cur;
	bool nak_sent;
	bool nak_seq;
	bool nak_asked;
	u32 nak_ask;
};

/* What an RC responder does with one packet (softhca_rc_rx_step()). */
enum softhca_rc_verdict {
	SOFTHCA_RC_TAKE,	/* the expected PSN, in sequence: deliver */
	SOFTHCA_RC_DUP,		/* behind: taken before; ACK it again */
	SOFTHCA_RC_NAK_SEQ,	/* ahead: a PSN sequence NAK, once */
	SOFTHCA_RC_DROP,	/* ahead, NAK already sent: silently */
	SOFTHCA_RC_READ,	/* the expected PSN, a READ REQUEST between
				 * messages: answer it, the PSN moves by its
				 * span (softhca_rc_read_span())
				 */
	SOFTHCA_RC_ATOMIC,	/* the expected PSN, an atomic request
				 * between messages: carry it out once, one
				 * PSN
				 */
	SOFTHCA_RC_INVALID,	/* expected PSN but out of sequence, a
				 * length the MTU refuses, or an opcode not
				 * carried: NAK invalid request
				 */
};

/* What an ACK or NAK means to the chunk in flight (softhca_rc_answer()). */
enum softhca_rc_answer {
	SOFTHCA_RC_ANS_STALE,	/* not about the chunk in flight: ignore */
	SOFTHCA_RC_ANS_PART,	/* ACKs part of it only: keep waiting */
	SOFTHCA_RC_ANS_ACK,	/* the whole chunk is acknowledged */
	SOFTHCA_RC_ANS_RNR,	/* RNR NAK: send it again after the timer */
	SOFTHCA_RC_ANS_SEQ,	/* PSN sequence NAK: send it again now */
	SOFTHCA_RC_ANS_INV,	/* NAK invalid request */
	SOFTHCA_RC_ANS_ACCESS,	/* NAK remote access error */
	SOFTHCA_RC_ANS_OP,	/* NAK remote operational error */
};

/* What the requester does with a READ RESPONSE (softhca_rc_read_resp()). */
enum softhca_rc_rd_verdict {
	SOFTHCA_RC_RD_STALE,	/* not the READ in flight, or already taken */
	SOFTHCA_RC_RD_TAKE,	/* the one expected: keep it */
	SOFTHCA_RC_RD_DONE,	/* ... and the last: the READ is answered */
	SOFTHCA_RC_RD_AHEAD,	/* ahead of the one expected (one before it
				 * is lost or late): hold it
				 */
	SOFTHCA_RC_RD_BAD,	/* the wrong opcode or payload length for
				 * its place
				 */
};

/**
 * struct softhca_rc_atm - an RC responder's records of READs and atomics
 * @rec: @n records, the oldest overwritten first (@next)
 * @n: max_dest_rd_atomic: how many READs and atomics a requester may
 *	have outstanding, so how far back a duplicate can be
 * @next: the record the next one goes to
 *
 * A duplicate atomic request (behind the expected PSN) must not be
 * carried out again (the IBA's duplicate request rules): it is answered
 * with the original value the first execution returned, found by its
 * PSN.  A READ's record keeps its PSNs (@psn, @span of them): a
 * duplicate READ from the middle of that range continues the original
 * responses (MIDDLE..., LAST), one from its start begins them again.
 * The owner (wire_atomic.c) keeps it under rx_lock; these rules are
 * pure.
 */
struct softhca_rc_atm_rec {
	u64 orig;
	u32 psn;
	u32 span;
	bool read;
	bool valid;
};

struct softhca_rc_atm {
	struct softhca_rc_atm_rec *rec;
	u32 n;
	u32 next;
};

void softhca_rc_atm_clear(struct softhca_rc_atm *t);
void softhca_rc_atm_save(struct softhca_rc_atm *t, u32 psn, u64 orig);
bool softhca_rc_atm_find(const struct softhca_rc_atm *t, u32 psn, u64 *orig);
void softhca_rc_rd_save(struct softhca_rc_atm *t, u32 psn, u32 span);
bool softhca_rc_rd_mid(const struct softhca_rc_atm *t, u32 psn);

void softhca_rc_rx_reset(struct softhca_rc_rx *s, u32 psn);
enum softhca_rc_verdict softhca_rc_rx_step(struct softhca_rc_rx *s, u32 mask,
					   u32 psn, u32 paylen, u32 mtu);
void softhca_rc_rx_taken(struct softhca_rc_rx *s, u32 mask);
bool softhca_rc_rx_ask_again(struct softhca_rc_rx *s, u32 psn);
void softhca_rc_rx_rnr(struct softhca_rc_rx *s);
void softhca_rc_rx_read(struct softhca_rc_rx *s, u32 npkts);
u32 softhca_rc_read_span(u32 len, u32 mtu);
u8 softhca_rc_read_op(u32 i, u32 n, bool mid);
enum softhca_rc_rd_verdict softhca_rc_read_resp(u32 first, u32 next,
						u32 expect, u32 psn, u8 opcode,
						u32 paylen, u32 len, u32 mtu,
						bool mid);
bool softhca_psn_in(u32 first, u32 next, u32 psn);
enum softhca_rc_answer softhca_rc_answer(u32 first, u32 next, u32 psn,
					 u8 syndrome);
u32 softhca_rc_acked(u32 first, u32 psn, enum softhca_rc_answer a);

#endif /* SOFTHCA_WIRE_SEQ_H */
