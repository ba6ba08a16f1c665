// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The drop-in libibverbs.so.1 only: libibverbs' provider interface, the
 * IBVERBS_PRIVATE_<n> symbols that provider libraries (libmlx5.so.1,
 * libefa.so.1, ...) and the distribution's provider plugins link against.
 *
 * A program linked with such a library runs its constructor, which
 * registers the provider with verbs_register_driver_<n>(): that is
 * accepted and ignored.  softhca never hands out a device of another
 * provider, so nothing a provider does with a device or context of its own
 * can happen; should one of these calls be reached anyway it fails
 * cleanly: EOPNOTSUPP as the return value (the ibv_cmd_* convention), or
 * NULL/-1 with errno EOPNOTSUPP.
 *
 * The prototypes follow libibverbs' provider header driver.h, which the
 * distribution does not install: the structs are only named here.  <n>
 * is the installed library's, from the generated pabi.h (tools/dropin/
 * gen-map); tools/check-dropin fails when the installed library exports a
 * symbol this file lacks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "internal.h"
#include "pabi.h"

/* The stubs take their callers' arguments and use none of them. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

struct verbs_device_ops;
struct verbs_sysfs_dev;
struct verbs_context_ops;
struct verbs_mr;
struct verbs_xrcd;
struct verbs_qp;
struct verbs_cq;
struct verbs_srq;
struct verbs_dm;
struct verbs_counters;
struct verbs_flow_action;
/* libibverbs' kern-abi.h command buffers: a uverbs header + core command */
struct ibv_get_context;
struct ibv_query_port;
struct ibv_alloc_pd;
struct ibv_open_xrcd;
struct ibv_reg_mr;
struct ibv_rereg_mr;
struct ibv_alloc_mw;
struct ibv_create_cq;
struct ibv_create_cq_ex;
struct ibv_resize_cq;
struct ibv_modify_cq;
struct ibv_create_srq;
struct ibv_create_xsrq;
struct ibv_modify_srq;
struct ibv_query_srq;
struct ibv_create_qp;
struct ibv_create_qp_ex;
struct ibv_open_qp;
struct ibv_query_qp;
struct ibv_modify_qp;
struct ibv_modify_qp_ex;
struct ibv_create_wq;
struct ibv_modify_wq;

/*
 * The head of libibverbs' struct ibv_command_buffer (cmd_ioctl.h): a
 * chain of ioctl attribute arrays a provider links to the core's.
 */
struct shca_cmdbuf {
	struct shca_cmdbuf *next;
	struct ib_uverbs_attr *next_attr;
	struct ib_uverbs_attr *last_attr;
	uint8_t uhw_in_idx;
	uint8_t uhw_out_idx;
	uint8_t uhw_in_headroom_dwords;
	uint8_t uhw_out_headroom_dwords;
	uint8_t flags;
	struct ib_uverbs_ioctl_hdr hdr;
};
#define ibv_command_buffer shca_cmdbuf

#define PABI_NAME2(n) verbs_register_driver_##n
#define PABI_NAME(n) PABI_NAME2(n)
#define verbs_register_driver PABI_NAME(SHCA_IBVERBS_PABI)

/* An ibv_cmd_* call: prototype and a definition answering EOPNOTSUPP. */
#define CMD(name, ...)						\
	int name(__VA_ARGS__);					\
	SHCA_EXPORT int name(__VA_ARGS__)			\
	{							\
		errno = EOPNOTSUPP;				\
		return EOPNOTSUPP;				\
	}

/* ------------------------------------------------------------------ */
/* Registration and contexts                                           */

