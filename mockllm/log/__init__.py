"""The request log: the journal the server keeps (in memory, on disk, shared by a fleet),
the records of MCP messages and allowances, and the typed records a client reads back.
Judging the log (the verdict, the checks, the transcript, the report) is mockllm.judge's."""
