/*
 * test_json_read.c - the strict JSON reader (core/json_read.c), bounded
 * file reading (core/util.c) and the escaping of messages (core/error.c).
 * The loaders' messages built on them are in test_graph.c and
 * test_schedule.c.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "testutil.h"
#include "core/util.h"

static cJSON *parse_ok(const char *text)
{
	struct remat_error err;
	cJSON *root = NULL;

	if (remat_i_json_parse(text, strlen(text), "j.json", &root, &err) != REMAT_OK)
		fail_msg("'%s' did not parse: %s", text, err.msg);
	return root;
}

static void expect_msg(const char *text, size_t len, const char *msg)
{
	struct remat_error err;
	cJSON *root = NULL;
	int rc = remat_i_json_parse(text, len, "j.json", &root, &err);

	if (rc != REMAT_EINPUT)
		fail_msg("'%s': expected a bad-input error, got %d", text, rc);
	assert_null(root);
	if (strcmp(err.msg, msg) != 0)
		fail_msg("'%s':\n  got  %s\n  want %s", text, err.msg, msg);
}

#define EXPECT_MSG(text, msg) expect_msg(text, strlen(text), msg)

static void test_values(void **state)
{
	cJSON *r = parse_ok(" {\"s\": \"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20ac\\ud83d\\ude00\","
			    " \"t\": true, \"f\": false, \"n\": null, \"a\": [1, [], {}],"
			    " \"o\": {\"s\": 2}, \"e\": \"\", \"u\": \"\xc3\xa9\x7f\"}\r\n\t");
	cJSON *a;

	(void)state;
	assert_string_equal(remat_i_json_member(r, "s", NULL)->valuestring,
			    "a\"\\/\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	assert_true(cJSON_IsTrue(remat_i_json_member(r, "t", NULL)));
	assert_true(cJSON_IsFalse(remat_i_json_member(r, "f", NULL)));
	assert_true(cJSON_IsNull(remat_i_json_member(r, "n", NULL)));
	a = remat_i_json_member(r, "a", NULL);
	assert_int_equal(cJSON_GetArraySize(a), 3);
	/* cJSON's links: child->prev is the last child, so cJSON can append. */
	assert_ptr_equal(a->child->prev, cJSON_GetArrayItem(a, 2));
	assert_true(cJSON_IsObject(cJSON_GetArrayItem(a, 2)));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(4));
	assert_int_equal(cJSON_GetArraySize(a), 4);
	assert_true(remat_i_json_member(remat_i_json_member(r, "o", NULL), "s", NULL)
		    ->valuedouble == 2);
	assert_string_equal(remat_i_json_member(r, "e", NULL)->valuestring, "");
	assert_string_equal(remat_i_json_member(r, "u", NULL)->valuestring, "\xc3\xa9\x7f");
	cJSON_Delete(r);
	/* Any value at the top level; the loaders require an object. */
	r = parse_ok("[\"x\"]");
	assert_true(cJSON_IsArray(r));
	cJSON_Delete(r);
	r = parse_ok("-0");
	assert_true(cJSON_IsNumber(r) && r->valuedouble == 0);
	cJSON_Delete(r);
}

