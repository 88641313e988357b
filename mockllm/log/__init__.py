"""The request log: the journal the server keeps, the typed records a client reads back,
the protocol verdict and the transcript a failing test shows."""
