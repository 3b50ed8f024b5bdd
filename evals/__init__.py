"""Evaluation suites for Lore's agent: which tool it picks, and whether it finishes the task.

`evals.runner.run_suite` sends each case of a suite through the real `Bot` and judges the
turn's events (`evals.scoring`); the cases live in `evals/cases/*.json`.
"""

__all__: list[str] = []