static void test_syntax_messages(void **state)
{
	(void)state;
	EXPECT_MSG("", "j.json: empty file, expected JSON");
	EXPECT_MSG(" \n\t", "j.json: empty file, expected JSON");
	EXPECT_MSG("{", "j.json:1:2: invalid JSON: unexpected end of file");
	EXPECT_MSG("{\"a\" 1}", "j.json:1:6: invalid JSON near '1}': expected ':' after the key");
	EXPECT_MSG("{\"a\":1 \"b\":2}", "j.json:1:8: invalid JSON near '\"b\":2}': expected ',' "
		   "or '}'");
	EXPECT_MSG("[1 2]", "j.json:1:4: invalid JSON near '2]': expected ',' or ']'");
	EXPECT_MSG("{'a':1}", "j.json:1:2: invalid JSON near ''a':1}': expected a key (a string "
		   "in double quotes)");
	EXPECT_MSG("[tru]", "j.json:1:2: invalid JSON near 'tru]'");
	EXPECT_MSG("[1]x", "j.json:1:4: invalid JSON near 'x': text after the end of the JSON "
		   "value");
	EXPECT_MSG("[\"\xe2\x80\x9cquoted\xe2\x80\x9d\", \xe2\x80\x9cx\xe2\x80\x9d]",
		   "j.json:1:18: invalid JSON near '\xe2\x80\x9cx\xe2\x80\x9d]'");
	EXPECT_MSG("[-Infinity]", "j.json:1:2: invalid JSON number '-Infinity': a digit must "
		   "follow the minus sign");
	EXPECT_MSG("\"ab", "j.json:1:1: invalid JSON: unterminated string (the file ends "
		   "inside it)");
	EXPECT_MSG("\"ab\\", "j.json:1:1: invalid JSON: unterminated string (the file ends "
		   "inside it)");
	EXPECT_MSG("[\"\\\x01\"]", "j.json:1:3: invalid JSON string: unknown escape (byte 0x01 "
		   "after '\\')");
	EXPECT_MSG("[\"a\nb\"]", "j.json:1:4: invalid JSON string: control character 0x0a must "
		   "be escaped");
	expect_msg("[1,\n 2,\0 3]", 10, "j.json:2:4: not a text file (contains a NUL byte)");
	expect_msg("[1,\n 2,\0 3]", 6, "j.json:2:3: invalid JSON: unexpected end of file");
}

