#!/usr/bin/env bash
# Start or stop the SQS-compatible server (fauxqs 1.9.2 from npm, cached outside the clone).
#   scripts/sqs.sh up     install when missing, start on a free port, create the queues,
#                         write AWS_ENDPOINT_URL_SQS and the queue URLs to .local/env
#   scripts/sqs.sh down   stop it
#   scripts/sqs.sh install  only install it when missing (scripts/warm.sh)
# fauxqs listens on every interface; everything here talks to it on 127.0.0.1 only.
source "$(dirname "$0")/lib.sh"

FAUXQS_VERSION=1.9.2
FAUXQS_DIR="$AITASK_CACHE/fauxqs-$FAUXQS_VERSION"
STATE="$LOCAL/sqs"

# Installed once npm finished (the stamp), not once fauxqs' own files are there: its
# dependencies may still be coming, or a killed install may have left them half there.
install() (
  need_apt npm nodejs npm
  [ -f "$FAUXQS_DIR/.installed" ] && exit 0
  locked fauxqs
  if [ ! -f "$FAUXQS_DIR/.installed" ]; then
    log "installing fauxqs $FAUXQS_VERSION into $FAUXQS_DIR"
    mkdir -p "$FAUXQS_DIR"
    npm install --prefix "$FAUXQS_DIR" --no-audit --no-fund --loglevel=error "fauxqs@$FAUXQS_VERSION" >/dev/null
    touch "$FAUXQS_DIR/.installed"
  fi
)

up() {
  # Tests that restart a queue server of their own start this same build.
  env_set AITASK_FAUXQS_CLI "$FAUXQS_DIR/node_modules/fauxqs/dist/cli.js"
  if [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; then
    log "already running on port $(cat "$STATE/port")"
    return
  fi
  install
  mkdir -p "$STATE"
  local port; port="$(free_port)"
  FAUXQS_PORT="$port" FAUXQS_LOGGER=false nohup node "$FAUXQS_DIR/node_modules/fauxqs/dist/cli.js" \
    >"$STATE/server.log" 2>&1 &
  echo $! >"$STATE/pid"
  echo "$port" >"$STATE/port"
  local endpoint="http://127.0.0.1:$port"
  for _ in $(seq 1 100); do
    curl -s -o /dev/null -X POST "$endpoint/" -H 'X-Amz-Target: AmazonSQS.ListQueues' \
      -H 'Content-Type: application/x-amz-json-1.0' -d '{}' && break
    sleep 0.1
  done
  env_set AWS_ENDPOINT_URL_SQS "$endpoint"
  env_set AWS_REGION us-east-1
  env_set AWS_ACCESS_KEY_ID test
  env_set AWS_SECRET_ACCESS_KEY test
  # Read whole first: a failure here fails `up` (a process substitution's would not).
  local queues; queues="$(python3 "$ROOT/scripts/sqs_queues.py" "$endpoint" aitasks)"
  while IFS='=' read -r key value; do
    env_set "$key" "$value"
  done <<<"$queues"
  log "fauxqs $FAUXQS_VERSION on $endpoint (queues aitasks-tasks, aitasks-tasks-dlq, aitasks-events)"
}

down() {
  if [ -f "$STATE/pid" ]; then
    kill "$(cat "$STATE/pid")" 2>/dev/null || true
  fi
  rm -rf "$STATE"
  log "stopped"
}

case "${1:-}" in
  install) install ;;
  up) up ;;
  down) down ;;
  *) echo "usage: $0 install|up|down" >&2; exit 2 ;;
esac
