/*
 * Kafka's LZ4 frames, written in one native call per batch through N-API (ABI-stable: one build loads on every
 * Node version, unlike a nan addon). The frame is what KafkaLZ4BlockOutputStream and librdkafka write:
 * independent 64 KiB blocks, no block or content checksum, no content size. Blocks that would not shrink are
 * stored raw, as lz4frame.c does. Level 1 is LZ4's fast compressor; 2 and up are LZ4HC at that level.
 * One compression state per thread (N-API instance data: each worker thread has its own env), reset cheaply
 * between blocks and batches (the _fastReset entry points), so neither the 64 KiB blocks nor the batches pay
 * for allocating and clearing a fresh table (LZ4HC's is ~256 KB).
 */
#define LZ4_STATIC_LINKING_ONLY
#define LZ4_HC_STATIC_LINKING_ONLY
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include "lz4.h"
#include "lz4hc.h"

#define BLOCK_BYTES (64 * 1024)
#define UNCOMPRESSED_BLOCK 0x80000000u
/* FLG: version 01, independent blocks. BD: 64 KiB maximum block. HC: (xxh32(FLG BD, 0) >> 8) & 0xff. */
static const uint8_t FRAME_HEADER[7] = { 0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82 };

static void write_le32(uint8_t *at, uint32_t value) {
  at[0] = (uint8_t)value;
  at[1] = (uint8_t)(value >> 8);
  at[2] = (uint8_t)(value >> 16);
  at[3] = (uint8_t)(value >> 24);
}

static int bytes_arg(napi_env env, napi_value value, uint8_t **data, size_t *length) {
  bool is;
  if (napi_is_typedarray(env, value, &is) == napi_ok && is) {
    napi_typedarray_type type;
    size_t count, offset;
    napi_value buffer;
    void *base;
    if (napi_get_typedarray_info(env, value, &type, &count, &base, &buffer, &offset) != napi_ok || type != napi_uint8_array) return 0;
    *data = base;
    *length = count;
    return 1;
  }
  return 0;
}

static napi_value fail(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

static size_t frame_bound(size_t length) {
  size_t blocks = (length + BLOCK_BYTES - 1) / BLOCK_BYTES;
  return sizeof FRAME_HEADER + length + 4 * blocks + 4;
}

/* Number.MAX_SAFE_INTEGER: beyond it (and for NaN, Infinity, fractions) a double is no byte count, and casting one
   that does not fit to size_t is undefined behaviour (NaN came back as ~9.2e18, Infinity and 2^64 as 11). */
#define MAX_BYTE_COUNT 9007199254740991.0

/* frameBound(inputLength) -> the most bytes compressFrame can write for that input */
static napi_value js_frame_bound(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  double length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_get_value_double(env, argv[0], &length) != napi_ok
      || !(length >= 0 && length <= MAX_BYTE_COUNT) || (double)(uint64_t)length != length) return fail(env, "frameBound(length): length must be a byte count (an integer from 0 to 2^53 - 1)");
  napi_create_double(env, (double)frame_bound((size_t)length), &result);
  return result;
}

typedef struct {
  LZ4_streamHC_t *hc;
  LZ4_stream_t *fast;
} thread_states;

static void free_states(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  thread_states *states = data;
  free(states->hc);
  free(states->fast);
  free(states);
}

/* This thread's state for the fast (hc 0) or HC compressor, allocated and initialised on first use. */
static void *thread_state(napi_env env, int hc) {
  thread_states *states = NULL;
  if (napi_get_instance_data(env, (void **)&states) != napi_ok) return NULL;
  if (states == NULL) {
    states = calloc(1, sizeof *states);
    if (states == NULL || napi_set_instance_data(env, states, free_states, NULL) != napi_ok) {
      free(states);
      return NULL;
    }
  }
  if (hc && states->hc == NULL) {
    states->hc = malloc(sizeof(LZ4_streamHC_t));
    if (states->hc != NULL) LZ4_initStreamHC(states->hc, sizeof(LZ4_streamHC_t));
  }
  if (!hc && states->fast == NULL) {
    states->fast = malloc(sizeof(LZ4_stream_t));
    if (states->fast != NULL) LZ4_initStream(states->fast, sizeof(LZ4_stream_t));
  }
  return hc ? (void *)states->hc : (void *)states->fast;
}

