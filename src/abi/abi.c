/* The ABI tables by id and by ELF machine. */
#include <stddef.h>

#include "abi.h"

static const abi_desc abi_unknown = {
	.name = "unknown",
	.id = ABI_UNKNOWN,
	.sp = 0, .fp = 0, .ra = 0, .max_reg = 0xffff,
	.pc = ABI_NO_REG, .ra_sign = ABI_NO_REG,
	.cfa_align = 1,
};

static const abi_desc *const tables[ABI_COUNT_] = {
	[ABI_UNKNOWN] = &abi_unknown,
	[ABI_AMD64] = &abi_amd64,
	[ABI_AARCH64] = &abi_aarch64,
	[ABI_S390X] = &abi_s390x,
};

const abi_desc *abi_get(abi_id id)
{
	if ((unsigned)id >= ABI_COUNT_)
		id = ABI_UNKNOWN;
	return tables[id];
}

const abi_desc *abi_of_machine(unsigned e_machine)
{
	for (size_t i = 1; i < ABI_COUNT_; i++)
		if (e_machine && tables[i]->e_machine == e_machine)
			return tables[i];
	return tables[ABI_UNKNOWN];
}
