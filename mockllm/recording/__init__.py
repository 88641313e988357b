"""`mockllm record`: a proxy to a real API whose sessions become scenario files."""
