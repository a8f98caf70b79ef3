// C++ exceptions thrown through several frames, on several threads.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static int __attribute__((noinline)) depth(int n)
{
	if (n == 0)
		throw std::runtime_error("bottom");
	return depth(n - 1) + 1;
}

static int run(int id)
{
	int caught = 0;
	for (int i = 0; i < 100; i++) {
		try {
			depth(i % 17);
		} catch (const std::exception &e) {
			caught += std::string(e.what()) == "bottom";
		}
	}
	return caught + id * 1000;
}

int main()
{
	std::vector<std::thread> ts;
	std::vector<int> res(4);
	for (int i = 0; i < 4; i++)
		ts.emplace_back([&res, i] { res[i] = run(i); });
	for (auto &t : ts)
		t.join();
	for (int r : res)
		std::printf("%d\n", r);
	return 7;
}
