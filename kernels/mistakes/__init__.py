"""The mistake catalogue: which classic FlashAttention mistake a wrong output matches.

A wrong output is compared, on a few batches (and a row subset when N is large), with the exact
(float64) outputs of a catalogue of wrong programs: no 1/sqrt(d) scale, the online softmax that
forgets to rescale its accumulator, the last key tile dropped, Q/K/V read in the wrong layout...
(`variants.py`, `tails.py`, `layouts.py`: one small function per mistake, in a registry with its
name and its sentence). `match.py` names the closest one when it is within a tight distance and
far closer than the right answer, in one line for the student.

Why kernels/: the catalogue needs only the homework's math and files (kernels.fileformat, the
float64 attention of kernels.cpu_reference), beside the error map (kernels/errormap.py) whose
"where" it completes with a "what". The judge (worker/running/mistakes.py), the custom runs and
the console's `flashjudge compare --input` all call it, and none of them is below the other.
"""
