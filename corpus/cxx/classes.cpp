// C++ corpus: exceptions (LSDA, landing pads), templates, virtual calls.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" int c_main(void);
extern "C" void asm_anchor(void);

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};
struct Sq : Shape {
	double s;
	explicit Sq(double v) : s(v) {}
	double area() const override { return s * s; }
};
struct Rect : Shape {
	double w, h;
	Rect(double a, double b) : w(a), h(b) {}
	double area() const override
	{
		if (w < 0)
			throw std::invalid_argument("negative");
		return w * h;
	}
};

template <typename T, int N> struct Acc {
	T v[N];
	__attribute__((noinline)) T total() const
	{
		T t{};
		for (int i = 0; i < N; i++)
			t += v[i];
		return t;
	}
};

__attribute__((noinline)) static double sum_areas(const std::vector<std::unique_ptr<Shape>> &v)
{
	double t = 0;
	for (auto &s : v)
		t += s->area();
	return t;
}

__attribute__((noinline)) static int thrower(int x)
{
	std::string msg = "x=" + std::to_string(x);
	if (x > 2)
		throw std::runtime_error(msg);
	return (int)msg.size();
}

__attribute__((noinline)) static int catcher(int x)
{
	try {
		return thrower(x);
	} catch (const std::runtime_error &e) {
		return -(int)std::string(e.what()).size();
	}
}

int main()
{
	std::vector<std::unique_ptr<Shape>> v;
	v.push_back(std::make_unique<Sq>(2));
	v.push_back(std::make_unique<Rect>(2, 3));
	int r = 0;
	r += sum_areas(v) != 10.0;
	v.push_back(std::make_unique<Rect>(-1, 3));
	try {
		sum_areas(v);
		r++;
	} catch (const std::invalid_argument &) {
	}
	r += catcher(1) != 3;
	r += catcher(5) != -3;
	Acc<int, 4> a{{1, 2, 3, 4}};
	Acc<double, 2> d{{0.5, 0.25}};
	r += a.total() != 10;
	r += d.total() != 0.75;
	r += c_main();
	asm_anchor();
	return r;
}
