// C++ with exceptions, virtual calls and inline-heavy templates.
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};
struct Sq : Shape {
	double s;
	explicit Sq(double v) : s(v) {}
	double area() const override { return s * s; }
};
struct Ci : Shape {
	double r;
	explicit Ci(double v) : r(v) {}
	double area() const override
	{
		if (r < 0)
			throw std::runtime_error("negative radius");
		return 3.14159 * r * r;
	}
};

__attribute__((noinline)) static double total(const std::vector<std::unique_ptr<Shape>> &v)
{
	double t = 0;
	for (auto &s : v)
		t += s->area();
	return t;
}

int main(int argc, char **)
{
	std::vector<std::unique_ptr<Shape>> v;
	std::map<std::string, int> m;
	for (int i = 0; i < 10 * argc; i++) {
		v.emplace_back(new Sq(i));
		v.emplace_back(new Ci(i % 3 ? i : -i));
		m[std::to_string(i)] = i;
	}
	try {
		std::printf("%f\n", total(v));
	} catch (const std::exception &e) {
		std::printf("caught %s %zu\n", e.what(), m.size());
	}
	return 0;
}
