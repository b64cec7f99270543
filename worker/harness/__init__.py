"""The cuda-kernel harness: harness.cu (loads the student's solve() and times it) and its build."""
