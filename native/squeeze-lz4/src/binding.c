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
 * page of every arena back. One of the two native calls squeeze has besides LZ4 (the thread CPU clock below), so it lives in this binding. Other libcs:
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

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
    { "frameBound", NULL, js_frame_bound, NULL, NULL, NULL, napi_enumerable, NULL },
    { "compressFrame", NULL, js_compress_frame, NULL, NULL, NULL, napi_enumerable, NULL },
    { "decompressBlock", NULL, js_decompress_block, NULL, NULL, NULL, napi_enumerable, NULL },
    { "trimHeap", NULL, js_trim_heap, NULL, NULL, NULL, napi_enumerable, NULL },
    { "threadCpuSeconds", NULL, js_thread_cpu_seconds, NULL, NULL, NULL, napi_enumerable, NULL },
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
