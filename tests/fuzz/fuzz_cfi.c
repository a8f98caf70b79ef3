/* Fuzz target: CFI section bytes -> parse + interpret -> dump -> SFrame
 * projection and encoding. The first byte picks the section kind, byte
 * order, address size and ABI; the rest is the section. */
#include <stdint.h>
#include <stdio.h>

#include "cfi/cfi.h"
#include "sframe_emit/sfe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t sel = data[0];
	cfi_section sec = {0};
	sec.kind = (sel & 1) ? CFI_SEC_DEBUG_FRAME : CFI_SEC_EH_FRAME;
	sec.big_endian = (sel >> 1) & 1;
	sec.addr_size = (sel & 4) ? 4 : 8;
	sec.data = data + 1;
	sec.size = size - 1;
	sec.vaddr = 0x401000;
	cfi_abi abi = (cfi_abi)((sel >> 3) & 3);

	cfi_table t;
	e2s_diag d;
	if (cfi_parse(&sec, abi, &t, &d) != E2S_ERR_OK)
		return 0;
	FILE *null = fopen("/dev/null", "w");
	if (null) {
		cfi_dump(null, &t);
		fclose(null);
	}
	sfe_set set;
	if (abi != CFI_ABI_UNKNOWN && sfe_project(&t, &set, &d) == E2S_ERR_OK) {
		if (set.nfuncs) {
			sfe_encode_opts o = {.section_vaddr = 0x800000};
			bw_t w;
			bw_init(&w, sec.big_endian);
			if (sfe_encode(&set, &o, &w, NULL, NULL, &d) == E2S_ERR_OK &&
			    w.len != sfe_encoded_size(&set, &o))
				__builtin_trap(); /* the layout promise was broken */
			bw_free(&w);
		}
		sfe_set_free(&set);
	}
	cfi_table_free(&t);
	return 0;
}
