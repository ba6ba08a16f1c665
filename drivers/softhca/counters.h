/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: the port's counters (counters.c), as `rdma statistic show`
 * and /sys/class/infiniband/DEV/ports/1/hw_counters/ show them.
 *
 * Per-CPU, so that counting costs the data path no shared cache line;
 * summed when read.  Bumped from the poller threads and from softirq:
 * this_cpu_inc() is safe from both.
 */
#ifndef SOFTHCA_COUNTERS_H
#define SOFTHCA_COUNTERS_H

#include <linux/percpu.h>

enum softhca_counter {
	SOFTHCA_CNT_TX_PACKETS,		/* RoCEv2 packets handed to IP */
	SOFTHCA_CNT_TX_BYTES,		/* their bytes from BTH to ICRC */
	SOFTHCA_CNT_TX_DROPS,		/* not sent: no route, no memory */
	SOFTHCA_CNT_RX_PACKETS,		/* RoCEv2 packets taken */
	SOFTHCA_CNT_RX_BYTES,		/* their bytes from BTH to ICRC */
	SOFTHCA_CNT_RX_BAD_ICRC,	/* dropped: ICRC mismatch */
	SOFTHCA_CNT_RX_MALFORMED,	/* dropped: headers the parser refused */
	SOFTHCA_CNT_RX_BAD_PKEY,	/* dropped: not the default partition */
	SOFTHCA_CNT_RX_NO_QP,		/* dropped: no such QP, or wrong type */
	/* dropped: a transport not on the wire (none left since XRC) */
	SOFTHCA_CNT_RX_UNSUPPORTED,
	/* dropped: for a connected QP, not from its peer */
	SOFTHCA_CNT_RX_BAD_PEER,
	/* UC: PSN jumps, each a message (or more) lost; RC: gaps NAKed */
	SOFTHCA_CNT_RX_PSN_GAPS,
	/*
	 * UC: dropped: the rest of a lost message, out of sequence, bad
	 * size; RC: dropped behind a NAK
	 */
	SOFTHCA_CNT_RX_SEQ_DROPS,
	SOFTHCA_CNT_TX_RETRANSMITS,	/* RC: packets sent again */
	SOFTHCA_CNT_ACK_TIMEOUTS,	/* RC: chunks not answered in time */
	SOFTHCA_CNT_RX_ACKS,		/* RC: ACKs taken */
	SOFTHCA_CNT_RX_NAKS_RNR,	/* RC: RNR NAKs taken */
	SOFTHCA_CNT_RX_NAKS_SEQ,	/* RC: PSN sequence NAKs taken */
	SOFTHCA_CNT_RX_NAKS_OTHER,	/* RC: NAKs that end a WQE in error */
	SOFTHCA_CNT_RX_STALE_ACKS,	/* RC: answers to nothing in flight */
	SOFTHCA_CNT_TX_ACKS,		/* RC: ACKs sent */
	SOFTHCA_CNT_TX_NAKS,		/* RC: NAKs sent (RNR, sequence, error) */
	SOFTHCA_CNT_RX_DUPLICATES,	/* RC: requests received again */
	SOFTHCA_CNT_TX_READ_RESPS,	/* RC: READ RESPONSE packets sent */
	SOFTHCA_CNT_RX_READ_RESPS,	/* RC: READ RESPONSE packets taken */
	SOFTHCA_CNT_RX_READ_HELD,	/* RC: ... of them, held ahead of a gap */
	/*
	 * RC: READs asked again for their rest when their responses stopped
	 * with some missing (read_reorder_us), not at the local ACK timeout
	 */
	SOFTHCA_CNT_READ_STALLS,
	/*
	 * RC: READs nothing answered within read_reorder_us, sent again once
	 * early (no retry), not at the local ACK timeout
	 */
	SOFTHCA_CNT_READ_PROBES,
	/*
	 * RC: what was in flight sent again once early (no retry) when its
	 * answer was a probe timeout late (wire_tail.c)
	 */
	SOFTHCA_CNT_TAIL_PROBES,
	/*
	 * RC: of tx_naks, sequence NAKs sent again for a packet that asked
	 * again behind the gap (the NAK was lost)
	 */
	SOFTHCA_CNT_TX_NAKS_AGAIN,
	SOFTHCA_CNT_TX_ATOMICS,		/* RC: atomic requests sent (first time) */
	SOFTHCA_CNT_RX_ATOMICS,		/* RC: atomic requests carried out */
	SOFTHCA_CNT_RX_DUP_ATOMICS,	/* RC: duplicates answered from a saved
					 * result, not carried out again
					 */
	/* XRC: refused: the XRCETH names no XRC SRQ of the target's domain */
	SOFTHCA_CNT_RX_BAD_XRC_SRQ,
	/*
	 * dropped: for a connected QP not receiving (RESET, INIT, ERR): a
	 * peer that reached RTS before this QP reached RTR, or one still
	 * sending after this QP failed.  Apart from rx_bad_peer, which
	 * counts packets from elsewhere, so that a test can tell a race of
	 * the two ends' state changes from misdirected traffic.
	 */
	SOFTHCA_CNT_RX_QP_NOT_READY,
	/*
	 * RC: messages sent behind another, answered with it (a train,
	 * req_train.c); sent again, they count in tx_retransmits
	 */
	SOFTHCA_CNT_TX_TRAIN_MSGS,
	/*
	 * RC: messages of a train completed on a partial ACK, before the
	 * answer to the whole train came (req_train.c: the window slid)
	 */
	SOFTHCA_CNT_TX_TRAIN_EARLY,
	/*
	 * RC: chunks of a long SEND or WRITE sent while the chunk before
	 * them waited for its answer (req_train.c: two in flight)
	 */
	SOFTHCA_CNT_TX_CHUNKS_AHEAD,
	/*
	 * RC: messages sent without AckReq (an unsignaled WQE's, wire_rc.c
	 * "Quiet messages"); a quiet train's asks for its answer once its
	 * wait ran out (ack_quiet_us), and when a WQE could not join it
	 * (neither while an answer asked for is still coming); quiet
	 * waits that ran out when the train could move on (WQEs posted
	 * behind it, a partial answer), which it did instead of asking
	 * (req_train.c)
	 */
	SOFTHCA_CNT_TX_QUIET,
	SOFTHCA_CNT_TX_QUIET_EXPIRED,
	SOFTHCA_CNT_TX_QUIET_ASKS,
	SOFTHCA_CNT_TX_QUIET_LATE,
	/* skbs that carried several packets (net_batch.c: UDP GSO) */
	SOFTHCA_CNT_TX_GSO,
	/* those of them that were frag lists (net_batch.c: by the netdev) */
	SOFTHCA_CNT_TX_GSO_LISTS,
	/*
	 * RC: answers taken in the receive softirq, for a QP no poller
	 * spun on (softhca_engine_answer())
	 */
	SOFTHCA_CNT_RX_ACKS_AT_ONCE,
	/*
	 * RC: READ answers ended before their last response: the fast-reg
	 * MR's key or the window was invalidated meanwhile (wire_rc_resp.c)
	 */
	SOFTHCA_CNT_TX_READ_REVOKED,
	SOFTHCA_CNT_NUM
};

struct softhca_counters {
	u64 v[SOFTHCA_CNT_NUM];
};

/* Count one event / @n units on this CPU (any context). */
#define softhca_count(sdev, c)		this_cpu_inc((sdev)->counters->v[c])
#define softhca_count_add(sdev, c, n)	this_cpu_add((sdev)->counters->v[c], n)

struct softhca_dev;
struct ib_device;
struct rdma_hw_stats;

int softhca_counters_init(struct softhca_dev *sdev);
void softhca_counters_free(struct softhca_dev *sdev);
struct rdma_hw_stats *softhca_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port);
int softhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index);

#endif /* SOFTHCA_COUNTERS_H */
