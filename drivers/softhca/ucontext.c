// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: per-process context and mmap plumbing.
 *
 * Every page a process maps (rings, the context page) is kernel memory
 * from vmalloc_user() published through an rdma_user_mmap_entry.  The
 * entry owns that memory from softhca_mmap_insert() on: the object that
 * created it calls rdma_user_mmap_entry_remove() when it dies, and
 * softhca_mmap_free() vfree()s it once the entry's last reference goes.
 * remap_vmalloc_range() took a page reference for every mapped page, so
 * a process that keeps a ring mapped after destroying its QP (or after
 * the device went away) keeps stale but valid pages until it unmaps
 * them, never a freed page; no VMA points back into this module.
 *
 * Nothing the kernel relies on for its own correctness is kept in these
 * pages: user space can rewrite any writable byte at any time.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "softhca.h"

/**
 * softhca_mmap_insert - make @vaddr mappable by the owner of @uc
 * @uc: the user context
 * @vaddr: vmalloc_user() memory of @size bytes; owned by the entry on
 *	success, still the caller's on failure
 * @size: bytes, rounded up to whole pages for the mapping
 * @writable: whether the process may map it PROT_WRITE
 * @offset: out, the mmap offset to hand to user space
 *
 * Return: the entry, or an ERR_PTR.
 */
struct softhca_mmap_entry *softhca_mmap_insert(struct softhca_ucontext *uc,
					       void *vaddr, size_t size,
					       bool writable, u64 *offset)
{
	struct softhca_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->vaddr = vaddr;
	entry->writable = writable;

	err = rdma_user_mmap_entry_insert(&uc->ibuc, &entry->rdma_entry,
					  PAGE_ALIGN(size));
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	*offset = rdma_user_mmap_get_offset(&entry->rdma_entry);
	return entry;
}

void softhca_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct softhca_mmap_entry *entry =
		container_of(rdma_entry, struct softhca_mmap_entry, rdma_entry);

	vfree(entry->vaddr);
	kfree(entry);
}

int softhca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct softhca_mmap_entry *entry;
	int err;

	/* Checks that the VMA covers exactly the entry's pages. */
	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = container_of(rdma_entry, struct softhca_mmap_entry,
			     rdma_entry);

	if (!entry->writable) {
		if (vma->vm_flags & VM_WRITE) {
			err = -EPERM;
			goto out;
		}
		/* No later mprotect(PROT_WRITE) either. */
		vma->vm_flags &= ~VM_MAYWRITE;
	}

	err = remap_vmalloc_range(vma, entry->vaddr, 0);
out:
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

int softhca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct softhca_ucontext *uc = to_suc(ibuc);
	struct softhca_alloc_ucontext_resp resp = {};
	struct softhca_alloc_ucontext_req req = {};
	struct softhca_mmap_entry *entry;
	int err;

	/*
	 * A library that does not speak the softhca ABI (or speaks another
	 * version of it) must not get a context it would misuse.
	 */
	if (udata->inlen < sizeof(req))
		return -EPROTO;
	err = ib_copy_from_udata(&req, udata, sizeof(req));
	if (err)
		return err;
	if (req.abi_version != SOFTHCA_UVERBS_ABI_VERSION)
		return -EPROTO;
	if (req.reserved ||
	    !ib_is_udata_cleared(udata, sizeof(req), udata->inlen - sizeof(req)))
		return -EINVAL;
	if (udata->outlen < sizeof(resp))
		return -EINVAL;

	uc->ctx_page = vmalloc_user(PAGE_SIZE);
	if (!uc->ctx_page)
		return -ENOMEM;
	uc->ctx_page->magic = SOFTHCA_CTX_PAGE_MAGIC;
	uc->ctx_page->abi_version = SOFTHCA_UVERBS_ABI_VERSION;
	uc->ctx_page->dev_index = ibuc->device->index;

	entry = softhca_mmap_insert(uc, uc->ctx_page, PAGE_SIZE, false,
				    &resp.ctx_page_offset);
	if (IS_ERR(entry)) {
		err = PTR_ERR(entry);
		goto err_free_page;
	}
	uc->ctx_entry = &entry->rdma_entry;

	resp.abi_version = SOFTHCA_UVERBS_ABI_VERSION;
	resp.page_size = PAGE_SIZE;
	resp.capability_flags = SOFTHCA_CAP_NONE;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_remove_entry;
	return 0;

err_remove_entry:
	/* The entry owns the page now; removing it frees both. */
	rdma_user_mmap_entry_remove(uc->ctx_entry);
	uc->ctx_entry = NULL;
	return err;
err_free_page:
	vfree(uc->ctx_page);
	return err;
}

/*
 * ib_uverbs calls this when the device goes away (rdma link delete,
 * netdev unregister, rmmod) while a process still has it open, after it
 * destroyed every object of the context.  Nothing is left to revoke: the
 * process's mappings hold their own page references (see above) and no
 * driver code runs on their behalf, so the device can go at once
 * instead of waiting for the process to close its file.
 */
void softhca_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

void softhca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct softhca_ucontext *uc = to_suc(ibuc);

	/* The page itself goes when the last mapping of it does. */
	rdma_user_mmap_entry_remove(uc->ctx_entry);
}