void verbs_register_driver(const struct verbs_device_ops *ops);
/* A provider's constructor: accepted, and the provider is never used. */
SHCA_EXPORT void verbs_register_driver(const struct verbs_device_ops *ops)
{
}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
SHCA_EXPORT void *_verbs_init_and_alloc_context(struct ibv_device *device,
						int cmd_fd, size_t alloc_size,
						struct verbs_context *context_offset,
						uint32_t driver_id)
{
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_context *verbs_open_device(struct ibv_device *device,
				      void *private_data);
SHCA_EXPORT struct ibv_context *verbs_open_device(struct ibv_device *device,
						  void *private_data)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* No provider context exists for these to act on. */
void verbs_uninit_context(struct verbs_context *context);
SHCA_EXPORT void verbs_uninit_context(struct verbs_context *context)
{
}

void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
SHCA_EXPORT void verbs_set_ops(struct verbs_context *vctx,
			       const struct verbs_context_ops *ops)
{
}

/* A provider's CQ gets the fields every ibv_cq has. */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);
SHCA_EXPORT void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
			       struct ibv_comp_channel *channel,
			       void *cq_context)
{
	cq->context = context;
	cq->channel = channel;
	cq->cq_context = cq_context;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
}

/* Whether destroying objects of a disassociated device succeeds. */
extern bool verbs_allow_disassociate_destroy;
SHCA_EXPORT bool verbs_allow_disassociate_destroy;

/* ------------------------------------------------------------------ */
/* Logging, ioctl commands, sysfs                                      */

/* Providers' messages: to stderr up to the level VERBS_LOG_LEVEL sets. */
void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
SHCA_EXPORT void __verbs_log(struct verbs_context *ctx, uint32_t level,
			     const char *fmt, ...)
{
	const char *env = getenv("VERBS_LOG_LEVEL");
	int saved = errno;
	va_list ap;

	if (!env || strtoul(env, NULL, 0) < level)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	errno = saved;
}

/* The attributes of a command buffer and every buffer linked to it. */
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
				     struct ibv_command_buffer *link);
SHCA_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
						 struct ibv_command_buffer *link)
{
	for (; link; link = link->next)
		num_attrs += (unsigned int)(link->next_attr - link->hdr.attrs);
	return num_attrs;
}

CMD(execute_ioctl, struct ibv_context *context, struct ibv_command_buffer *cmd)

int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));
SHCA_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
					  struct verbs_sysfs_dev *sysfs_dev,
					  const char *fnfmt, ...)
{
	errno = EOPNOTSUPP;
	return -1;
}

/* ------------------------------------------------------------------ */
/* The uverbs command helpers                                          */

CMD(ibv_cmd_get_context, struct verbs_context *context,
    struct ibv_get_context *cmd, size_t cmd_size,
    struct ib_uverbs_get_context_resp *resp, size_t resp_size)
CMD(ibv_cmd_query_context, struct ibv_context *ctx,
    struct ibv_command_buffer *driver)
CMD(ibv_cmd_query_device_any, struct ibv_context *context,
    const struct ibv_query_device_ex_input *input,
    struct ibv_device_attr_ex *attr, size_t attr_size,
    struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size)
CMD(ibv_cmd_query_port, struct ibv_context *context, uint8_t port_num,
    struct ibv_port_attr *port_attr, struct ibv_query_port *cmd,
    size_t cmd_size)
