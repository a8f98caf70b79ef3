/* An inline template both C++ objects instantiate: a COMDAT group each. */
#include <vector>

template <typename T> __attribute__((noinline)) T total(const std::vector<T> &v)
{
	T s = 0;
	for (const T &x : v)
		s += x;
	return s;
}
