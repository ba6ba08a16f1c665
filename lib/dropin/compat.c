// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The drop-in libibverbs.so.1 only: the compatibility entry points, which
 * the distribution's libibverbs exports beside the default ones at a
 * non-default version (objdump -T shows them in parentheses):
 *
 *   name@IBVERBS_1.0     the libibverbs 1.0 ABI (2005-2006), whose
 *                        devices, contexts and objects were other structs
 *                        (struct ibv_device_1_0, ibv_context_1_0, ...);
 *                        programs built since bind to name@@IBVERBS_1.1,
 *                        which is the function in lib/.
 *   ibv_register_driver@IBVERBS_1.1
 *                        the pre-2018 provider registration.
 *
 * softhca does not emulate the 1.0 structs.  A 1.0 program still loads
 * and runs: its device list is empty (NULL, errno EOPNOTSUPP), so it can
 * never hold a 1.0 object, and every other 1.0 call fails the way its man
 * page says a call fails (NULL or -1 with errno, or the errno value), or
 * does nothing when it returns nothing.  Old providers' registrations are
 * ignored, as libibverbs does.
 *
 * Each definition is bound to its versioned name with .symver; the plain
 * shca_v1_0_* names are local by the generated version script.
 */
#include <errno.h>
#include <stdint.h>
#include <endian.h>

#include "internal.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define V1_0(name) \
	__asm__(".symver shca_v1_0_" #name ", " #name "@IBVERBS_1.0")

/* NULL with errno: the calls that return an object. */
#define V1_0_PTR(name, ...)						\
	V1_0(name);							\
	void *shca_v1_0_##name(__VA_ARGS__);				\
	SHCA_EXPORT void *shca_v1_0_##name(__VA_ARGS__)			\
	{								\
		errno = EOPNOTSUPP;					\
		return NULL;						\
	}

/* The errno value: the calls man pages document that way. */
#define V1_0_ERR(name, ...)						\
	V1_0(name);							\
	int shca_v1_0_##name(__VA_ARGS__);				\
	SHCA_EXPORT int shca_v1_0_##name(__VA_ARGS__)			\
	{								\
		errno = EOPNOTSUPP;					\
		return EOPNOTSUPP;					\
	}

/* -1 with errno: the event and table calls. */
#define V1_0_NEG(name, ...)						\
	V1_0(name);							\
	int shca_v1_0_##name(__VA_ARGS__);				\
	SHCA_EXPORT int shca_v1_0_##name(__VA_ARGS__)			\
	{								\
		errno = EOPNOTSUPP;					\
		return -1;						\
	}

/* Nothing to do: the calls that return nothing. */
#define V1_0_VOID(name, ...)						\
	V1_0(name);							\
	void shca_v1_0_##name(__VA_ARGS__);				\
	SHCA_EXPORT void shca_v1_0_##name(__VA_ARGS__)			\
	{								\
	}

/* devices and contexts */
V1_0_PTR(ibv_get_device_list, int *num_devices)
V1_0_VOID(ibv_free_device_list, void *list)
V1_0_PTR(ibv_get_device_name, void *device)
V1_0(ibv_get_device_guid);
__be64 shca_v1_0_ibv_get_device_guid(void *device);
SHCA_EXPORT __be64 shca_v1_0_ibv_get_device_guid(void *device)
{
	errno = EOPNOTSUPP;
	return 0;
}
V1_0_PTR(ibv_open_device, void *device)
V1_0_ERR(ibv_close_device, void *context)
V1_0_NEG(ibv_get_async_event, void *context, struct ibv_async_event *event)
V1_0_VOID(ibv_ack_async_event, struct ibv_async_event *event)
V1_0_ERR(ibv_query_device, void *context, struct ibv_device_attr *attr)
V1_0_ERR(ibv_query_port, void *context, uint8_t port_num,
	 struct ibv_port_attr *attr)
V1_0_NEG(ibv_query_gid, void *context, uint8_t port_num, int index,
	 union ibv_gid *gid)
V1_0_NEG(ibv_query_pkey, void *context, uint8_t port_num, int index,
	 __be16 *pkey)

/* objects */
V1_0_PTR(ibv_alloc_pd, void *context)
V1_0_ERR(ibv_dealloc_pd, void *pd)
V1_0_PTR(ibv_reg_mr, void *pd, void *addr, size_t length, int access)
V1_0_ERR(ibv_dereg_mr, void *mr)
V1_0_PTR(ibv_create_cq, void *context, int cqe, void *cq_context,
	 struct ibv_comp_channel *channel, int comp_vector)
V1_0_ERR(ibv_resize_cq, void *cq, int cqe)
V1_0_ERR(ibv_destroy_cq, void *cq)
V1_0_NEG(ibv_get_cq_event, struct ibv_comp_channel *channel, void **cq,
	 void **cq_context)
V1_0_VOID(ibv_ack_cq_events, void *cq, unsigned int nevents)
V1_0_PTR(ibv_create_srq, void *pd, struct ibv_srq_init_attr *attr)
V1_0_ERR(ibv_modify_srq, void *srq, struct ibv_srq_attr *attr, int mask)
V1_0_ERR(ibv_query_srq, void *srq, struct ibv_srq_attr *attr)
V1_0_ERR(ibv_destroy_srq, void *srq)
V1_0_PTR(ibv_create_qp, void *pd, void *attr)
V1_0_ERR(ibv_query_qp, void *qp, struct ibv_qp_attr *attr, int mask,
	 void *init_attr)
V1_0_ERR(ibv_modify_qp, void *qp, struct ibv_qp_attr *attr, int mask)
V1_0_ERR(ibv_destroy_qp, void *qp)
V1_0_PTR(ibv_create_ah, void *pd, struct ibv_ah_attr *attr)
V1_0_ERR(ibv_destroy_ah, void *ah)
V1_0_ERR(ibv_attach_mcast, void *qp, const union ibv_gid *gid, uint16_t lid)
V1_0_ERR(ibv_detach_mcast, void *qp, const union ibv_gid *gid, uint16_t lid)

/* The old provider registration: ignored. */
__asm__(".symver shca_register_driver_1_1, ibv_register_driver@IBVERBS_1.1");
void shca_register_driver_1_1(const char *name, void *init_func);
SHCA_EXPORT void shca_register_driver_1_1(const char *name, void *init_func)
{
}
