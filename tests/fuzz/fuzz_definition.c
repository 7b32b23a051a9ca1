/* fuzz_definition.c - libFuzzer target; see fuzz_common.h. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 20) return 0;
	return djcfz_definition(data, size);
}
