# flashjudge images, one Dockerfile, several targets:
#   api     the web service, the control worker and the migrations (no CUDA: python slim)
#   flower  the api image plus Celery Flower (optional monitoring)
#   worker  GPU judge workers: CUDA devel (nvcc), bubblewrap, CuPy
# Base images and every Python package are pinned (docker/constraints.txt); bump them on purpose,
# as docs/deployment.md "Upgrading" describes.

ARG PYTHON_IMAGE=python:3.12.11-slim-bookworm
ARG CUDA_IMAGE=nvidia/cuda:12.9.1-devel-ubuntu24.04

# --- wheels: the project and its pinned dependencies, built once, installed by both images ---
FROM ${PYTHON_IMAGE} AS wheels
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY docker/constraints.txt /src/docker/constraints.txt
COPY pyproject.toml README.md /src/
COPY flashjudge /src/flashjudge
COPY flashjudge_cli /src/flashjudge_cli
COPY app /src/app
COPY worker /src/worker
COPY kernels /src/kernels
COPY testcases /src/testcases
RUN pip wheel --wheel-dir /wheels -c docker/constraints.txt '.[gpu]'

# --- api: uvicorn, the control worker and `alembic upgrade` all run from this image ---
FROM ${PYTHON_IMAGE} AS api
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
    FLASHJUDGE_DATA_DIR=/var/lib/flashjudge
RUN groupadd --system --gid 10001 flashjudge \
 && useradd --system --uid 10001 --gid flashjudge --home-dir /var/lib/flashjudge \
      --create-home --shell /usr/sbin/nologin flashjudge \
 && install -d -o flashjudge -g flashjudge /var/lib/flashjudge/custom
COPY --from=wheels /wheels /tmp/wheels
COPY docker/constraints.txt /tmp/constraints.txt
RUN pip install --no-index --find-links /tmp/wheels -c /tmp/constraints.txt flashjudge \
 && rm -rf /tmp/wheels /tmp/constraints.txt
COPY --chmod=0755 docker/healthcheck.py /usr/local/bin/flashjudge-healthcheck
# Nothing here needs root: the API and the control worker only talk to PostgreSQL and Redis.
USER flashjudge
WORKDIR /var/lib/flashjudge
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["flashjudge-healthcheck", "http", "http://127.0.0.1:8000/healthz"]
CMD ["uvicorn", "app.main:create_app", "--factory", "--host", "0.0.0.0", "--port", "8000"]

# --- flower: optional queue monitoring (compose profile "flower") ---
FROM api AS flower
USER root
COPY docker/constraints.txt /tmp/constraints.txt
RUN pip install -c /tmp/constraints.txt flower && rm -rf /tmp/constraints.txt
USER flashjudge
EXPOSE 5555
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["flashjudge-healthcheck", "http", "http://127.0.0.1:5555/healthcheck"]
CMD ["celery", "--app", "worker.celery_adapter.entry:app", "flower", "--port=5555"]

# --- worker: judges CUDA submissions on this node's GPUs ---
FROM ${CUDA_IMAGE} AS worker
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
    DEBIAN_FRONTEND=noninteractive \
    FLASHJUDGE_DATA_DIR=/var/lib/flashjudge \
    FLASHJUDGE_CGROUP_ROOT=/sys/fs/cgroup/judge \
    PATH=/opt/flashjudge/bin:/usr/local/cuda/bin:${PATH}
# bubblewrap: the sandbox; make + g++: submissions' Makefiles and nvcc's host compiler;
# util-linux: setpriv, which drops every capability the sandbox does not need.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      python3 python3-venv bubblewrap make g++ util-linux ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# The worker's data (suite cache, expected outputs) is root's alone: judged programs run as uid
# 65534 and read their input from the tmpfs copy in /dev/shm. custom/ is shared with the api
# (uid 10001), which stores the uploads there.
RUN install -d -m 0700 /var/lib/flashjudge \
 && install -d -m 0755 -o 10001 -g 10001 /var/lib/flashjudge/custom
COPY --from=wheels /wheels /tmp/wheels
COPY docker/constraints.txt /tmp/constraints.txt
RUN python3 -m venv /opt/flashjudge \
 && /opt/flashjudge/bin/pip install --no-index --find-links /tmp/wheels \
      -c /tmp/constraints.txt 'flashjudge[gpu]' \
 && rm -rf /tmp/wheels /tmp/constraints.txt
COPY --chmod=0755 docker/healthcheck.py /usr/local/bin/flashjudge-healthcheck
COPY --chmod=0755 docker/worker-entrypoint.sh /usr/local/bin/flashjudge-worker-entrypoint
WORKDIR /var/lib/flashjudge
# Least privilege for the worker (docker/worker-entrypoint.sh says why in full): the entrypoint
# uses CAP_SYS_ADMIN once to give the sandbox a cgroup subtree, then runs the worker as uid 0
# with only chown, dac_override, fowner, kill, setgid and setuid, and no_new_privs. Those let it
# run every judged program as uid 65534, which owns nothing of the judge.
ENTRYPOINT ["flashjudge-worker-entrypoint"]
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
  CMD ["flashjudge-healthcheck", "worker"]
CMD ["flashjudge", "worker", "--gpus", "all"]
