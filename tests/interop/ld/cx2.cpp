#include <stdexcept>
#include "cx.h"

int use2(int n)
{
	std::vector<long> v(static_cast<size_t>(n) + 2, 7);
	try {
		if (n > 100)
			throw std::runtime_error("big");
	} catch (const std::exception &) {
		return -1;
	}
	return static_cast<int>(total(v));
}