/* compressFrame(input, output, level) -> bytes written into output (at least frameBound(input.length) long) */
static napi_value js_compress_frame(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], result;
  uint8_t *src, *dst;
  size_t src_len, dst_len;
  int32_t level;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3
      || !bytes_arg(env, argv[0], &src, &src_len) || !bytes_arg(env, argv[1], &dst, &dst_len)
      || napi_get_value_int32(env, argv[2], &level) != napi_ok) return fail(env, "compressFrame(input: Uint8Array, output: Uint8Array, level: number)");
  if (level < 1) return fail(env, "compressFrame: level must be at least 1");
  if (dst_len < frame_bound(src_len)) return fail(env, "compressFrame: output is shorter than frameBound(input.length)");

  const int hc = level > 1;
  void *state = thread_state(env, hc);
  if (state == NULL) return fail(env, "compressFrame: out of memory");

  memcpy(dst, FRAME_HEADER, sizeof FRAME_HEADER);
  size_t at = sizeof FRAME_HEADER;
  for (size_t start = 0; start < src_len; start += BLOCK_BYTES) {
    const int chunk = (int)(src_len - start < BLOCK_BYTES ? src_len - start : BLOCK_BYTES);
    const char *in = (const char *)src + start;
    char *out = (char *)dst + at + 4;
    /* capacity chunk - 1: a block that does not shrink comes back as 0 and is stored raw */
    const int written = hc
      ? LZ4_compress_HC_extStateHC_fastReset(state, in, out, chunk, chunk - 1, level)
      : LZ4_compress_fast_extState_fastReset(state, in, out, chunk, chunk - 1, 1);
    if (written > 0) {
      write_le32(dst + at, (uint32_t)written);
      at += 4 + (size_t)written;
    } else {
      write_le32(dst + at, (uint32_t)chunk | UNCOMPRESSED_BLOCK);
      memcpy(out, in, (size_t)chunk);
      at += 4 + (size_t)chunk;
    }
  }
  write_le32(dst + at, 0);
  at += 4;
  napi_create_double(env, (double)at, &result);
  return result;
}

/* decompressBlock(block, output) -> bytes written, or -1 when the block is corrupt or does not fit */
static napi_value js_decompress_block(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  uint8_t *src, *dst;
  size_t src_len, dst_len;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2
      || !bytes_arg(env, argv[0], &src, &src_len) || !bytes_arg(env, argv[1], &dst, &dst_len)) return fail(env, "decompressBlock(block: Uint8Array, output: Uint8Array)");
  if (src_len > INT32_MAX || dst_len > INT32_MAX) return fail(env, "decompressBlock: block or output over 2 GiB");
  const int n = LZ4_decompress_safe((const char *)src, (char *)dst, (int)src_len, (int)dst_len);
  napi_create_int32(env, n < 0 ? -1 : n, &result);
  return result;
}

/*
 * trimHeap() -> whether memory went back to the system. glibc keeps the pages of freed blocks resident inside its
 * heaps (only the free top of a heap is given back on free), so a process that allocates and frees differently
 * sized buffers batch after batch grows its RSS with memory it no longer uses; malloc_trim hands every whole free
 * page of every arena back. One of the native calls squeeze has besides LZ4 (with the thread CPU clock and the access-log
 * encoder below), so it lives in this binding. Other libcs:
 * false, nothing done.
 */
static napi_value js_trim_heap(napi_env env, napi_callback_info info) {
  napi_value result;
  (void)info;
#if defined(__GLIBC__)
  napi_get_boolean(env, malloc_trim(0) != 0, &result);
#else
  napi_get_boolean(env, false, &result);
#endif
  return result;
}

/*
 * threadCpuSeconds() -> CPU seconds of the calling thread, from CLOCK_THREAD_CPUTIME_ID. The kernel brings the
 * running thread's time up to date for this clock, so a short interval reads what it took; getrusage(RUSAGE_THREAD)
 * (process.threadCpuUsage) advances only at the scheduler's tick or a switch, and an interval of a few
 * microseconds mostly reads 0. -1 where the clock is missing.
 */
