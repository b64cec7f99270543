"""How one build or one test runs in the sandbox, and how its outcome becomes a verdict: the
primitives each language (worker/languages/) is made of and the pipeline (worker/pipeline.py)
drives."""
