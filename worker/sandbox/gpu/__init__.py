"""What a sandboxed run with the GPU has beyond any other run: the node's driver gate (one
process of the node inside CUDA's start-up or teardown at a time), the driver keeper (the
driver's node-wide state never torn down between runs), and the run's companion that passes the
judge's CUDA injection in, watches the GPU's processes and gathers the census
(docs/kernel-timing.md, "A time that belongs to the program")."""
