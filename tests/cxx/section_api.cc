// The section API of include/eh2sframe.h from C++ (tests/e2e/lib_cxx.sh
// builds it with g++ against both libraries): the header compiles as
// C++, its inline *_init functions work there, and a C++ caller converts
// and verifies .eh_frame built in memory, with callbacks that are
// captureless lambdas and C++ containers behind their context pointers.
//
// Input: an x86-64 .eh_frame with a frame-pointer function and one whose
// CFA is a DWARF expression (skipped: cfa-expression). Expected: one
// function converted, one skipped with that reason, verification
// matches, a changed byte is caught, a missing size is refused.
#include <eh2sframe.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char *what)
{
	if (!ok) {
		std::fprintf(stderr, "section_api: FAIL: %s\n", what);
		failures++;
	}
}

// A little-endian .eh_frame builder (the test's own).
class EhFrame {
public:
	explicit EhFrame(std::uint64_t addr) : addr_(addr) {}

	void cie()
	{
		std::size_t start = begin();
		u32(0);                            // CIE id
		bytes({1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b});
		bytes({0x0c, 7, 8, 0x90, 1});      // CFA = rsp+8, RA at CFA-8
		end(start);
	}

	void fde(std::uint64_t func, std::uint32_t size,
		 const std::vector<std::uint8_t> &insn)
	{
		std::size_t start = begin();
		u32(static_cast<std::uint32_t>(b_.size()));   // back to offset 0
		std::uint64_t here = addr_ + b_.size();
		u32(static_cast<std::uint32_t>(func - here));  // pcrel sdata4
		u32(size);
		b_.push_back(0);                   // augmentation data length
		b_.insert(b_.end(), insn.begin(), insn.end());
		end(start);
	}

	void terminate() { u32(0); }
	const std::vector<std::uint8_t> &data() const { return b_; }
	std::vector<std::uint8_t> &data() { return b_; }
	std::uint64_t addr() const { return addr_; }

private:
	std::size_t begin()
	{
		std::size_t start = b_.size();
		u32(0);
		return start;
	}
	void end(std::size_t start)
	{
		while ((b_.size() - start) % 4)
			b_.push_back(0);
		std::uint32_t len = static_cast<std::uint32_t>(b_.size() - start - 4);
		std::memcpy(&b_[start], &len, 4);
	}
	void u32(std::uint32_t v)
	{
		for (int i = 0; i < 4; i++)
			b_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
	}
	void bytes(std::initializer_list<std::uint8_t> l)
	{
		b_.insert(b_.end(), l.begin(), l.end());
	}

	std::uint64_t addr_;
	std::vector<std::uint8_t> b_;
};

struct Skip {
	std::uint64_t pc;
	int reason;
	std::string name;
};

struct FreeSframe {
	void operator()(void *p) const { eh2s_free(p); }
};

} // namespace

int main()
{
	const std::uint64_t sec = 0x402000, func = 0x401000, sframe_at = 0x500000;
	EhFrame eh(sec);
	eh.cie();
	eh.fde(func, 0x20, {0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6});
	eh.fde(func + 0x40, 0x10, {0x0f, 1, 0x30});     // CFA = DW_OP_lit0
	eh.terminate();

	eh2s_cfi_input in;
	eh2s_cfi_input_init(&in);
	check(in.size == sizeof in, "eh2s_cfi_input_init sets size");
	in.machine = 62;
	in.kind = EH2S_CFI_EH_FRAME;
	in.data = eh.data().data();
	in.data_size = eh.data().size();
	in.addr = eh.addr();

	std::vector<Skip> skips;
	eh2s_section_opts o;
	eh2s_section_opts_init(&o);
	o.on_function = [](void *ctx, const eh2s_function *fn) {
		static_cast<std::vector<Skip> *>(ctx)->push_back(
			{fn->pc, fn->reason, eh2s_skip_name(fn->reason)});
	};
	o.cb_ctx = &skips;

	std::vector<std::size_t> by_reason(eh2s_skip_reason_count());
	eh2s_summary sum;
	eh2s_summary_init(&sum);
	sum.by_reason = by_reason.data();
	sum.by_reason_len = by_reason.size();

	eh2s_error err;
	void *raw = nullptr;
	std::size_t size = 0;
	eh2s_status st = eh2s_convert_section(&in, sframe_at, &o, &raw, &size,
					      &sum, &err);
	std::unique_ptr<void, FreeSframe> sframe(raw);
	check(st == EH2S_OK, err.message);
	check(sum.functions == 2 && sum.converted == 1 && sum.skipped_total == 1,
	      "summary counts");
	check(by_reason[EH2S_SKIP_NONE] == 1 && by_reason[EH2S_SKIP_CFA_EXPR] == 1,
	      "per-reason counts");
	check(skips.size() == 1 && skips[0].pc == func + 0x40 &&
	      skips[0].reason == EH2S_SKIP_CFA_EXPR &&
	      skips[0].name == "cfa-expression", "skip callback");
	const std::uint8_t *bytes = static_cast<const std::uint8_t *>(sframe.get());
	check(size > 28 && bytes && bytes[0] == 0xe2 && bytes[1] == 0xde &&
	      bytes[2] == 3, "SFrame V3 preamble");

	// Verify, collecting issues into a C++ container.
	std::vector<std::string> issues;
	eh2s_verify_section_opts vo;
	eh2s_verify_section_opts_init(&vo);
	vo.on_issue = [](void *ctx, const eh2s_verify_issue *is) {
		static_cast<std::vector<std::string> *>(ctx)->push_back(is->what);
	};
	vo.cb_ctx = &issues;
	vo.report_skipped = 1;
	eh2s_verify_result vr;
	eh2s_verify_result_init(&vr);
	st = eh2s_verify_section(&in, sframe.get(), size, sframe_at, &vo, &vr,
				 &err);
	check(st == EH2S_OK, err.message);
	check(vr.match == 1 && vr.skipped == 1 && vr.mismatch == 0, "verify counts");
	check(issues.size() == 1, "the skipped function reported once");

	// One changed byte (the last FRE's CFA offset) is caught.
	std::vector<std::uint8_t> bad(bytes, bytes + size);
	bad.back() = static_cast<std::uint8_t>(bad.back() + 8);
	issues.clear();
	vo.report_skipped = 0;
	st = eh2s_verify_section(&in, bad.data(), bad.size(), sframe_at, &vo, &vr,
				 &err);
	check(st == EH2S_E_VERIFY && vr.mismatch == 1 && issues.size() == 1,
	      "changed byte caught");

	// A struct without its size is refused, with a message.
	eh2s_summary unset;
	std::memset(&unset, 0, sizeof unset);
	void *none = nullptr;
	std::size_t none_size = 0;
	st = eh2s_convert_section(&in, sframe_at, nullptr, &none, &none_size,
				  &unset, &err);
	check(st == EH2S_E_USAGE && none == nullptr &&
	      std::string(err.message).find("eh2s_summary_init") != std::string::npos,
	      "uninitialised summary refused");

	std::printf("section_api (C++): %s, %zu-byte .sframe, %zu converted, "
		    "%zu skipped, %s\n", eh2s_version(), size, sum.converted,
		    sum.skipped_total, failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}
