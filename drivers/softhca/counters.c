// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: the port's counters (see counters.h).
 */
#include <rdma/ib_verbs.h>

#include "softhca.h"
#include "counters.h"

/* The names `rdma statistic show` prints, in enum softhca_counter order. */
static const struct rdma_stat_desc softhca_counter_descs[] = {
	[SOFTHCA_CNT_TX_PACKETS].name = "tx_packets",
	[SOFTHCA_CNT_TX_BYTES].name = "tx_bytes",
	[SOFTHCA_CNT_TX_DROPS].name = "tx_drops",
	[SOFTHCA_CNT_RX_PACKETS].name = "rx_packets",
	[SOFTHCA_CNT_RX_BYTES].name = "rx_bytes",
	[SOFTHCA_CNT_RX_BAD_ICRC].name = "rx_bad_icrc",
	[SOFTHCA_CNT_RX_MALFORMED].name = "rx_malformed",
	[SOFTHCA_CNT_RX_BAD_PKEY].name = "rx_bad_pkey",
	[SOFTHCA_CNT_RX_NO_QP].name = "rx_no_qp",
	[SOFTHCA_CNT_RX_UNSUPPORTED].name = "rx_unsupported",
	[SOFTHCA_CNT_RX_BAD_PEER].name = "rx_bad_peer",
	[SOFTHCA_CNT_RX_PSN_GAPS].name = "rx_psn_gaps",
	[SOFTHCA_CNT_RX_SEQ_DROPS].name = "rx_seq_drops",
	[SOFTHCA_CNT_TX_RETRANSMITS].name = "tx_retransmits",
	[SOFTHCA_CNT_ACK_TIMEOUTS].name = "ack_timeouts",
	[SOFTHCA_CNT_RX_ACKS].name = "rx_acks",
	[SOFTHCA_CNT_RX_NAKS_RNR].name = "rx_naks_rnr",
	[SOFTHCA_CNT_RX_NAKS_SEQ].name = "rx_naks_seq",
	[SOFTHCA_CNT_RX_NAKS_OTHER].name = "rx_naks_other",
	[SOFTHCA_CNT_RX_STALE_ACKS].name = "rx_stale_acks",
	[SOFTHCA_CNT_TX_ACKS].name = "tx_acks",
	[SOFTHCA_CNT_TX_NAKS].name = "tx_naks",
	[SOFTHCA_CNT_RX_DUPLICATES].name = "rx_duplicates",
	[SOFTHCA_CNT_TX_READ_RESPS].name = "tx_read_resps",
	[SOFTHCA_CNT_RX_READ_RESPS].name = "rx_read_resps",
	[SOFTHCA_CNT_RX_READ_HELD].name = "rx_read_held",
	[SOFTHCA_CNT_READ_STALLS].name = "read_stalls",
	[SOFTHCA_CNT_READ_PROBES].name = "read_probes",
	[SOFTHCA_CNT_TAIL_PROBES].name = "tail_probes",
	[SOFTHCA_CNT_TX_NAKS_AGAIN].name = "tx_naks_again",
	[SOFTHCA_CNT_TX_ATOMICS].name = "tx_atomics",
	[SOFTHCA_CNT_RX_ATOMICS].name = "rx_atomics",
	[SOFTHCA_CNT_RX_DUP_ATOMICS].name = "rx_dup_atomics",
	[SOFTHCA_CNT_RX_BAD_XRC_SRQ].name = "rx_bad_xrc_srq",
	[SOFTHCA_CNT_RX_QP_NOT_READY].name = "rx_qp_not_ready",
	[SOFTHCA_CNT_TX_TRAIN_MSGS].name = "tx_train_msgs",
	[SOFTHCA_CNT_TX_TRAIN_EARLY].name = "tx_train_early",
	[SOFTHCA_CNT_TX_CHUNKS_AHEAD].name = "tx_chunks_ahead",
	[SOFTHCA_CNT_TX_QUIET].name = "tx_quiet_msgs",
	[SOFTHCA_CNT_TX_QUIET_EXPIRED].name = "tx_quiet_expired",
	[SOFTHCA_CNT_TX_QUIET_ASKS].name = "tx_quiet_asks",
	[SOFTHCA_CNT_TX_QUIET_LATE].name = "tx_quiet_late",
	[SOFTHCA_CNT_TX_GSO].name = "tx_gso_skbs",
	[SOFTHCA_CNT_TX_GSO_LISTS].name = "tx_gso_lists",
	[SOFTHCA_CNT_RX_ACKS_AT_ONCE].name = "rx_acks_at_once",
	[SOFTHCA_CNT_TX_READ_REVOKED].name = "tx_read_revoked",
};

static_assert(ARRAY_SIZE(softhca_counter_descs) == SOFTHCA_CNT_NUM);

int softhca_counters_init(struct softhca_dev *sdev)
{
	sdev->counters = alloc_percpu(struct softhca_counters);
	return sdev->counters ? 0 : -ENOMEM;
}

void softhca_counters_free(struct softhca_dev *sdev)
{
	free_percpu(sdev->counters);
	sdev->counters = NULL;
}

struct rdma_hw_stats *softhca_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port)
{
	return rdma_alloc_hw_stats_struct(softhca_counter_descs,
					  SOFTHCA_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int softhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index)
{
	struct softhca_dev *sdev = to_sdev(ibdev);
	int cpu, i;

	if (!port || !stats)
		return -EINVAL;
	for (i = 0; i < SOFTHCA_CNT_NUM; i++)
		stats->value[i] = 0;
	for_each_possible_cpu(cpu) {
		const struct softhca_counters *c = per_cpu_ptr(sdev->counters,
							       cpu);

		for (i = 0; i < SOFTHCA_CNT_NUM; i++)
			stats->value[i] += READ_ONCE(c->v[i]);
	}
	return SOFTHCA_CNT_NUM;
}
