// glibc's malloc tuning for a long-running Node server (docs/performance.md, "Memory"):
// - trim(): malloc_trim(0), which gives the free pages of every malloc arena back to the kernel,
//   in the middle of an arena as well as at its top;
// - pinThresholds(bytes): mallopt's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD set to `bytes`, which
//   also stops glibc from raising them by itself (after a large block is freed, glibc would serve
//   blocks up to that size from the arena and keep up to twice that at the top of each arena).
// Without glibc (musl, …) both do nothing: `available` is false.
#include <node_api.h>
#include <stdbool.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
#ifdef __GLIBC__
  released = malloc_trim(0) != 0;
#endif
  napi_value result;
  napi_get_boolean(env, released, &result);
  return result;
}

static napi_value PinThresholds(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int64_t bytes = 0;
  bool pinned = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc == 1 &&
      napi_get_value_int64(env, argv[0], &bytes) == napi_ok && bytes > 0 && bytes <= (1 << 30)) {
#ifdef __GLIBC__
    pinned = mallopt(M_MMAP_THRESHOLD, (int)bytes) == 1 && mallopt(M_TRIM_THRESHOLD, (int)bytes) == 1;
#endif
  }
  napi_value result;
  napi_get_boolean(env, pinned, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value trim;
  napi_value pin;
  napi_value available;
#ifdef __GLIBC__
  napi_get_boolean(env, true, &available);
#else
  napi_get_boolean(env, false, &available);
#endif
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &trim);
  napi_create_function(env, "pinThresholds", NAPI_AUTO_LENGTH, PinThresholds, NULL, &pin);
  napi_set_named_property(env, exports, "trim", trim);
  napi_set_named_property(env, exports, "pinThresholds", pin);
  napi_set_named_property(env, exports, "available", available);
  return exports;
}
