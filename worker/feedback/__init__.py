"""What a judged submission teaches: roofline rows against the GPU's speed of light, cheating flags,
the compute-sanitizer diagnosis of a failing GPU run, and ncu profiles on request."""
