{
  "targets": [
    {
      "target_name": "srt_ingest",
      "sources": ["src/addon.cc", "src/listener.cc", "src/stream_id.cc", "src/stats.cc"],
      "include_dirs": ["<!@(node -p \"require('node-addon-api').include_dir\")"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra", "<!@(pkg-config --cflags srt)"],
      "cflags_cc!": ["-fno-exceptions"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "libraries": ["<!@(pkg-config --libs srt)"]
    }
  ]
}
