#!/bin/sh
# Start `mockllm serve` in the background and wait until it accepts requests.
#
#   sh mockllm-start.sh [mockllm serve options...]     e.g. --scenarios tests/scenarios
#
# Prints the server's URL, and exports MOCKLLM_URL to later GitHub Actions steps.
# Files, in $MOCKLLM_DIR (default $RUNNER_TEMP/mockllm or /tmp/mockllm):
#   url  the URL (written atomically by the server once it listens)
#   pid  the server's process id — stop it with: kill "$(cat "$MOCKLLM_DIR/pid")"
#   requests.jsonl  the request log, one JSON object per request
#   server.out      what the server printed
# Plain POSIX sh: runs under dash, bash, busybox and macOS alike.
set -eu

dir="${MOCKLLM_DIR:-${RUNNER_TEMP:-/tmp}/mockllm}"
timeout="${MOCKLLM_TIMEOUT:-30}"
mkdir -p "$dir"
rm -f "$dir/url"

mockllm serve --port 0 --ready-file "$dir/url" --log "$dir/requests.jsonl" "$@" \
  >"$dir/server.out" 2>&1 &
echo $! >"$dir/pid"

waited=0
until [ -s "$dir/url" ]; do
  if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    echo "mockllm exited before it was ready:" >&2
    cat "$dir/server.out" >&2
    exit 1
  fi
  if [ "$waited" -ge $((timeout * 10)) ]; then
    echo "mockllm was not ready after ${timeout}s" >&2
    exit 1
  fi
  sleep 0.1 2>/dev/null || sleep 1 # a shell whose sleep takes whole seconds only waits longer
  waited=$((waited + 1))
done

url="$(cat "$dir/url")"
if [ -n "${GITHUB_ENV:-}" ]; then
  echo "MOCKLLM_URL=$url" >>"$GITHUB_ENV"
fi
echo "$url"
