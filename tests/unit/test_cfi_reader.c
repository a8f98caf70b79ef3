/* Edge cases of src/common/reader.c: LEB128 limits, sign extension,
 * sticky errors, sub-readers. Expected values computed by hand from the
 * DWARF 5 LEB128 definition (section 7.6). */
#include <stdint.h>

#include "common/reader.h"
#include "t.h"

static uint64_t uleb(const uint8_t *b, size_t n, e2s_err *err, size_t *pos)
{
	br_t r;
	br_init(&r, b, n, false);
	uint64_t v = br_uleb(&r);
	*err = r.err;
	*pos = r.pos;
	return v;
}

static int64_t sleb(const uint8_t *b, size_t n, e2s_err *err)
{
	br_t r;
	br_init(&r, b, n, false);
	int64_t v = br_sleb(&r);
	*err = r.err;
	return v;
}

static void test_uleb(void)
{
	e2s_err e;
	size_t pos;
	static const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0xff,
				      0xff, 0xff, 0xff, 0xff, 0x01};
	CHECK(uleb(max, sizeof max, &e, &pos) == UINT64_MAX);
	CHECK_EQ(e, E2S_ERR_OK);
	CHECK_EQ(pos, 10);
	/* 10th byte carrying bits past 63: overlong. */
	static const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0x02};
	uleb(over, sizeof over, &e, &pos);
	CHECK_EQ(e, E2S_ERR_LEB_OVERLONG);
	/* 11 bytes: overlong even if the value would fit. */
	static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					 0x80, 0x80, 0x80, 0x80, 0x00};
	uleb(eleven, sizeof eleven, &e, &pos);
	CHECK_EQ(e, E2S_ERR_LEB_OVERLONG);
	/* Padded but within 10 bytes: valid, value 0. */
	static const uint8_t pad[] = {0x80, 0x80, 0x00};
	CHECK_EQ(uleb(pad, sizeof pad, &e, &pos), 0);
	CHECK_EQ(e, E2S_ERR_OK);
	CHECK_EQ(pos, 3);
	static const uint8_t v624485[] = {0xe5, 0x8e, 0x26};
	CHECK_EQ(uleb(v624485, 3, &e, &pos), 624485);
	/* Running off the end. */
	uleb(v624485, 2, &e, &pos);
	CHECK_EQ(e, E2S_ERR_TRUNCATED);
	uleb(v624485, 0, &e, &pos);
	CHECK_EQ(e, E2S_ERR_TRUNCATED);
}

static void test_sleb(void)
{
	e2s_err e;
	static const uint8_t m1[] = {0x7f};
	CHECK_EQ(sleb(m1, 1, &e), -1);
	static const uint8_t m128[] = {0x80, 0x7f};
	CHECK_EQ(sleb(m128, 2, &e), -128);
	static const uint8_t p63[] = {0x3f};
	CHECK_EQ(sleb(p63, 1, &e), 63);
	static const uint8_t p64[] = {0xc0, 0x00};
	CHECK_EQ(sleb(p64, 2, &e), 64);
	static const uint8_t m8[] = {0x78};
	CHECK_EQ(sleb(m8, 1, &e), -8);
	/* INT64_MIN: 9 bytes of 0x80 then 0x7f. */
	static const uint8_t min[] = {0x80, 0x80, 0x80, 0x80, 0x80,
				      0x80, 0x80, 0x80, 0x80, 0x7f};
	CHECK(sleb(min, sizeof min, &e) == INT64_MIN);
	CHECK_EQ(e, E2S_ERR_OK);
	static const uint8_t maxv[] = {0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0x00};
	CHECK(sleb(maxv, sizeof maxv, &e) == INT64_MAX);
	CHECK_EQ(e, E2S_ERR_OK);
	/* 10th byte neither 0 nor 0x7f: does not fit in 64 bits. */
	static const uint8_t bad[] = {0xff, 0xff, 0xff, 0xff, 0xff,
				      0xff, 0xff, 0xff, 0xff, 0x01};
	sleb(bad, sizeof bad, &e);
	CHECK_EQ(e, E2S_ERR_LEB_OVERLONG);
	static const uint8_t cont[] = {0x80, 0x80, 0x80, 0x80, 0x80,
				       0x80, 0x80, 0x80, 0x80, 0x80};
	sleb(cont, sizeof cont, &e);
	CHECK_EQ(e, E2S_ERR_LEB_OVERLONG);
}

static void test_fixed(void)
{
	static const uint8_t b[] = {0x01, 0x02, 0x03, 0x04, 0xff, 0xfe,
				    0x80, 0x00, 0x00, 0x00};
	br_t r;
	br_init(&r, b, sizeof b, false);
	CHECK_EQ(br_u32(&r), 0x04030201);
	CHECK_EQ(br_sN(&r, 2), -257); /* 0xfeff */
	br_init(&r, b, sizeof b, true);
	CHECK_EQ(br_u32(&r), 0x01020304);
	CHECK_EQ(br_sN(&r, 2), -2); /* 0xfffe */
	CHECK_EQ(br_sN(&r, 1), -128);
	CHECK_EQ(br_sN(&r, 4), 0); /* only 3 left: truncated, sticky */
	CHECK_EQ(r.err, E2S_ERR_TRUNCATED);
	CHECK_EQ(r.err_pos, 7);
	CHECK_EQ(br_u8(&r), 0);
	CHECK(!br_ok(&r));
}

static void test_sub_and_cstr(void)
{
	static const uint8_t b[] = {'z', 'R', 0, 1, 2, 3, 'a', 'b'};
	br_t r, s;
	br_init(&r, b, sizeof b, false);
	CHECK_STR(br_cstr(&r), "zR");
	CHECK(br_sub(&r, 3, &s));
	CHECK_EQ(r.pos, 6);
	CHECK_EQ(s.pos, 3); /* offsets stay buffer offsets */
	CHECK_EQ(br_u16(&s), 0x0201);
	CHECK_EQ(br_u16(&s), 0); /* past the sub-reader's end */
	CHECK_EQ(s.err, E2S_ERR_TRUNCATED);
	CHECK(br_ok(&r));
	CHECK(br_cstr(&r) == NULL); /* "ab" without NUL */
	CHECK_EQ(r.err, E2S_ERR_TRUNCATED);
	br_init(&r, b, sizeof b, false);
	CHECK(!br_sub(&r, 9, &s));
	CHECK(!br_ok(&r));
	CHECK(br_at_end(&s));
}

int main(void)
{
	test_uleb();
	test_sleb();
	test_fixed();
	test_sub_and_cstr();
	return t_done("test_cfi_reader");
}