static napi_value js_thread_cpu_seconds(napi_env env, napi_callback_info info) {
  napi_value result;
  struct timespec ts;
  (void)info;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
    napi_create_double(env, -1, &result);
    return result;
  }
  napi_create_double(env, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9, &result);
  return result;
}

/*
 * Access-log lines in the combined format -> Cap'n Proto HttpRequest messages (lib/formats/http.ts), for the lines
 * squeeze's TypeScript takes in place (scanCombinedLine, CombinedTimeOfBytes, writeHttpRequestSpansAt): the same
 * grammar over the same bytes, the same message to the byte. The TypeScript stays the definition: a line this
 * code is not sure of (a byte above 0x7f, a timestamp not in the canonical `dd/Mon/yyyy:HH:MM:SS +hhmm` form, a
 * line it cannot parse) is "not mine" and goes the TypeScript way, which accepts it or names the reason. Every read
 * is checked against the line's end and every write against the output's length.
 *
 * Messages go into the caller's scratch buffer, their sizes returned, so a line that is not ours is known before the
 * caller reserves room in a batch, and the caller copies each message in. One call takes the lines of a chunk
 * (encodeHttpLines): the newline search is memchr, and the cost of a call into the binding is paid per chunk, not
 * per line.
 */

/* The HttpRequest layout of http-request.generated.ts: segment header, root pointer, 6 data words, 14 pointers. */
#define HTTP_DATA_AT 16
#define HTTP_DATA_BYTES 48
#define HTTP_POINTERS_AT 64
#define HTTP_POINTERS 14
#define HTTP_FIXED_BYTES (HTTP_POINTERS_AT + 8 * HTTP_POINTERS)
/* The most a line's message takes beyond the line's length: the struct, and each text's NUL and padding (at most 8). */
#define HTTP_LINE_OVERHEAD (HTTP_FIXED_BYTES + 8 * HTTP_POINTERS)
#define HTTP_ROOT_POINTER_HI ((uint32_t)HTTP_POINTERS << 16 | HTTP_DATA_BYTES / 8)
/* Pointer indexes of the text fields the combined format fills. */
enum { T_CLIENT_IP = 0, T_PATH = 2, T_QUERY = 3, T_PROTOCOL = 4, T_USER_AGENT = 5, T_REFERER = 6, T_REMOTE_USER = 12, T_IDENT = 13 };
/* And of those it leaves empty (null pointers): host, contentType, edgeLocation, requestId, rayId, country. */
static const int UNFILLED_TEXTS[] = { 1, 7, 8, 9, 10, 11 };
/* Data-section offsets of the scalars it fills. */
enum { D_TIMESTAMP_NS = 0, D_METHOD = 10, D_STATUS = 14, D_RESPONSE_BYTES = 24 };
/* Method ordinals, as HTTP_REQUEST_METHOD_NAMES orders them: a name not listed (UNKNOWN and OTHER too) is OTHER. */
static const char *const METHOD_NAMES[] = { "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE" };
#define METHOD_GET 1
#define METHOD_OTHER 10
static const char MONTH_NAMES[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
/* Longest line taken: a text's byte count times 8 must fit a list pointer's 29-bit count. */
#define HTTP_MAX_LINE_BYTES ((size_t)1 << 28)
#define NOT_MINE ((size_t)-1)

typedef struct {
  size_t text[HTTP_POINTERS][2];
  uint64_t timestamp_ns;
  uint64_t response_bytes;
  uint16_t method;
  uint16_t status;
  size_t bytes;
} http_line;

static int is_space(uint8_t c) { return c == ' ' || (c >= 0x09 && c <= 0x0d); }
static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* Whether s[from, to) is plain ASCII: a word at a time, as most of a line is long runs the loops below then need not check. */
static int is_ascii(const uint8_t *s, size_t from, size_t to) {
  uint64_t high = 0;
  for (; from + 8 <= to; from += 8) {
    uint64_t word;
    memcpy(&word, s + from, 8);
    high |= word;
  }
  for (; from < to; from++) high |= s[from];
  return (high & 0x8080808080808080ull) == 0;
}

/* End of the run of non-space bytes from at (\S* on ASCII): one comparison a byte above the control characters. */
static size_t non_space_end(const uint8_t *s, size_t at, size_t end) {
  for (;; at++) {
    while (at < end && s[at] > ' ') at++;
    if (at == end || is_space(s[at])) return at;
  }
}

/* Index of the first stop byte from at ([^stop]* ends there), or NOT_MINE where there is none before end. */
static size_t run_end(const uint8_t *s, size_t at, size_t end, uint8_t stop) {
  const uint8_t *found = at < end ? memchr(s + at, stop, end - at) : NULL;
  return found == NULL ? NOT_MINE : (size_t)(found - s);
}

static void set_text(http_line *l, int field, size_t from, size_t to) {
  l->text[field][0] = from;
  l->text[field][1] = to;
}

/* A field that is a lone dash is the format's "no value": an empty text. */
static void set_dashable(http_line *l, int field, const uint8_t *s, size_t from, size_t to) {
  if (to - from == 1 && s[from] == '-') to = from;
  set_text(l, field, from, to);
}

/* Whether s[from, to) is the NUL-terminated name. */
static int is_name(const uint8_t *s, size_t from, size_t to, const char *name) {
  for (; from < to; from++, name++)
    if (*name == 0 || (uint8_t)*name != s[from]) return 0;
  return *name == 0;
}

static uint16_t method_ordinal(const uint8_t *s, size_t from, size_t to) {
  for (size_t m = 0; m < sizeof METHOD_NAMES / sizeof METHOD_NAMES[0]; m++)
    if (is_name(s, from, to, METHOD_NAMES[m])) return (uint16_t)(METHOD_GET + m);
  return METHOD_OTHER;
}

static int two_digits(const uint8_t *s, int *value) {
  if (!is_digit(s[0]) || !is_digit(s[1])) return 0;
  *value = (s[0] - '0') * 10 + (s[1] - '0');
  return 1;
}

/*
 * Days from 1970-01-01 to the first of month m (1-12) of year y (1 or later), proleptic Gregorian, as ECMAScript's
 * MakeDay. Unsigned: a division by a constant is then a multiplication.
 */
static int64_t days_from_civil(uint32_t y, uint32_t m) {
  y -= m <= 2;
  const uint32_t era = y / 400;
  const uint32_t yoe = y - era * 400;
  const uint32_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5;
  const uint32_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return (int64_t)era * 146097 + doe - 719468;
}

/*
 * `dd/Mon/yyyy:HH:MM:SS +hhmm` (26 bytes) -> unix epoch ms as parseCombinedTime has it: Date.UTC of the fields,
 * which carries out-of-range days, hours, minutes and seconds over and reads years 0-99 as 1900-1999, less the
 * offset. 0 for any other form (the TypeScript parses it, or says why not).
 */
static int combined_time_ms(const uint8_t *t, size_t length, int64_t *ms) {
  int day, hour, minute, second, off_hours, off_minutes, year_hi, year_lo, month = -1;
  if (length != 26 || t[2] != '/' || t[6] != '/' || t[11] != ':' || t[14] != ':' || t[17] != ':' || t[20] != ' '
      || (t[21] != '+' && t[21] != '-')) return 0;
  if (!two_digits(t, &day) || !two_digits(t + 7, &year_hi) || !two_digits(t + 9, &year_lo) || !two_digits(t + 12, &hour)
      || !two_digits(t + 15, &minute) || !two_digits(t + 18, &second) || !two_digits(t + 22, &off_hours)
      || !two_digits(t + 24, &off_minutes)) return 0;
  for (int m = 0; m < 12 && month < 0; m++)
    if (is_name(t, 3, 6, MONTH_NAMES[m])) month = m;
  if (month < 0) return 0;
  uint32_t year = (uint32_t)(year_hi * 100 + year_lo);
  if (year <= 99) year += 1900;
  const int64_t offset_minutes = (t[21] == '-' ? -1 : 1) * (int64_t)(off_hours * 60 + off_minutes);
  const int64_t days = days_from_civil(year, (uint32_t)month + 1) + day - 1;
  *ms = days * 86400000 + (int64_t)hour * 3600000 + (int64_t)minute * 60000 + (int64_t)second * 1000 - offset_minutes * 60000;
  return 1;
}

/* The request, `([A-Z]+) (\S+) (HTTP\/\d(?:\.\d)?)` over s[from, to), into l; 0 where it is not that. */
static int scan_request(http_line *l, const uint8_t *s, size_t from, size_t to) {
  size_t method_end = from;
  while (method_end < to && s[method_end] >= 'A' && s[method_end] <= 'Z') method_end++;
  if (method_end == from || method_end >= to || s[method_end] != ' ') return 0;
  const size_t target_end = non_space_end(s, method_end + 1, to);
  if (target_end == method_end + 1 || target_end >= to || s[target_end] != ' ') return 0;
  const size_t protocol = target_end + 1, length = to - protocol;
  if ((length != 6 && length != 8) || !is_name(s, protocol, protocol + 5, "HTTP/") || !is_digit(s[protocol + 5])
      || (length == 8 && (s[protocol + 6] != '.' || !is_digit(s[protocol + 7])))) return 0;
  const uint8_t *mark = memchr(s + method_end + 1, '?', target_end - (method_end + 1));
  const size_t question = mark == NULL ? target_end : (size_t)(mark - s);
  l->method = method_ordinal(s, from, method_end);
  set_text(l, T_PATH, method_end + 1, question);
  if (question < target_end) set_text(l, T_QUERY, question + 1, target_end);
  else set_text(l, T_QUERY, 0, 0);
  set_text(l, T_PROTOCOL, protocol, to);
  return 1;
}

/* The line s[start, end) into l, or 0 where it is not the format's or not plain ASCII. */
static int scan_combined_line(http_line *l, const uint8_t *s, size_t start, size_t end) {
  if (!is_ascii(s, start, end)) return 0;
  for (size_t i = 0; i < sizeof UNFILLED_TEXTS / sizeof UNFILLED_TEXTS[0]; i++) set_text(l, UNFILLED_TEXTS[i], 0, 0);
  /* (\S+) (\S+) (\S+) \[ */
  const size_t ip_end = non_space_end(s, start, end);
  if (ip_end == start || ip_end >= end || s[ip_end] != ' ') return 0;
  const size_t ident_end = non_space_end(s, ip_end + 1, end);
  if (ident_end == ip_end + 1 || ident_end >= end || s[ident_end] != ' ') return 0;
  const size_t user_end = non_space_end(s, ident_end + 1, end);
  if (user_end == ident_end + 1 || user_end + 1 >= end || s[user_end] != ' ' || s[user_end + 1] != '[') return 0;
  /* ([^\]]+)\] " */
  const size_t time_start = user_end + 2;
  const size_t time_end = run_end(s, time_start, end, ']');
  if (time_end == NOT_MINE || time_end == time_start || time_end + 2 >= end || s[time_end + 1] != ' ' || s[time_end + 2] != '"') return 0;
  int64_t ms;
  if (!combined_time_ms(s + time_start, time_end - time_start, &ms)) return 0;
  /* ([^"]*)" (\d{3}) (\d+|-) " */
  const size_t request_start = time_end + 3;
  const size_t request_end = run_end(s, request_start, end, '"');
  if (request_end == NOT_MINE || request_end + 6 >= end || s[request_end + 1] != ' ' || !is_digit(s[request_end + 2])
      || !is_digit(s[request_end + 3]) || !is_digit(s[request_end + 4]) || s[request_end + 5] != ' ') return 0;
  size_t i = request_end + 6;
  uint64_t size = 0;
  if (s[i] == '-') {
    i++;
  } else {
    const size_t digits = i;
    /* Any number of digits: the text way keeps a size's low 64 bits (setBigUint64), as this wrapping sum does. */
    for (; i < end && is_digit(s[i]); i++) size = size * 10 + (uint64_t)(s[i] - '0');
    if (i == digits) return 0;
  }
  if (i + 1 >= end || s[i] != ' ' || s[i + 1] != '"') return 0;
  /* ([^"]*)" "([^"]*)"$ */
  const size_t referer_start = i + 2;
  const size_t referer_end = run_end(s, referer_start, end, '"');
  if (referer_end == NOT_MINE || referer_end + 2 >= end || s[referer_end + 1] != ' ' || s[referer_end + 2] != '"') return 0;
  const size_t agent_start = referer_end + 3;
  const size_t agent_end = run_end(s, agent_start, end, '"');
  if (agent_end != end - 1) return 0;
  if (!scan_request(l, s, request_start, request_end)) return 0;
  set_text(l, T_CLIENT_IP, start, ip_end);
  set_dashable(l, T_IDENT, s, ip_end + 1, ident_end);
  set_dashable(l, T_REMOTE_USER, s, ident_end + 1, user_end);
  set_dashable(l, T_REFERER, s, referer_start, referer_end);
  set_dashable(l, T_USER_AGENT, s, agent_start, agent_end);
  l->status = (uint16_t)((s[request_end + 2] - '0') * 100 + (s[request_end + 3] - '0') * 10 + (s[request_end + 4] - '0'));
  l->response_bytes = size;
  /* The low 64 bits of ms * 1e6, as setBigUint64 keeps them (two's complement for a time before 1970). */
  l->timestamp_ns = (uint64_t)ms * 1000000u;
  return 1;
}

/* A text's bytes, its NUL and the padding to a word. */
static size_t text_room(size_t bytes) { return bytes == 0 ? 0 : (bytes + 1 + 7) & ~(size_t)7; }

/* The message's size in bytes. */
static size_t http_line_bytes(const http_line *l) {
  size_t bytes = HTTP_FIXED_BYTES;
  for (int i = 0; i < HTTP_POINTERS; i++) bytes += text_room(l->text[i][1] - l->text[i][0]);
  return bytes;
}

static void write_le16(uint8_t *at, uint16_t value) {
  at[0] = (uint8_t)value;
  at[1] = (uint8_t)(value >> 8);
}

static void write_le64(uint8_t *at, uint64_t value) {
  write_le32(at, (uint32_t)value);
  write_le32(at + 4, (uint32_t)(value >> 32));
}

/* l's message at out (l->bytes long), every byte of it, as writeHttpRequestSpansAt writes it: texts in pointer order. */
static void write_http_line(const http_line *l, const uint8_t *s, uint8_t *out) {
  uint8_t *data = out + HTTP_DATA_AT;
  write_le32(out, 0);
  write_le32(out + 4, (uint32_t)((l->bytes - 8) / 8));
  write_le32(out + 8, 0);
  write_le32(out + 12, HTTP_ROOT_POINTER_HI);
  memset(data, 0, HTTP_DATA_BYTES);
  write_le64(data + D_TIMESTAMP_NS, l->timestamp_ns);
  write_le16(data + D_METHOD, l->method);
  write_le16(data + D_STATUS, l->status);
  write_le64(data + D_RESPONSE_BYTES, l->response_bytes);
  size_t end = HTTP_FIXED_BYTES;
  for (int i = 0; i < HTTP_POINTERS; i++) {
    uint8_t *pointer = out + HTTP_POINTERS_AT + 8 * i;
    const size_t from = l->text[i][0], bytes = l->text[i][1] - from, room = text_room(bytes);
    if (bytes == 0) {
      memset(pointer, 0, 8);
      continue;
    }
    memcpy(out + end, s + from, bytes);
    memset(out + end + bytes, 0, room - bytes);
    /* list pointer: offset in words from the word after it; element size 2 (byte), count with the NUL */
    write_le32(pointer, (uint32_t)(((end - (HTTP_POINTERS_AT + 8 * i) - 8) >> 3) << 2 | 1));
    write_le32(pointer + 4, (uint32_t)((bytes + 1) << 3 | 2));
    end += room;
  }
}

static int index_arg(napi_env env, napi_value value, size_t *index) {
  double number;
  if (napi_get_value_double(env, value, &number) != napi_ok || !(number >= 0 && number <= MAX_BYTE_COUNT) || (double)(uint64_t)number != number) return 0;
  *index = (size_t)number;
  return 1;
}

static int int32s_arg(napi_env env, napi_value value, int32_t **data, size_t *length) {
  bool is;
  napi_typedarray_type type;
  size_t offset;
  napi_value buffer;
  void *base;
  if (napi_is_typedarray(env, value, &is) != napi_ok || !is
      || napi_get_typedarray_info(env, value, &type, length, &base, &buffer, &offset) != napi_ok || type != napi_int32_array)
    return 0;
  *data = base;
  return 1;
}

/* A table row: the line's start, its text's end (before a CR that ends it), its message's offset in out, its size. */
#define LINE_ROW 4

/*
 * encodeHttpLines(src, start, end, out, table) -> n: the lines of src[start, end), split at each newline (the last
 * one ends at end), from the first on, each parsed and its message written as writeHttpRequestSpansAt writes it,
 * one after another from out[0]. Row i of table (LINE_ROW int32s) is line i's start, its text's end, its message's
 * offset and size, the size -1 for a line the TypeScript reads; table[LINE_ROW * n] is where the next call starts,
 * end + 1 once the last line is done. A call stops early when out has no room for the next message or table no row
 * for it; out must hold end - start + HTTP_LINE_OVERHEAD bytes, so the first line always fits.
 */
static napi_value js_encode_http_lines(napi_env env, napi_callback_info info) {
  size_t argc = 5, start, end, src_len, out_len, table_len;
  napi_value argv[5], result;
  uint8_t *src, *out;
  int32_t *table;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5 || !bytes_arg(env, argv[0], &src, &src_len)
      || !index_arg(env, argv[1], &start) || !index_arg(env, argv[2], &end) || start > end || end > src_len
      || src_len >= INT32_MAX || !bytes_arg(env, argv[3], &out, &out_len) || out_len > INT32_MAX
      || !int32s_arg(env, argv[4], &table, &table_len) || table_len < LINE_ROW + 1)
    return fail(env, "encodeHttpLines(src: Uint8Array, start: number, end: number, out: Uint8Array, table: Int32Array)");
  if (out_len < end - start + HTTP_LINE_OVERHEAD) return fail(env, "encodeHttpLines: out is too short");
  const size_t rows = (table_len - 1) / LINE_ROW;
  size_t at = start, used = 0, n = 0;
  while (n < rows) {
    const uint8_t *newline = memchr(src + at, '\n', end - at);
    const size_t stop = newline == NULL ? end : (size_t)(newline - src);
    const size_t text_end = stop > at && src[stop - 1] == '\r' ? stop - 1 : stop;
    int32_t size = -1;
    http_line l;
    if (text_end - at <= HTTP_MAX_LINE_BYTES && scan_combined_line(&l, src, at, text_end)) {
      l.bytes = http_line_bytes(&l);
      /* Only a later line can lack room: the first one's message is at most its length + HTTP_LINE_OVERHEAD. */
      if (l.bytes > out_len - used) break;
      write_http_line(&l, src, out + used);
      size = (int32_t)l.bytes;
    }
    int32_t *row = table + LINE_ROW * n++;
    row[0] = (int32_t)at;
    row[1] = (int32_t)text_end;
    row[2] = (int32_t)used;
    row[3] = size;
    if (size >= 0) used += (size_t)size;
    at = stop + 1;
    if (stop == end) break;
  }
  table[LINE_ROW * n] = (int32_t)at;
  napi_create_uint32(env, (uint32_t)n, &result);
  return result;
}

