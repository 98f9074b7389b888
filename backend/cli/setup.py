"""`python -m backend setup`: every offline model file fetched, checked and exported once."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def run(args, settings) -> dict:
    """Assemble the offline model files once (verified by sha256), export the person and object
    detectors for their runtime, the frame and place taggers, the activity classifier and the
    text embedder to ONNX, and choose each network's runtime for this CPU (`models/runtimes.py`),
    so the first ingest is quick. Without the object detector, a tagger or the activity
    classifier the rest still works: setup says exactly what failed, and ingest tracks people
    and moving things only, or records no tags or activities."""
    from backend.factory import ModelSet
    from models import coco, weights, wheel_weights
    from models.tracker import Tracker

    detector = Tracker(weights=settings.detector_weights, device=settings.device,
                       runtime=settings.detector_runtime, cache_dir=settings.cache_dir)
    prepared = {f"detector ({detector.runtime})": detector.weights_path,
                "whisper-base": weights.whisper_base_dir(settings.cache_dir)}
    for size in ("1.5b", "0.5b"):
        prepared[f"qwen2.5-coder-{size}"] = weights.qwen_gguf(settings.cache_dir, size)
    if settings.objects_enabled:
        try:
            chosen = settings.objects_weights or wheel_weights.DEFAULT
            if chosen == "nanodet":
                coco.build(settings.cache_dir)
            elif chosen in wheel_weights.CANDIDATES:
                wheel_weights.fetch(wheel_weights.CANDIDATES[chosen], settings.cache_dir)
            objects = ModelSet(settings).objects
            prepared[f"objects ({objects.name})"] = objects.detector.path
        except weights.WeightsError as e:
            log.warning("the COCO object detector is not ready: %s", e)
            prepared["objects"] = f"not ready, ingest tracks people and moving things only: {e}"
    if settings.crowd_detector != "off":
        try:
            if settings.crowd_detector in wheel_weights.CANDIDATES:
                wheel_weights.fetch(wheel_weights.CANDIDATES[settings.crowd_detector],
                                    settings.cache_dir)
            crowd = ModelSet(settings).crowd_tracker
            if crowd is None:
                raise weights.WeightsError(f"{settings.crowd_detector} could not be loaded")
            prepared[f"crowd detector ({crowd.runtime})"] = crowd.weights_path
        except weights.WeightsError as e:
            log.warning("the crowd detector is not ready: %s", e)
            prepared["crowd detector"] = f"not ready, crowds are tracked with the person detector: {e}"
    from models import places, video_actions

    models = ModelSet(settings)
    # (what, whether it is on, its fetch and export, how to build it, what ingest does without)
    for what, on, fetch, build, without in (
            ("frame tagger", settings.tags_enabled, None, lambda: models.tagger,
             "frames get no tags"),
            ("place tagger", settings.places_enabled, places.exported, lambda: models.places,
             "frames get no place tags"),
            ("activity classifier", settings.activities_enabled, video_actions.exported,
             lambda: models.video_actions, "videos get no activities"),
            # Its networks come with RapidOCR; building it here probes their runtime once.
            ("text reader", True, None, lambda: models.ocr, "on-screen text is not read"),
            ("text embedder", True, None, lambda: models.embedder,
             "nothing can be embedded, so neither ingest nor memory works")):
        if not on:
            continue
        try:
            if fetch is not None:
                fetch(settings.cache_dir, fetch=True)
            model = build()
            prepared[f"{what} ({model.name})"] = model.path
        except weights.WeightsError as e:
            log.warning("the %s is not ready: %s", what, e)
            prepared[what] = f"not ready, {without}: {e}"
    return {name: str(path) for name, path in prepared.items()}
