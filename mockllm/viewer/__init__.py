"""The request-log viewer: one renderer (the *.js files page.py joins into one script)
behind the live page at `GET /_mockllm/ui` and the static one-file report
(`mockllm report LOG --html`, `pytest --mockllm-html`)."""