static uint32_t read_le32(const uint8_t *at) {
  return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
}

/* What the zero-copy check (checkFast in lib/formats/http-request-reader.ts) makes of one message. */
enum { VALUE_READ = 1, VALUE_FOR_JS = 0 };

/* Scalar words read and summed, so the check reads every field as the TypeScript one does. */
static volatile uint32_t values_seen;

/* The message in buf[start, end): VALUE_READ when it is one segment of near pointers whose root struct and every text
   pointer in text_mask are in bounds and each text is NUL-terminated; VALUE_FOR_JS for anything else (corrupt, several
   segments, far pointers), which the TypeScript reads again for its error or its reference reader. */
static int check_http_value(const uint8_t *buf, int64_t start, int64_t end, uint32_t text_mask, int64_t scalar_bytes, uint32_t *seen) {
  if (end - start < 8 || read_le32(buf + start) != 0) return VALUE_FOR_JS;
  const int64_t seg_len = (int64_t)read_le32(buf + start + 4) * 8;
  if (seg_len > end - start - 8 || seg_len < 8) return VALUE_FOR_JS;
  const int64_t seg = start + 8;
  const uint32_t lo = read_le32(buf + seg), hi = read_le32(buf + seg + 4);
  if (lo == 0 && hi == 0) return VALUE_READ;
  if ((lo & 3) != 0) return VALUE_FOR_JS;
  const int64_t start_word = 1 + (int64_t)((int32_t)lo >> 2);
  const int64_t data_words = hi & 0xffff, ptr_count = hi >> 16;
  if (start_word < 0 || (start_word + data_words + ptr_count) * 8 > seg_len) return VALUE_FOR_JS;
  const int64_t data = seg + start_word * 8, data_bytes = data_words * 8, ptrs = data + data_bytes;
  const int64_t scalars = data_bytes < scalar_bytes ? data_bytes : scalar_bytes;
  for (int64_t at = 0; at + 4 <= scalars; at += 4) *seen += read_le32(buf + data + at);
  for (int64_t i = 0; i < ptr_count && i < 32; i++) {
    if ((text_mask >> i & 1) == 0) continue;
    const int64_t at = ptrs + i * 8;
    const uint32_t plo = read_le32(buf + at), phi = read_le32(buf + at + 4);
    if (plo == 0 && phi == 0) continue;
    if ((plo & 3) != 1 || (phi & 7) != 2) return VALUE_FOR_JS;
    const int64_t count = phi >> 3;
    if (count == 0) continue;
    const int64_t text = at + 8 + (int64_t)((int32_t)plo >> 2) * 8;
    if (text < seg || text + count > seg + seg_len || buf[text + count - 1] != 0) return VALUE_FOR_JS;
    *seen += (uint32_t)(count - 1);
  }
  return VALUE_READ;
}

