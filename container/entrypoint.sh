#!/bin/sh
# The image's entry point (Containerfile, docs/container.md).
# - No arguments, or options only: `mockllm serve` on every interface of the container,
#   port $MOCKLLM_PORT (8000), the bundled scenarios and, when /scenarios holds files,
#   those too; then the options in $MOCKLLM_ARGS (for a CI service that takes no command,
#   as GitHub Actions' do), then the arguments given, so the last say wins.
# - A command (`mockllm report /logs/requests.jsonl`, `sh`): run as given.
set -euf
case "${1:-}" in
  "" | -*)
    # shellcheck disable=SC2086 # MOCKLLM_ARGS is split into words on purpose
    set -- ${MOCKLLM_ARGS:-} "$@"
    if [ -d /scenarios ] && [ -n "$(ls -A /scenarios)" ]; then
      set -- --scenarios /scenarios "$@"
    fi
    exec mockllm serve --host "${MOCKLLM_HOST:-0.0.0.0}" --port "${MOCKLLM_PORT:-8000}" "$@"
    ;;
  *) exec "$@" ;;
esac
