"""Evaluation suites for Lore's agent: which tool it picks, whether it finishes the task, which
messages its input guard refuses or hardens, and which ordinary ones it leaves alone.

`evals.runner.run_suite` sends each case of a suite through the real `Bot` and judges the
turn's events (`evals.scoring`); the cases live in `evals/cases/*.json`. `evals.hermetic`
gives `lore eval` a throw-away core with the fixture knowledge of `evals/knowledge/*.md`.
"""

__all__: list[str] = []
