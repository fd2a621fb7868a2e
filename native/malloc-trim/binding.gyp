{
  "targets": [
    {
      "target_name": "malloc_trim",
      "sources": ["src/malloc_trim.c"],
      "cflags": ["-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
