"""The request-log viewer: one renderer (viewer.js) behind the live page at
`GET /_mockllm/ui` and the static one-file report (`mockllm report LOG --html`,
`pytest --mockllm-html`)."""