/* checkHttpValues(bytes, table, count, stride, startColumn, textMask, scalarBytes, done) -> the rows left to the
   TypeScript: row i's value is bytes[table[i * stride + startColumn], table[i * stride + startColumn + 1]), a start of
   -1 for a null value. done[i] becomes 1 for a value read here, 0 for one the TypeScript reads (a null one too). */
static napi_value js_check_http_values(napi_env env, napi_callback_info info) {
  size_t argc = 8, bytes_len, table_len, done_len, count, stride, column, mask, scalar_bytes;
  napi_value argv[8], result;
  uint8_t *bytes, *done;
  int32_t *table;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 8 || !bytes_arg(env, argv[0], &bytes, &bytes_len)
      || bytes_len >= INT32_MAX || !int32s_arg(env, argv[1], &table, &table_len) || !index_arg(env, argv[2], &count)
      || !index_arg(env, argv[3], &stride) || !index_arg(env, argv[4], &column) || !index_arg(env, argv[5], &mask)
      || mask > UINT32_MAX || !index_arg(env, argv[6], &scalar_bytes) || !bytes_arg(env, argv[7], &done, &done_len))
    return fail(env, "checkHttpValues(bytes: Uint8Array, table: Int32Array, count: number, stride: number, startColumn: number, textMask: number, scalarBytes: number, done: Uint8Array)");
  if (stride == 0 || column + 1 >= stride || count > table_len / stride || done_len < count)
    return fail(env, "checkHttpValues: the table or done is too short for count rows");
  uint32_t left = 0, seen = 0;
  for (size_t i = 0; i < count; i++) {
    const int32_t start = table[i * stride + column], end = table[i * stride + column + 1];
    int read = VALUE_FOR_JS;
    if (start >= 0 && end >= start && (size_t)end <= bytes_len)
      read = check_http_value(bytes, start, end, (uint32_t)mask, (int64_t)scalar_bytes, &seen);
    done[i] = (uint8_t)read;
    if (read == VALUE_FOR_JS && start >= 0) left++;
  }
  values_seen += seen;
  napi_create_uint32(env, left, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
    { "frameBound", NULL, js_frame_bound, NULL, NULL, NULL, napi_enumerable, NULL },
    { "compressFrame", NULL, js_compress_frame, NULL, NULL, NULL, napi_enumerable, NULL },
    { "decompressBlock", NULL, js_decompress_block, NULL, NULL, NULL, napi_enumerable, NULL },
    { "trimHeap", NULL, js_trim_heap, NULL, NULL, NULL, napi_enumerable, NULL },
    { "threadCpuSeconds", NULL, js_thread_cpu_seconds, NULL, NULL, NULL, napi_enumerable, NULL },
    { "encodeHttpLines", NULL, js_encode_http_lines, NULL, NULL, NULL, napi_enumerable, NULL },
    { "checkHttpValues", NULL, js_check_http_values, NULL, NULL, NULL, napi_enumerable, NULL },
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
