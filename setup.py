"""The one compiled part of Lore: the injection scorer's n-gram sums (see
graphs/guards/ngrams.py). Everything else about the package is in pyproject.toml.

The extension is optional: where no C compiler is found, the build goes on without it and
the scorer computes the same numbers with numpy, more slowly."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "graphs.guards._ngram_sums",
            sources=["graphs/guards/_ngram_sums.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
