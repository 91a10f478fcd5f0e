#!/usr/bin/env bash
# scripts/model.sh never trusts what the CPU advertises: a cached llama-server that dies with
# SIGILL on this machine is not used, the next lower build is, and when none runs the script
# fails naming the cause. Fake servers stand in for the builds (a real build takes minutes): one
# that traps as an AVX2 binary would on a CPU that cannot run it, one that answers as
# llama-server does. Runs on a copy of scripts/ so the real stack's state is never touched.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'kill "$(cat "$work/root/.local/model/pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/root"
cp -r "$here/scripts" "$work/root/scripts"
cache="$work/cache"
llama="$cache/llama-cpp-$(sed -n 's/^LLAMA_VERSION=//p' "$here/scripts/model.sh")"
model="$(sed -n 's/^MODEL_FILE=//p' "$here/scripts/model.sh")"
# Where model.sh looks for each build (the folder names the build's options too).
v3="$(AITASK_CACHE="$cache" "$work/root/scripts/model.sh" bin x86-64-v3)"
base="$(AITASK_CACHE="$cache" "$work/root/scripts/model.sh" bin x86-64)"
mkdir -p "$cache/models" "$(dirname "$v3")" "$(dirname "$base")"
echo "not a model" >"$cache/models/$model"
echo "flags : fpu sse2 sse4_2 avx avx2 fma f16c bmi2 avx512f amx_tile amx_int8" >"$work/cpuinfo"

trapping() { printf '#!/bin/sh\nkill -ILL $$\n' >"$1"; chmod +x "$1"; }
answering() {
  cat >"$1" <<'PY'
#!/usr/bin/env python3
import http.server, json, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class Answer(http.server.BaseHTTPRequestHandler):
    def reply(self):
        body = json.dumps({"status": "ok", "content": "hi"}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self): self.reply()
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.reply()
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", port), Answer).serve_forever()
PY
  chmod +x "$1"
}
run() { AITASK_CACHE="$cache" AITASK_CPUINFO="$work/cpuinfo" AITASK_ENV_FILE="$work/env" "$work/root/scripts/model.sh" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. The AVX2 build traps: the baseline build is started instead, and the log says why.
trapping "$v3"
answering "$base"
run up 2>"$work/up.log" || { cat "$work/up.log" >&2; fail "up did not fall back to the baseline build"; }
grep -q "built for x86-64-v3 died on this CPU: SIGILL" "$work/up.log" || fail "the SIGILL was not named: $(cat "$work/up.log")"
grep -q "(x86-64 build) runs on this CPU" "$work/up.log" || fail "the baseline build was not the one started"
port="$(cat "$work/root/.local/model/port")"
curl -sf "http://127.0.0.1:$port/health" >/dev/null || fail "the started server does not answer"
grep -q "OPENAI_BASE_URL='http://127.0.0.1:$port/v1'" "$work/env" || fail "OPENAI_BASE_URL not written"
run down 2>/dev/null
echo "ok: a trapping AVX2 build falls back to the baseline build, naming SIGILL"

# 2. Every build traps: up fails, and says so.
trapping "$base"
if run up 2>"$work/up.log"; then fail "up succeeded with no build that runs"; fi
grep -q "no llama-server build runs on this machine" "$work/up.log" || fail "no clear failure: $(cat "$work/up.log")"
grep -q "x86-64: SIGILL" "$work/up.log" || fail "the cause was not named: $(cat "$work/up.log")"
echo "ok: no build runs: up fails naming SIGILL for each"

# 3. The cache is keyed by instruction set (and the build's options): nothing named after the
# CPU model is built or read.
[ "$(dirname "$v3")" = "$llama/bin-x86-64-v3-$(basename "$(dirname "$base")" | sed 's/^bin-x86-64-//')" ] \
  || fail "the two builds' folders differ in more than the instruction set: $v3, $base"
ls "$llama" | grep -qv '^bin-x86-64\(-v3\)\?-[0-9a-f]\{8\}$' && fail "unexpected cache entries: $(ls "$llama")"
echo "ok: the cache holds one binary per instruction set"
