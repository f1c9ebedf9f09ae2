"""``TranslationDataset``: teacher-forcing batches as a ``keras.utils.PyDataset``.

Kept apart from :mod:`kerasattn.data.batching` so that building a corpus, vocabularies and
arrays does not import keras (and so does not fix the backend).
"""
from __future__ import annotations

import keras
import numpy as np

from kerasattn.data.batching import (
    INPUT_KEYS,
    LABEL_KEY,
    _check_arrays,
    _take,
    _trimmed_widths,
    batch_plan,
    check_bucket,
)

__all__ = ["TranslationDataset"]


def _widen(x: dict, y: np.ndarray, s: int, t: int):
    """Right-pad a batch with ``<pad>`` to source width ``s`` and target width ``t``."""
    def pad(a, width):
        return np.pad(a, ((0, 0), (0, max(0, width - a.shape[1]))))
    return ({"encoder_inputs": pad(x["encoder_inputs"], s),
             "decoder_inputs": pad(x["decoder_inputs"], t)}, pad(y, t))


class TranslationDataset(keras.utils.PyDataset):
    """A ``keras.utils.PyDataset`` of teacher-forcing batches for ``model.fit``.

    Works the same on TensorFlow, JAX and PyTorch (no tf.data). Reshuffles every epoch,
    deterministically: epoch ``e`` uses seed ``seed + e``.

    Args:
        arrays: dict from :func:`make_arrays`.
        batch_size, shuffle, seed, bucket, pad_multiple, drop_remainder: see
            :func:`batch_iterator`.
        **kwargs: ``workers``, ``use_multiprocessing``, ``max_queue_size`` of PyDataset.

    Example::

        data = make_arrays(corpus.train, src_vocab, tgt_vocab)
        model.fit(TranslationDataset(data, batch_size=64, bucket=True), epochs=5)
    """

    def __init__(self, arrays: dict, batch_size: int = 64, shuffle: bool = True,
                 seed: int = 0, bucket: bool | str = False, pad_multiple: int = 8,
                 drop_remainder: bool = False, **kwargs):
        super().__init__(**kwargs)
        check_bucket(bucket)
        if not isinstance(pad_multiple, (int, np.integer)) or pad_multiple < 1:
            raise ValueError(f"pad_multiple must be an int >= 1, received {pad_multiple!r}")
        self.arrays = {k: np.asarray(arrays[k], dtype="int32")
                       for k in (*INPUT_KEYS, LABEL_KEY) if k in arrays}
        self.batch_size, self.shuffle, self.seed = batch_size, shuffle, seed
        self.bucket, self.pad_multiple, self.drop_remainder = bucket, pad_multiple, drop_remainder
        self.epoch = 0
        self._widen = None      # (source, target) width of batch 1, when it must be wider
        self._plan = self._make_plan(seed)
        if not self._plan:
            raise ValueError(f"no batches: {_check_arrays(arrays)} rows with "
                             f"batch_size={batch_size} and drop_remainder={drop_remainder}")

    def __len__(self) -> int:
        return len(self._plan)

    def __getitem__(self, index: int):
        if not 0 <= index < len(self._plan):
            raise IndexError(f"batch index {index} out of range [0, {len(self._plan)})")
        x, y = _take(self.arrays, self._plan[index], self.bucket, self.pad_multiple)
        if index == 1 and self._widen is not None:
            x, y = _widen(x, y, *self._widen)
        return x, y

    def on_epoch_end(self):
        self.epoch += 1
        self._plan = self._make_plan(self.seed + self.epoch)

    def _make_plan(self, seed: int) -> list:
        plan = batch_plan(self.arrays, self.batch_size, self.shuffle, seed, self.bucket,
                          self.drop_remainder)
        if self.bucket and len(plan) > 2:
            plan = self._widths_differ_first(plan)
        return plan

    def _widths_differ_first(self, plan: list) -> list:
        # Keras on TensorFlow fixes the input signature from the first two batches
        # (NUM_BATCHES_FOR_TENSOR_SPEC): if they happen to share a width, a later, wider
        # bucket fails with "yielded an element of shape (64, 24) where (None, 16) was
        # expected". Move a batch whose source AND target widths differ from batch 0's into
        # slot 1 (deterministic; the rest of the order is unchanged).
        keys = (*INPUT_KEYS, LABEL_KEY)
        widths = [_trimmed_widths(*(self.arrays[k][idx] for k in keys), self.pad_multiple)
                  for idx in plan]
        score = [sum(a != b for a, b in zip(w, widths[0])) for w in widths]
        j = 1 + int(np.argmax(score[1:]))
        if score[j] > score[1]:
            plan = list(plan)
            plan[1], plan[j] = plan[j], plan[1]
            widths[1], widths[j] = widths[j], widths[1]
        # a width that varies somewhere but is equal in batches 0 and 1 would be fixed in
        # the signature: batch 1 then gets one more pad_multiple of padding (masked) there
        self._widen = None
        varies = [len({w[d] for w in widths}) > 1 for d in range(2)]
        if any(v and widths[0][d] == widths[1][d] for d, v in enumerate(varies)):
            self._widen = tuple(widths[1][d] + self.pad_multiple
                                if varies[d] and widths[0][d] == widths[1][d]
                                else widths[1][d] for d in range(2))
        return plan
