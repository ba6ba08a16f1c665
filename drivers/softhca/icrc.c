// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which CRC-32 sums the ICRC's bulk (payload and pad).
 *
 * The ICRC is the IEEE 802.3 CRC-32, which the kernel computes two ways:
 *
 *   table   crc32_le() (lib/crc32.c): slice-by-8 tables, no setup, any
 *           length;
 *   shash   the crypto API's "crc32" (crc32-pclmul on x86 with
 *           PCLMULQDQ: 64 bytes per step folded by carry-less multiplies;
 *           runs under 64 bytes it hands to crc32_le() itself).
 *
 * Which is faster depends on the CPU.  On hardware PCLMULQDQ is the fast
 * one; under QEMU's TCG, which emulates the instruction, the shash took
 * twice the time of the tables (2026-11-27, 4 KiB buffers).  rxe always
 * takes the shash.  So the module times both when it loads and takes the
 * faster, after checking that they agree (a wrong CRC would drop every
 * packet at the peer); the module parameter icrc overrides the choice
 * ("table", "shash", "auto") and, read, says what was chosen and the
 * times measured.  The running value is crc32_le()'s either way (the
 * shash's context is that value, as rxe uses it), so the two may even
 * alternate within one packet while the choice changes.
 *
 * Only the bulk goes through here (and the extension headers behind the
 * BTH, with any payload contiguous to them): the masked copies of the IP
 * and UDP headers and the BTH (softhca_icrc_hdrs()) stay with crc32_le(),
 * which the shash would call for runs that short anyway.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "roce_hdr.h"

enum softhca_icrc_mode { SOFTHCA_ICRC_AUTO, SOFTHCA_ICRC_TABLE, SOFTHCA_ICRC_SHASH };

static const char * const softhca_icrc_names[] = {
	[SOFTHCA_ICRC_AUTO] = "auto",
	[SOFTHCA_ICRC_TABLE] = "table",
	[SOFTHCA_ICRC_SHASH] = "shash",
};

/* The bytes each implementation is timed on, and the rounds (best of). */
#define SOFTHCA_ICRC_TIME_LEN		4096
#define SOFTHCA_ICRC_TIME_ROUNDS	16

static DEFINE_STATIC_KEY_FALSE(softhca_icrc_shash_on);
static DEFINE_MUTEX(softhca_icrc_lock);	/* the fields below */
static struct crypto_shash *softhca_icrc_tfm;	/* NULL: no usable shash */
static enum softhca_icrc_mode softhca_icrc_want;	/* the parameter */
static bool softhca_icrc_ready;		/* softhca_icrc_init() ran */
static u64 softhca_icrc_ns[3];		/* per 4 KiB: [TABLE], [SHASH] */

/**
 * softhca_crc32_shash - softhca_crc32() by the crypto API's crc32
 * @tfm: a "crc32" shash
 * @crc: the running value (crc32_le()'s), which is the shash's context
 *	(as rxe uses it)
 * @p: the bytes
 * @len: how many
 *
 * KUnit compares it with the tables, on a shash of its own (its suites
 * run before the module's init).
 * Return: the running value after @p.
 */
u32 softhca_crc32_shash(struct crypto_shash *tfm, u32 crc, const void *p,
			u32 len)
{
	SHASH_DESC_ON_STACK(desc, tfm);

	desc->tfm = tfm;
	*(u32 *)shash_desc_ctx(desc) = crc;
	/* crc32's update cannot fail; the tables stand in if it ever did */
	if (crypto_shash_update(desc, p, len))
		return crc32_le(crc, p, len);
	return *(u32 *)shash_desc_ctx(desc);
}

/**
 * softhca_crc32 - go on with a CRC-32 (crc32_le()'s running value)
 * @crc: the running value
 * @p: the bytes
 * @len: how many
 *
 * Context: any; the shash may use the FPU, which it checks itself
 * (crypto_simd_usable(); it falls back to the tables where it cannot).
 * Return: the running value after @p.
 */
u32 softhca_crc32(u32 crc, const void *p, u32 len)
{
	if (static_branch_unlikely(&softhca_icrc_shash_on))
		return softhca_crc32_shash(softhca_icrc_tfm, crc, p, len);
	return crc32_le(crc, p, len);
}

/*
 * The best of a few rounds of each implementation over @buf, in ns per
 * SOFTHCA_ICRC_TIME_LEN bytes; false if the two disagree on its CRC.
 */
static bool softhca_icrc_time(const u8 *buf)
{
	u64 best[3] = { U64_MAX, U64_MAX, U64_MAX };
	u32 a = 0, b = 0;
	int i, m;

	for (i = 0; i < SOFTHCA_ICRC_TIME_ROUNDS; i++) {
		for (m = SOFTHCA_ICRC_TABLE; m <= SOFTHCA_ICRC_SHASH; m++) {
			u64 t = ktime_get_ns();

			if (m == SOFTHCA_ICRC_TABLE)
				a = crc32_le(~0U, buf, SOFTHCA_ICRC_TIME_LEN);
			else
				b = softhca_crc32_shash(softhca_icrc_tfm, ~0U,
							buf, SOFTHCA_ICRC_TIME_LEN);
			best[m] = min(best[m], ktime_get_ns() - t);
		}
		if (a != b)
			return false;
		cond_resched();
	}
	memcpy(softhca_icrc_ns, best, sizeof(best));
	return true;
}

