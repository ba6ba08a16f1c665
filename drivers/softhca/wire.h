/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca: what the files of the RoCEv2 transport share.
 *
 *   wire.c       the transport's entry points: send (UD and the
 *                dispatch), receive (checks common to every packet,
 *                UD, the dispatch), building one packet
 *   wire_conn.c  connected QPs, sending: a message as path-MTU packets,
 *                and the path taken from the QP's attributes
 *   wire_resp.c  connected QPs, receiving: PSN order, the message in
 *                progress, delivery to the responder (resp.c)
 *   wire_seq.c   the sequencing rules themselves (pure)
 */
#ifndef SOFTHCA_WIRE_H
#define SOFTHCA_WIRE_H

#include "engine.h"
#include "net.h"
#include "roce_hdr.h"

/* wire.c */
int softhca_wire_xmit(struct softhca_dev *sdev,
		      const struct softhca_roce_fields *f,
		      struct softhca_cursor *data, u32 len,
		      const struct softhca_path *path);
void softhca_wire_gids(const struct sk_buff *skb, union ib_gid *sgid,
		       union ib_gid *dgid);

/* wire_conn.c */
enum softhca_ack softhca_wire_send_uc(struct softhca_qp *qp,
				      struct softhca_dest *dest,
				      struct softhca_msg *msg);

/* wire_resp.c */
void softhca_wire_rcv_uc(struct softhca_dev *sdev, struct sk_buff *skb,
			 const struct softhca_roce_pkt *pkt);

#endif /* SOFTHCA_WIRE_H */
