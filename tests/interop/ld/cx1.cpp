#include <cstdio>
#include "cx.h"

int use2(int n);

int main(int argc, char **)
{
	std::vector<long> v(static_cast<size_t>(argc) + 5, 3);
	std::printf("%ld %d\n", total(v), use2(argc));
	return 0;
}
