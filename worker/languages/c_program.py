"""`c-program`: C or C++ with OpenMP for the CPU, run as `./hw4 INPUT OUTPUT`.

Lets the whole pipeline run for real on machines without a GPU; the course's sequential
seq-attention.c is a valid submission. A Makefile, when given, is used as is (`make hw4`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from flashjudge.contract.languages import C_PROGRAM, LanguageFacts
from worker.languages.base import BuildPlan, BuildSettings, Language, sources
from worker.running.submission import SubmissionError

C_SOURCES = (".c",)
CXX_SOURCES = (".cpp", ".cc", ".cxx")


class CProgram(Language):
    facts: ClassVar[LanguageFacts] = C_PROGRAM

    @classmethod
    def claims(cls, files: Mapping[str, bytes]) -> bool:
        return bool(sources(files, *C_SOURCES, *CXX_SOURCES))

    def plan(self, files: Mapping[str, bytes], settings: BuildSettings) -> BuildPlan:
        if "Makefile" in files:
            return BuildPlan(files=dict(files), argv=["make", "hw4"], product="hw4")
        cxx = sources(files, *CXX_SOURCES)
        srcs = sources(files, *C_SOURCES, *CXX_SOURCES)
        if not srcs:
            raise SubmissionError("files", "c-program needs .c or .cpp sources")
        compiler = ["g++", "-std=gnu++17"] if cxx else ["gcc", "-std=gnu11"]
        argv = [*compiler, "-O2", "-fopenmp", "-o", "hw4", *srcs, "-lm"]
        return BuildPlan(files=dict(files), argv=argv, product="hw4")