static void test_numbers(void **state)
{
	static const struct {
		const char *text;
		double value;
		int not_exact;
	} ok[] = {
		{ "0", 0, 0 }, { "-0", 0, 0 }, { "0.0", 0, 0 }, { "0e-999", 0, 0 },
		{ "7", 7, 0 }, { "-7", -7, 0 }, { "8.000", 8, 0 }, { "1e3", 1000, 0 },
		{ "1E+3", 1000, 0 }, { "0.5e1", 5, 0 }, { "1.5", 1.5, 0 }, { "0.1", 0.1, 0 },
		{ "9007199254740992", 9007199254740992.0, 0 },
		{ "9007199254740993", 9007199254740992.0, 1 },
		{ "9007199254740992.5", 9007199254740992.0, 1 },
		{ "3.0000000000000001", 3, 1 },
		{ "1.00000000000000000000000000", 1, 0 },
		{ "9007199254740994", 9007199254740994.0, 0 }, /* above 2^53: a range question */
		{ "18446744073709551616", 18446744073709551616.0, 0 },
		{ "1e22", 1e22, 0 }, { "1e23", 1e23, 0 }, { "123456789e-30", 123456789e-30, 0 },
		{ "1.7976931348623157e308", 1.7976931348623157e308, 0 },
		{ "4.9406564584124654e-324", 4.9406564584124654e-324, 0 },
		{ "2.2250738585072011e-308", 2.2250738585072011e-308, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char text[80];
		cJSON *r;
		int64_t u;

		snprintf(text, sizeof(text), "[%s]", ok[i].text);
		r = parse_ok(text);
		if (r->child->valuedouble != ok[i].value)
			fail_msg("%s read as %.17g", ok[i].text, r->child->valuedouble);
		assert_int_equal(!!(r->child->type & REMAT_I_JSON_NOT_EXACT), ok[i].not_exact);
		if (ok[i].not_exact) {
			assert_false(remat_i_json_uint(r->child, REMAT_MAX_BYTES, &u));
			assert_string_equal(r->child->valuestring, ok[i].text);
		}
		cJSON_Delete(r);
	}
	EXPECT_MSG("[1e309]", "j.json:1:2: number '1e309' is too large (beyond the range of a "
		   "double)");
	EXPECT_MSG("[2e-324]", "j.json:1:2: number '2e-324' is too small (a double would "
		   "read it as 0)");
	EXPECT_MSG("[1e99999999999999999999]", "j.json:1:2: number '1e99999999999999999999' is "
		   "too large (beyond the range of a double)");
	EXPECT_MSG("[00]", "j.json:1:2: invalid JSON number '00': leading zeros are not allowed");
	EXPECT_MSG("[1.e5]", "j.json:1:2: invalid JSON number '1.e5': a digit must follow the "
		   "decimal point");
	EXPECT_MSG("[1e-]", "j.json:1:2: invalid JSON number '1e-': the exponent needs digits");
	EXPECT_MSG("[1_000]", "j.json:1:2: invalid JSON number '1_000'");
}

/* Every number reads exactly as glibc's correctly rounded strtod reads it. */
static void test_numbers_against_strtod(void **state)
{
	uint64_t seed = 18;
	char text[1200], lit[1100];
	int i;

	(void)state;
	for (i = 0; i < 40000; i++) {
		/* [-] digits with a point somewhere ("0." + zeros when it comes first), e/E exponent */
		int ndig = 1 + (int)(tu_rand(&seed) % (i % 10 == 0 ? 900 : 25)), k, n = 0;
		int point = (int)(tu_rand(&seed) % (unsigned)(ndig + 1));
		long ex = (long)(tu_rand(&seed) % 700) - 350;
		struct remat_error err;
		cJSON *root = NULL;
		double want;
		int rc;

		if (tu_rand(&seed) % 2)
			lit[n++] = '-';
		if (point == 0) {
			lit[n++] = '0';
			lit[n++] = '.';
			for (k = (int)(tu_rand(&seed) % 4); k > 0; k--)
				lit[n++] = '0';
		}
		for (k = 0; k < ndig; k++) {
			if (k == point && k > 0)
				lit[n++] = '.';
			lit[n++] = (char)(k == 0 ? '1' + tu_rand(&seed) % 9 : '0' + tu_rand(&seed) % 10);
		}
		n += snprintf(lit + n, sizeof(lit) - (size_t)n, "%s%ld",
			      tu_rand(&seed) % 2 ? "e" : "E", ex);
		lit[n] = '\0';
		snprintf(text, sizeof(text), "[%s]", lit);
		want = strtod(lit, NULL);
		rc = remat_i_json_parse(text, strlen(text), "j.json", &root, &err);
		if (isinf(want) || want == 0) {
			if (rc != REMAT_EINPUT || !strstr(err.msg, isinf(want) ? "too large" :
							  "too small"))
				fail_msg("%s: expected out of range, got %d %s", lit, rc, err.msg);
			continue;
		}
		if (rc != REMAT_OK)
			fail_msg("%s: %s", lit, err.msg);
		if (memcmp(&want, &root->child->valuedouble, sizeof(want)) != 0)
			fail_msg("%s read as %.17g, strtod says %.17g", lit, root->child->valuedouble,
				 want);
		cJSON_Delete(root);
	}
}

static void test_strings(void **state)
{
	(void)state;
	EXPECT_MSG("[\"\\u0000\"]", "j.json:1:3: invalid JSON string: '\\u0000' is not allowed "
		   "(a NUL would cut the string short)");
	EXPECT_MSG("[\"\\udbff\\udbff\"]", "j.json:1:3: invalid JSON string: unpaired surrogate "
		   "'\\udbff' (a high surrogate must be followed by a low one)");
	EXPECT_MSG("[\"\\ud800\"]", "j.json:1:3: invalid JSON string: unpaired surrogate "
		   "'\\ud800' (a high surrogate must be followed by a low one)");
	EXPECT_MSG("[\"\\uG000\"]", "j.json:1:3: invalid JSON string: '\\u' must be followed by "
		   "4 hex digits");
	/* UTF-8, RFC 3629 */
	EXPECT_MSG("[\"\x80\"]", "j.json:1:3: invalid UTF-8 in a string (byte 0x80): JSON text "
		   "must be UTF-8");
	EXPECT_MSG("[\"\xc1\xbf\"]", "j.json:1:3: invalid UTF-8 in a string (byte 0xc1): JSON "
		   "text must be UTF-8");
	EXPECT_MSG("[\"\xe0\x9f\xbf\"]", "j.json:1:3: invalid UTF-8 in a string (byte 0xe0): "
		   "JSON text must be UTF-8");
	EXPECT_MSG("[\"\xf0\x8f\xbf\xbf\"]", "j.json:1:3: invalid UTF-8 in a string (byte "
		   "0xf0): JSON text must be UTF-8");
	EXPECT_MSG("[\"\xf5\x80\x80\x80\"]", "j.json:1:3: invalid UTF-8 in a string (byte "
		   "0xf5): JSON text must be UTF-8");
	EXPECT_MSG("[\"ok \xf0\x9f\x98\"]", "j.json:1:6: invalid UTF-8 in a string (byte "
		   "0xf0): JSON text must be UTF-8");
	cJSON_Delete(parse_ok("[\"\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80"
			      "\xf4\x8f\xbf\xbf\"]"));
}

static void test_duplicates_and_depth(void **state)
{
	char *text = malloc(8000);
	size_t n = 0;
	int i;
	cJSON *r;

	(void)state;
	/* Small objects scan, large ones hash: the same answer either way. */
	for (i = 0; i < 100; i++)
		n += (size_t)sprintf(text + n, "%s\"k%d\":%d", i ? "," : "{", i, i);
	strcpy(text + n, "}");
	r = parse_ok(text);
	assert_int_equal(cJSON_GetArraySize(r), 100);
	assert_true(remat_i_json_member(r, "k99", NULL)->valuedouble == 99);
	cJSON_Delete(r);
	sprintf(text + n, ",\"k57\":0}");
	expect_msg(text, strlen(text), "j.json:1:882: duplicate key: 'k57' is given more than "
		   "once in this object");
	EXPECT_MSG("{\"a\":1,\"b\":2,\"a\":3}", "j.json:1:14: duplicate key: 'a' is given more "
		   "than once in this object");
	/* The same key in different objects is fine; a key equal after unescaping is not. */
	cJSON_Delete(parse_ok("{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}"));
	EXPECT_MSG("{\"a\":1,\"\\u0061\":2}", "j.json:1:8: duplicate key: 'a' is given more "
		   "than once in this object");
	/* REMAT_I_JSON_MAX_DEPTH levels, and one more (the object is level 1). */
	n = 0;
	for (i = 0; i < REMAT_I_JSON_MAX_DEPTH; i++)
		text[n++] = '[';
	for (i = 0; i < REMAT_I_JSON_MAX_DEPTH; i++)
		text[n++] = ']';
	text[n] = '\0';
	cJSON_Delete(parse_ok(text));
	n = (size_t)sprintf(text, "{\"a\":");
	for (i = 0; i < REMAT_I_JSON_MAX_DEPTH; i++)
		text[n++] = '[';
	for (i = 0; i < REMAT_I_JSON_MAX_DEPTH; i++)
		text[n++] = ']';
	strcpy(text + n, "}");
	expect_msg(text, strlen(text), "j.json:1:1005: too deeply nested (more than 1000 levels)");
	free(text);
}

static char tmpdir[64];

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_read_file_limits(void **state)
{
	char path[128], fdpath[64], msg[256], *buf = NULL;
	struct remat_error err;
	size_t len;
	int fds[2];
	pid_t pid;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/remat-jr-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/g.json", tmpdir);
	write_file(path, TU_KUMAR, strlen(TU_KUMAR));

	/* A regular file over the limit is refused before it is read. */
	setenv("REMAT_MAX_INPUT", "100", 1);
	assert_int_equal(remat_i_read_file(path, &buf, &len, &err), REMAT_EINPUT);
	snprintf(msg, sizeof(msg), "%s: too large (%zu B; the input limit is 100 B, set "
		 "REMAT_MAX_INPUT to raise it)", path, strlen(TU_KUMAR));
	assert_string_equal(err.msg, msg);
	assert_null(buf);
	/* Exactly at the limit is fine; units as in budgets. */
	snprintf(msg, sizeof(msg), "%zu", strlen(TU_KUMAR));
	setenv("REMAT_MAX_INPUT", msg, 1);
	assert_int_equal(remat_i_read_file(path, &buf, &len, &err), REMAT_OK);
	assert_int_equal(len, strlen(TU_KUMAR));
	free(buf);
	setenv("REMAT_MAX_INPUT", "1KiB", 1);
	assert_int_equal(remat_i_read_file(path, &buf, &len, &err), REMAT_OK);
	free(buf);
	setenv("REMAT_MAX_INPUT", "lots", 1);
	assert_int_equal(remat_i_read_file(path, &buf, &len, &err), REMAT_EUSAGE);
	assert_string_equal(err.msg, "REMAT_MAX_INPUT: cannot read 'lots' (expected a size such "
			    "as 4GiB)");
	setenv("REMAT_MAX_INPUT", "50%", 1);
	assert_int_equal(remat_i_read_file(path, &buf, &len, &err), REMAT_EUSAGE);

	/* A stream is read up to the limit, never further. */
	setenv("REMAT_MAX_INPUT", "1000", 1);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static char spaces[4096];

		close(fds[0]);
		memset(spaces, ' ', sizeof(spaces));
		for (;;)
			if (write(fds[1], spaces, sizeof(spaces)) < 0)
				_exit(0);
	}
	close(fds[1]);
	snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fds[0]);
	assert_int_equal(remat_i_read_file(fdpath, &buf, &len, &err), REMAT_EINPUT);
	snprintf(msg, sizeof(msg), "%s: too large (more than the input limit of 1000 B; set "
		 "REMAT_MAX_INPUT to raise it)", fdpath);
	assert_string_equal(err.msg, msg);
	close(fds[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unsetenv("REMAT_MAX_INPUT");

	/* A NUL byte stops reading at once (/dev/zero would never end). */
	assert_int_equal(remat_i_read_file("/dev/zero", &buf, &len, &err), REMAT_EINPUT);
	assert_string_equal(err.msg, "/dev/zero:1:1: not a text file (contains a NUL byte)");
	write_file(path, "{\n  \0}", 6);
	assert_int_equal(remat_i_read_file(path, &buf, &len, &err), REMAT_EINPUT);
	snprintf(msg, sizeof(msg), "%s:2:3: not a text file (contains a NUL byte)", path);
	assert_string_equal(err.msg, msg);
	unlink(path);
	rmdir(tmpdir);
}

static void test_messages_are_escaped(void **state)
{
	struct remat_error err;
	char big[700];
	size_t n;

	(void)state;
	remat_error_set_at(&err, __FILE__, __LINE__, REMAT_EINPUT, "node '%s': x",
			   "a\x1b[31m\nb\x7f\xc2\x85\xff\xe2\x82\xac\xe2\x82");
	assert_string_equal(err.msg, "node 'a\\x1b[31m\\x0ab\\x7f\\u0085\\xff\xe2\x82\xac"
			    "\\xe2\\x82': x");
	/* Escaping twice changes nothing; a prefix is escaped too. */
	remat_error_prefix(&err, "f\tx");
	assert_string_equal(err.msg, "f\\x09x: node 'a\\x1b[31m\\x0ab\\x7f\\u0085\\xff"
			    "\xe2\x82\xac\\xe2\\x82': x");
	/* Cut at the end of the buffer, never inside an escape. */
	memset(big, '\x01', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	REMAT_FAIL(&err, REMAT_EINPUT, "%s", big);
	n = strlen(err.msg);
	assert_true(n < sizeof(err.msg) && n % 4 == 0 && n > 400);
	assert_string_equal(err.msg + n - 4, "\\x01");
	/* Through a loader: an id with control characters, a file name too. */
	assert_int_equal(tu_graph_err("{\"format\":\"remat-graph\",\"version\":1,\"nodes\":"
				      "[{\"id\":\"\\u0007\\r\",\"mem\":1,\"inputs\":[\"q\"]}]}",
				      &err), REMAT_EINPUT);
	assert_string_equal(err.msg, "t.json: node '\\x07\\x0d': 'inputs': unknown node 'q'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_syntax_messages),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_numbers_against_strtod),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_duplicates_and_depth),
		cmocka_unit_test(test_read_file_limits),
		cmocka_unit_test(test_messages_are_escaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
