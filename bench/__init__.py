"""`make bench`: mockllm against bare floors (and optional peers) on the same workload.

See bench/README.md for how to run it, what each figure means and how to add a peer.
"""
