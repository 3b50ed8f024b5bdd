"""Hardening row L: secrets and members' content never reach the logs, even at DEBUG."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from bot.log_redaction import OWN_LOGGERS, REDACTED, THIRD_PARTY_LOGGERS, configure_logging
from bot.settings import load_settings
from storage.database import Database

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"  # noqa: S105 - a made-up token
WEBHOOK_SECRET = "webhook-Secret_0123456789abcdef"  # noqa: S105
API_KEY = "sk-test-Abc123Def456Ghi789"


class Recorder(logging.Handler):
    """Keeps every formatted line that reaches the root logger."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _fail(url: str) -> None:
    raise RuntimeError(f"HTTP 409 for {url}")


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """A root handler that records lines; logging is put back as it was afterwards."""
    root = logging.getLogger()
    names = ["", *OWN_LOGGERS, *THIRD_PARTY_LOGGERS]
    levels = {name: logging.getLogger(name).level for name in names}
    filters = {handler: list(handler.filters) for handler in root.handlers}
    factory = logging.getLogRecordFactory()
    handlers = list(root.handlers)
    recorder = Recorder()
    try:
        yield recorder
    finally:
        logging.setLogRecordFactory(factory)
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        for handler, saved in filters.items():
            handler.filters = saved
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def test_row_l_a_debug_record_carrying_the_token_is_redacted(recorder: Recorder) -> None:
    configure_logging("DEBUG", "WARNING", [TOKEN, WEBHOOK_SECRET, API_KEY])
    logging.getLogger().addHandler(recorder)
    url = f"https://api.telegram.org/bot{TOKEN}/getUpdates"
    logging.getLogger("bot.service").debug("calling %s", url)
    logging.getLogger("adapters.telegram").info("webhook secret %r", WEBHOOK_SECRET)
    logging.getLogger("graphs.llm").debug(f"Authorization: Bearer {API_KEY}")  # noqa: G004
    logging.getLogger("telegram.ext").warning("retrying %s", quote(url, safe=""))
    try:
        _fail(url)
    except RuntimeError:
        logging.getLogger("scheduler.jobs").exception("job failed")
    assert len(recorder.lines) == 5
    for secret in (TOKEN, WEBHOOK_SECRET, API_KEY, quote(TOKEN, safe=""), "AAHdqTcvCH1v"):
        assert secret not in recorder.text
    assert recorder.text.count(REDACTED) >= 5
    assert "https://api.telegram.org/bot[REDACTED]/getUpdates" in recorder.text
    assert "RuntimeError: HTTP 409" in recorder.text  # the traceback is kept, redacted


def test_a_secret_never_mangles_the_words_around_it(recorder: Recorder) -> None:
    # With LLM_API_KEY=x, every x in the log became *** ("json.e***ception"): a secret that
    # short is now refused at start (tests/test_model_pricing.py), and a real one is
    # replaced whole.
    configure_logging("INFO", "WARNING", [API_KEY, "x"])
    logging.getLogger().addHandler(recorder)
    logging.getLogger("graphs.llm").warning(
        "HTTP 400: [json.exception.type_error.302] for %s", API_KEY
    )
    assert "[json.exception.type_error.302]" in recorder.text
    assert API_KEY not in recorder.text


def test_row_l_third_party_loggers_stay_quiet_unless_asked(recorder: Recorder) -> None:
    configure_logging("DEBUG", "WARNING", [TOKEN])
    logging.getLogger().addHandler(recorder)
    for name in ("httpx", "httpcore.http11", "telegram.ext.ExtBot", "apscheduler.scheduler"):
        logging.getLogger(name).debug("POST %s body=%s", f"/bot{TOKEN}/sendMessage", "hello")
        logging.getLogger(name).info("request to /bot%s", TOKEN)
    logging.getLogger("bot.app").debug("own debug line")
    assert recorder.lines == ["DEBUG bot.app: own debug line"]

    configure_logging("INFO", "DEBUG", [TOKEN])
    logging.getLogger("telegram.ext.ExtBot").debug("POST %s", f"/bot{TOKEN}/sendMessage")
    logging.getLogger("bot.app").debug("hidden at INFO")
    assert recorder.lines[1:] == ["DEBUG telegram.ext.ExtBot: POST /bot[REDACTED]/sendMessage"]


async def test_row_l_aiosqlite_sql_parameters_do_not_appear(
    recorder: Recorder, tmp_path: Path
) -> None:
    canary = "canary-note-about-the-salary-of-Ann"
    configure_logging("DEBUG", "WARNING", [TOKEN])
    logging.getLogger().addHandler(recorder)
    async with Database(tmp_path / "lore.sqlite3") as database:
        assert await database.fetch_value("SELECT ?", (canary,)) == canary
        assert canary not in recorder.text

        # The separate switch is real: asked for, aiosqlite logs statements with parameters.
        configure_logging("DEBUG", "DEBUG", [TOKEN])
        assert await database.fetch_value("SELECT ?", (canary,)) == canary
    assert canary in recorder.text
    assert any(line.startswith("DEBUG aiosqlite:") for line in recorder.lines)


def test_row_l_every_secret_setting_is_redacted() -> None:
    settings = load_settings(
        _env_file=None,
        telegram_bot_token=TOKEN,
        telegram_webhook_url="https://lore.example.org/telegram",
        telegram_webhook_secret=WEBHOOK_SECRET,
        llm_api_key=API_KEY,
        qdrant_api_key="qdrant-key-0123456789",
    )
    assert sorted(settings.secret_values()) == sorted(
        [TOKEN, WEBHOOK_SECRET, API_KEY, "qdrant-key-0123456789"]
    )
    assert load_settings(_env_file=None).secret_values() == []
    assert load_settings(_env_file=None).log_level_third_party == "WARNING"
