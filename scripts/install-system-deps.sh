#!/usr/bin/env bash
# Installs the system tools the tests use: ffmpeg (encoder processes), prometheus (the scrape test),
# chromium (the dashboard's browser tests, driven by playwright-core), bubblewrap (the encoder
# sandbox, docs/security.md), libsrt's headers with a C++ toolchain and pkg-config (the SRT
# ingest addon that `npm ci` builds, docs/ingest.md), pebble with pebble-challtestsrv (a real ACME
# server for the certificate tests, docs/tls.md) and etcd (the cluster tests, docs/cluster.md).
# All come from Debian's archive; nothing else is downloaded.
# The S3 filesystem tests (test/storage/s3-*.test.ts, test/process/s3-outputs.test.ts) also need
# moto's server (`moto_server`, test/helpers/s3-endpoint.ts): neither Debian nor npm has an S3
# server, so it is not installed here (it comes from PyPI: `pip install 'moto[server]'`); this
# script only warns when it is missing.
set -euo pipefail
# test/helpers/s3-endpoint.ts also finds it under pyenv's versions when pyenv is not on PATH.
if ! command -v moto_server >/dev/null 2>&1 &&
  ! ls "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/moto_server >/dev/null 2>&1; then
  echo "warning: moto_server is not on PATH: the S3 tests (test/storage/s3-*.test.ts," \
    "test/process/s3-outputs.test.ts) will fail; install moto's server (pip install 'moto[server]')" >&2
fi
missing=()
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
pkg-config --exists srt 2>/dev/null || missing+=(libsrt-openssl-dev)
command -v pebble >/dev/null 2>&1 || missing+=(pebble)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