/* Turn the shash on or off for the wanted mode.  Context: the mutex. */
static void softhca_icrc_apply(void)
{
	bool shash = softhca_icrc_tfm &&
		     (softhca_icrc_want == SOFTHCA_ICRC_SHASH ||
		      (softhca_icrc_want == SOFTHCA_ICRC_AUTO &&
		       softhca_icrc_ns[SOFTHCA_ICRC_SHASH] <
		       softhca_icrc_ns[SOFTHCA_ICRC_TABLE]));

	if (shash)
		static_branch_enable(&softhca_icrc_shash_on);
	else
		static_branch_disable(&softhca_icrc_shash_on);
}

/**
 * softhca_icrc_init - time both implementations and choose (module load)
 *
 * Never fails: without a usable "crc32" shash the tables serve.
 */
void softhca_icrc_init(void)
{
	struct crypto_shash *tfm;
	u8 *buf;

	buf = kmalloc(SOFTHCA_ICRC_TIME_LEN, GFP_KERNEL);
	tfm = crypto_alloc_shash("crc32", 0, 0);
	mutex_lock(&softhca_icrc_lock);
	if (!IS_ERR(tfm) && buf) {
		get_random_bytes(buf, SOFTHCA_ICRC_TIME_LEN);
		softhca_icrc_tfm = tfm;
		if (!softhca_icrc_time(buf)) {
			pr_err("softhca: %s and crc32_le() disagree; using crc32_le()\n",
			       crypto_shash_driver_name(tfm));
			softhca_icrc_tfm = NULL;
		}
	}
	if (!softhca_icrc_tfm && !IS_ERR(tfm))
		crypto_free_shash(tfm);
	if (!softhca_icrc_tfm && softhca_icrc_want == SOFTHCA_ICRC_SHASH)
		pr_warn("softhca: icrc=shash, but no usable crc32 shash: crc32_le() sums the ICRC\n");
	softhca_icrc_ready = true;
	softhca_icrc_apply();
	mutex_unlock(&softhca_icrc_lock);
	kfree(buf);
}

/* softhca_icrc_exit - back to the tables, the shash freed (module exit) */
void softhca_icrc_exit(void)
{
	mutex_lock(&softhca_icrc_lock);
	static_branch_disable(&softhca_icrc_shash_on);
	if (softhca_icrc_tfm)
		crypto_free_shash(softhca_icrc_tfm);
	softhca_icrc_tfm = NULL;
	softhca_icrc_ready = false;
	mutex_unlock(&softhca_icrc_lock);
}

/**
 * softhca_icrc_impl - the implementation in use (KUnit, the parameter)
 *
 * Return: "shash" or "table".
 */
const char *softhca_icrc_impl(void)
{
	return static_key_enabled(&softhca_icrc_shash_on) ?
	       softhca_icrc_names[SOFTHCA_ICRC_SHASH] :
	       softhca_icrc_names[SOFTHCA_ICRC_TABLE];
}

/* Writing the parameter: "auto", "table" or "shash" (only if there is one). */
static int softhca_icrc_param_set(const char *val, const struct kernel_param *kp)
{
	int m = sysfs_match_string(softhca_icrc_names, val);
	int err = 0;

	if (m < 0)
		return -EINVAL;
	mutex_lock(&softhca_icrc_lock);
	if (m == SOFTHCA_ICRC_SHASH && softhca_icrc_ready && !softhca_icrc_tfm) {
		err = -EOPNOTSUPP;
	} else {
		softhca_icrc_want = m;
		if (softhca_icrc_ready)
			softhca_icrc_apply();
	}
	mutex_unlock(&softhca_icrc_lock);
	return err;
}

/* Reading it: the choice, what was asked, and the times measured. */
static int softhca_icrc_param_get(char *buf, const struct kernel_param *kp)
{
	int n;

	mutex_lock(&softhca_icrc_lock);
	if (softhca_icrc_tfm)
		n = sysfs_emit(buf, "%s (%s; %llu ns per 4 KiB with crc32_le, %llu with %s)\n",
			       softhca_icrc_impl(),
			       softhca_icrc_names[softhca_icrc_want],
			       softhca_icrc_ns[SOFTHCA_ICRC_TABLE],
			       softhca_icrc_ns[SOFTHCA_ICRC_SHASH],
			       crypto_shash_driver_name(softhca_icrc_tfm));
	else
		n = sysfs_emit(buf, "%s (%s; no crc32 shash)\n",
			       softhca_icrc_impl(),
			       softhca_icrc_names[softhca_icrc_want]);
	mutex_unlock(&softhca_icrc_lock);
	return n;
}

static const struct kernel_param_ops softhca_icrc_param_ops = {
	.set = softhca_icrc_param_set,
	.get = softhca_icrc_param_get,
};

module_param_cb(icrc, &softhca_icrc_param_ops, NULL, 0644);
MODULE_PARM_DESC(icrc, "how the ICRC's payload is summed: auto (default: the faster of the two, timed at load), table (crc32_le), shash (the crypto API's crc32, PCLMULQDQ on x86); read: the choice and the times");
