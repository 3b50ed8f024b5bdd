"""`lore eval`: run the evaluation suites in a throw-away data directory and report each
case and each suite against its gate; the exit code says whether every gate was reached.

The run never touches DATA_DIR: `evals.hermetic` loads its own fixture knowledge into a
temporary directory, uses the configured model (LLM_*), and removes the directory after.
The engines and the suites are imported inside `run_evaluation`, so `lore --help` stays fast.
"""

# ruff: noqa: PLC0415 - heavy imports live in the function body, see the docstring

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import typer

from bot.errors import LoreError
from bot.library_output import route_library_output
from bot.log_redaction import configure_logging
from bot.people import LOCAL_OWNER

__all__ = ["run_evaluation"]


def run_evaluation(
    suite: str, cases: Path | None, overrides: Mapping[str, str] | None = None
) -> int:
    """Run `suite` ("all" for every one), or `cases` as that suite, with the configured model
    or the one `overrides` names (`llm_base_url`, `llm_model`); 0 when every gate is
    reached, 1 when one is missed or the run fails, 2 for a usage error."""
    from bot.settings import SettingsError, load_settings
    from evals.hermetic import hermetic_lore
    from evals.runner import (
        SUITES,
        CaseResult,
        EvalSetupError,
        case_report,
        load_cases_file,
        load_suite,
        run_suite,
        suite_report,
    )
    from graphs.llm.offline import MODEL_NAME
    from storage.evals import EvalRepository
    from storage.incidents import IncidentRepository

    names = SUITES if suite == "all" else (suite,)
    try:
        if cases is not None and suite == "all":
            raise EvalSetupError("--cases runs one suite: name it with --suite.")
        suites = {
            name: load_suite(name) if cases is None else load_cases_file(name, cases)
            for name in names
        }
        operator = load_settings(**dict(overrides or {}))
    except (LoreError, SettingsError) as exc:
        typer.echo(str(exc), err=True)
        return 2
    configure_logging(operator.log_level, operator.log_level_third_party, operator.secret_values())
    route_library_output(level=operator.log_level)
    provider = operator.llm_model if operator.llm_base_url else MODEL_NAME

    async def work() -> bool:
        passed = True
        async with hermetic_lore(operator) as lore:
            for name, suite_cases in suites.items():

                def show(case: CaseResult, suite_name: str = name) -> None:
                    typer.echo(case_report(suite_name, case))

                result = await run_suite(
                    lore.bot,
                    name,
                    suite_cases,
                    provider_name=provider,
                    repository=EvalRepository(lore.database),
                    owner=LOCAL_OWNER,
                    incidents=IncidentRepository(lore.database),
                    on_case=show,
                )
                typer.echo(suite_report(result, provider))
                passed = passed and result.passed_gate
        return passed

    try:
        all_passed = asyncio.run(work())
    except LoreError as exc:
        typer.echo(str(exc), err=True)
        return 1
    return 0 if all_passed else 1