CMD(ibv_cmd_alloc_pd, struct ibv_context *context, struct ibv_pd *pd,
    struct ibv_alloc_pd *cmd, size_t cmd_size,
    struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
CMD(ibv_cmd_dealloc_pd, struct ibv_pd *pd)
CMD(ibv_cmd_open_xrcd, struct ibv_context *context, struct verbs_xrcd *xrcd,
    int vxrcd_size, struct ibv_xrcd_init_attr *attr,
    struct ibv_open_xrcd *cmd, size_t cmd_size,
    struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size)
CMD(ibv_cmd_close_xrcd, struct verbs_xrcd *xrcd)
CMD(ibv_cmd_reg_mr, struct ibv_pd *pd, void *addr, size_t length,
    uint64_t hca_va, int access, struct verbs_mr *vmr,
    struct ibv_reg_mr *cmd, size_t cmd_size,
    struct ib_uverbs_reg_mr_resp *resp, size_t resp_size)
CMD(ibv_cmd_rereg_mr, struct verbs_mr *vmr, uint32_t flags, void *addr,
    size_t length, uint64_t hca_va, int access, struct ibv_pd *pd,
    struct ibv_rereg_mr *cmd, size_t cmd_sz,
    struct ib_uverbs_rereg_mr_resp *resp, size_t resp_sz)
CMD(ibv_cmd_dereg_mr, struct verbs_mr *vmr)
CMD(ibv_cmd_query_mr, struct ibv_pd *pd, struct verbs_mr *vmr,
    uint32_t mr_handle)
CMD(ibv_cmd_advise_mr, struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
CMD(ibv_cmd_reg_dmabuf_mr, struct ibv_pd *pd, uint64_t offset, size_t length,
    uint64_t iova, int fd, int access, struct verbs_mr *vmr)
CMD(ibv_cmd_alloc_mw, struct ibv_pd *pd, enum ibv_mw_type type,
    struct ibv_mw *mw, struct ibv_alloc_mw *cmd, size_t cmd_size,
    struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size)
CMD(ibv_cmd_dealloc_mw, struct ibv_mw *mw)
CMD(ibv_cmd_create_cq, struct ibv_context *context, int cqe,
    struct ibv_comp_channel *channel, int comp_vector, struct ibv_cq *cq,
    struct ibv_create_cq *cmd, size_t cmd_size,
    struct ib_uverbs_create_cq_resp *resp, size_t resp_size)
CMD(ibv_cmd_create_cq_ex, struct ibv_context *context,
    const struct ibv_cq_init_attr_ex *cq_attr, struct verbs_cq *cq,
    struct ibv_create_cq_ex *cmd, size_t cmd_size,
    struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
    uint32_t cmd_flags)
CMD(ibv_cmd_req_notify_cq, struct ibv_cq *cq, int solicited_only)
CMD(ibv_cmd_resize_cq, struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
    size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
    size_t resp_size)
CMD(ibv_cmd_destroy_cq, struct ibv_cq *cq)
CMD(ibv_cmd_modify_cq, struct ibv_cq *cq, struct ibv_modify_cq_attr *attr,
    struct ibv_modify_cq *cmd, size_t cmd_size)
CMD(ibv_cmd_create_srq, struct ibv_pd *pd, struct ibv_srq *srq,
    struct ibv_srq_init_attr *attr, struct ibv_create_srq *cmd,
    size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
    size_t resp_size)
CMD(ibv_cmd_create_srq_ex, struct ibv_context *context, struct verbs_srq *srq,
    struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd,
    size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
    size_t resp_size)
CMD(ibv_cmd_modify_srq, struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
    int srq_attr_mask, struct ibv_modify_srq *cmd, size_t cmd_size)
CMD(ibv_cmd_query_srq, struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
    struct ibv_query_srq *cmd, size_t cmd_size)
CMD(ibv_cmd_destroy_srq, struct ibv_srq *srq)
CMD(ibv_cmd_create_qp, struct ibv_pd *pd, struct ibv_qp *qp,
    struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
    size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
    size_t resp_size)
CMD(ibv_cmd_create_qp_ex, struct ibv_context *context, struct verbs_qp *qp,
    struct ibv_qp_init_attr_ex *attr_ex, struct ibv_create_qp *cmd,
    size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
    size_t resp_size)
CMD(ibv_cmd_create_qp_ex2, struct ibv_context *context, struct verbs_qp *qp,
    struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd,
    size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
    size_t resp_size)
CMD(ibv_cmd_open_qp, struct ibv_context *context, struct verbs_qp *qp,
    int vqp_sz, struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd,
    size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
    size_t resp_size)
CMD(ibv_cmd_query_qp, struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
    int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
    struct ibv_query_qp *cmd, size_t cmd_size)
CMD(ibv_cmd_modify_qp, struct ibv_qp *qp, struct ibv_qp_attr *attr,
    int attr_mask, struct ibv_modify_qp *cmd, size_t cmd_size)
CMD(ibv_cmd_modify_qp_ex, struct ibv_qp *qp, struct ibv_qp_attr *attr,
    int attr_mask, struct ibv_modify_qp_ex *cmd, size_t cmd_size,
    struct ib_uverbs_ex_modify_qp_resp *resp, size_t resp_size)
CMD(ibv_cmd_destroy_qp, struct ibv_qp *qp)
CMD(ibv_cmd_post_send, struct ibv_qp *ibqp, struct ibv_send_wr *wr,
    struct ibv_send_wr **bad_wr)
CMD(ibv_cmd_post_recv, struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
    struct ibv_recv_wr **bad_wr)
CMD(ibv_cmd_post_srq_recv, struct ibv_srq *srq, struct ibv_recv_wr *wr,
    struct ibv_recv_wr **bad_wr)
CMD(ibv_cmd_create_ah, struct ibv_pd *pd, struct ibv_ah *ah,
    struct ibv_ah_attr *attr, struct ib_uverbs_create_ah_resp *resp,
    size_t resp_size)
CMD(ibv_cmd_destroy_ah, struct ibv_ah *ah)
CMD(ibv_cmd_attach_mcast, struct ibv_qp *qp, const union ibv_gid *gid,
    uint16_t lid)
CMD(ibv_cmd_detach_mcast, struct ibv_qp *qp, const union ibv_gid *gid,
    uint16_t lid)
CMD(ibv_cmd_create_flow, struct ibv_qp *qp, struct ibv_flow *flow_id,
    struct ibv_flow_attr *flow_attr, void *ucmd, size_t ucmd_size)
CMD(ibv_cmd_destroy_flow, struct ibv_flow *flow_id)
CMD(ibv_cmd_create_flow_action_esp, struct ibv_context *ctx,
    struct ibv_flow_action_esp_attr *attr,
    struct verbs_flow_action *flow_action,
    struct ibv_command_buffer *driver)
CMD(ibv_cmd_modify_flow_action_esp, struct verbs_flow_action *flow_action,
    struct ibv_flow_action_esp_attr *attr,
    struct ibv_command_buffer *driver)
CMD(ibv_cmd_destroy_flow_action, struct verbs_flow_action *action)
CMD(ibv_cmd_create_wq, struct ibv_context *context,
    struct ibv_wq_init_attr *wq_init_attr, struct ibv_wq *wq,
    struct ibv_create_wq *cmd, size_t cmd_size,
    struct ib_uverbs_ex_create_wq_resp *resp, size_t resp_size)
CMD(ibv_cmd_modify_wq, struct ibv_wq *wq, struct ibv_wq_attr *attr,
    struct ibv_modify_wq *cmd, size_t cmd_size)
CMD(ibv_cmd_destroy_wq, struct ibv_wq *wq)
CMD(ibv_cmd_create_rwq_ind_table, struct ibv_context *context,
    struct ibv_rwq_ind_table_init_attr *init_attr,
    struct ibv_rwq_ind_table *rwq_ind_table,
    struct ib_uverbs_ex_create_rwq_ind_table_resp *resp, size_t resp_size)
CMD(ibv_cmd_destroy_rwq_ind_table, struct ibv_rwq_ind_table *rwq_ind_table)
CMD(ibv_cmd_create_counters, struct ibv_context *context,
    struct ibv_counters_init_attr *init_attr,
    struct verbs_counters *vcounters, struct ibv_command_buffer *link)
CMD(ibv_cmd_destroy_counters, struct verbs_counters *vcounters)
CMD(ibv_cmd_read_counters, struct verbs_counters *vcounters,
    uint64_t *counters_value, uint32_t ncounters, uint32_t flags,
    struct ibv_command_buffer *link)
CMD(ibv_cmd_alloc_dm, struct ibv_context *ctx,
    const struct ibv_alloc_dm_attr *dm_attr, struct verbs_dm *dm,
    struct ibv_command_buffer *link)
CMD(ibv_cmd_free_dm, struct verbs_dm *dm)
CMD(ibv_cmd_reg_dm_mr, struct ibv_pd *pd, struct verbs_dm *dm,
    uint64_t offset, size_t length, unsigned int access,
    struct verbs_mr *vmr, struct ibv_command_buffer *link)

/* ibv_cmd_poll_cq answers like a poll: -1 with errno on failure. */
int ibv_cmd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
SHCA_EXPORT int ibv_cmd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
	errno = EOPNOTSUPP;
	return -1;
}
