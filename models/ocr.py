"""On-screen text reading with RapidOCR (PP-OCRv4 ONNX models shipped inside the wheel).

RapidOCR treats a 3-channel ndarray as BGR (OpenCV order); :meth:`TextReader.read` takes RGB
frames (as decord and PyAV give them) and flips the channels itself.

Speed: text detection dominates the cost. RapidOCR's own detector sizing only ever *enlarges*
(shorter side up to 736 px; its "max" mode ignores the configured length and picks 960/1500/2000
from the frame size), so a 1280x720 frame is detected at 1312x736 (~2 s on 2 CPU cores). With
``det_short_side`` set, the detector input is scaled, up or down, so that its shorter side is that
many pixels; recognition still reads crops from the full-resolution frame, so small text keeps
its detail. 480 keeps 240-line CCTV overlays and HD captions readable at about half the time.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from models.types import TextItem

# The inputs the runtime probe times RapidOCR's two networks on: a frame's detector input at
# the 480 px short side, and a batch of six 48 px lines of text (its recogniser's batch).
_PROBES = {"Det": (1, 3, 480, 864), "Rec": (6, 3, 48, 320)}


class TextReader:
    """Read lines of text in a frame.

    min_confidence: lines whose recognition score is below this are dropped.
    det_short_side: shorter side of the detector input in pixels (frames are scaled up or down
        to it); None keeps RapidOCR's own sizing (det_limit_side_len / det_limit_type).
    use_cls: run the 180-degree text-direction classifier (rarely needed for video overlays).
    threads: the networks' threads (None = all cores).
    cache_dir: where the runtime chosen for the detector and recogniser is remembered; None
        leaves them on RapidOCR's own ONNX Runtime sessions.
    """

    def __init__(
        self,
        min_confidence: float = 0.5,
        det_short_side: int | None = 480,
        det_limit_side_len: int = 736,
        det_limit_type: str = "min",
        use_cls: bool = False,
        threads: int | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        import rapidocr_onnxruntime
        from rapidocr_onnxruntime import RapidOCR

        self.path = Path(rapidocr_onnxruntime.__file__).parent / "models"  # its networks
        self.min_confidence = float(min_confidence)
        self.use_cls = use_cls
        self._ocr = RapidOCR(
            text_score=self.min_confidence,
            use_cls=use_cls,
            det_limit_side_len=int(det_limit_side_len),
            det_limit_type=det_limit_type,
            intra_op_num_threads=int(threads or -1),
        )
        self.det_short_side = None
        if det_short_side:
            self.det_short_side = _set_detector_short_side(self._ocr, int(det_short_side))
        runs_on = "ONNX Runtime"
        if cache_dir is not None:
            runs_on = _faster_sessions(self._ocr, threads or os.cpu_count() or 1, Path(cache_dir))
        size = (f"short side {self.det_short_side}" if self.det_short_side
                else f"{det_limit_type} {det_limit_side_len}")
        self.name = (f"RapidOCR PP-OCRv4 on {runs_on} (det {size}, "
                     f"cls {'on' if use_cls else 'off'})")

    def read(self, frame_rgb: np.ndarray, min_confidence: float | None = None) -> list[TextItem]:
        """Text lines in an RGB (H, W, 3) uint8 frame, top-to-bottom, with axis-aligned boxes."""
        if frame_rgb is None or frame_rgb.size == 0:
            return []
        img = np.asarray(frame_rgb)
        if img.ndim == 3 and img.shape[2] == 3:
            img = np.ascontiguousarray(img[:, :, ::-1])  # RGB -> BGR
        if img.dtype != np.uint8:
            img = np.clip(img, 0, 255).astype(np.uint8)
        # Never pass kwargs to the call: RapidOCR then resets box_thresh/unclip_ratio/text_score.
        result, _ = self._ocr(img)
        floor = self.min_confidence if min_confidence is None else float(min_confidence)
        items: list[TextItem] = []
        for poly, text, score in result or []:
            text = str(text).strip()
            score = float(score)
            if not text or score < floor:
                continue
            pts = np.asarray(poly, dtype=np.float32).reshape(-1, 2)
            x1, y1 = pts.min(axis=0)
            x2, y2 = pts.max(axis=0)
            items.append(TextItem(text, (float(x1), float(y1), float(x2), float(y2)), round(score, 4)))
        items.sort(key=lambda it: (it.box[1], it.box[0]))
        return items


def _set_detector_short_side(ocr, side: int) -> int | None:
    """Make RapidOCR's text detector scale every input so its shorter side is ``side`` pixels.

    Replaces the detector's preprocessing step on this instance only. Returns ``side``, or None
    (RapidOCR's own sizing stays) if this RapidOCR version is laid out differently.
    """
    try:
        import cv2
        from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

        det = ocr.text_det
        det.get_preprocess  # noqa: B018 (only its presence is checked: a layout this code knows)
    except (ImportError, AttributeError):
        return None

    class _ShortSide(DetPreProcess):
        def resize(self, img: np.ndarray):
            h, w = img.shape[:2]
            ratio = side / float(min(h, w))
            rh = max(32, int(round(h * ratio / 32)) * 32)
            rw = max(32, int(round(w * ratio / 32)) * 32)
            if (rh, rw) == (h, w):
                return img
            interp = cv2.INTER_AREA if ratio < 1 else cv2.INTER_LINEAR
            return cv2.resize(img, (rw, rh), interpolation=interp)

    pre = _ShortSide(side, "min", getattr(det, "mean", None), getattr(det, "std", None))
    det.get_preprocess = lambda max_wh: pre
    return side


def _faster_sessions(ocr, threads: int, cache_dir: Path) -> str:
    """Put RapidOCR's text detector and recogniser on whichever runtime runs each faster on this
    CPU (`models/runtimes.py`), in float32 whatever the CPU, so the text read is the same on
    every machine; their sessions then also sleep between runs instead of spinning. Returns
    what runs them."""
    from rapidocr_onnxruntime.main import DEFAULT_CFG_PATH, read_yaml, update_model_path

    from models import runtimes

    config = update_model_path(read_yaml(DEFAULT_CFG_PATH))
    ran = []
    # RapidOCR keeps each ONNX Runtime session in a wrapper that calls its `run`.
    for part, engine in (("Det", ocr.text_det.infer), ("Rec", ocr.text_rec.session)):
        path = Path(config[part]["model_path"])
        engine.session = runtimes.open_session(
            path, threads, probe=_PROBES[part], precision="f32",
            record=cache_dir / "ocr-runtimes" / f"{path.name}.runtimes.json")
        ran.append(runtimes.runtime_of(engine.session))
    return " and ".join(dict.fromkeys(ran))
