"""One grading run per backend pass, shared by tests/test_exercises.py and
tests/test_exercises_lab.py: every solution, every untouched exercise, known mistakes made by
editing a solution, and the broken code of exercise 15, graded together so the backend's
workers start once and, on JAX, share one compilation cache.

Each backend pass grades two of the six known mistakes of exercises 16 and 18, a different
two per backend (the grader names a known mistake in the parent, from the outputs), so the
three passes together cover all six.
"""
from __future__ import annotations

import re
from pathlib import Path

import keras

from kerasattn._env import BACKENDS
from kerasattn.grader import grade

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.py"))
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.py"))

# Known mistakes, made by a textual edit of the solution: (stem, old, new, expected name).
MUTATIONS = [
    ("03_masked_softmax", 'mask = ops.cast(mask, "bool")\n',
     'mask = ops.logical_not(ops.cast(mask, "bool"))\n',
     "inverted mask"),
    ("05_scaled_dot_product", " / math.sqrt(q.shape[-1])", "",
     "missing 1/sqrt(d_k) scaling"),
    ("06_split_merge_heads",
     "x = ops.reshape(x, (batch, length, num_heads, d_model // num_heads))  # (B, T, h, d_h)\n"
     "    return ops.transpose(x, (0, 2, 1, 3))",
     "return ops.reshape(x, (batch, num_heads, length, d_model // num_heads))",
     "without transposing"),
    ("07_causal_mask", "ops.less_equal(j, i)", "ops.less(j, i)", "causal mask shifted by one"),
    ("12_beam_search_step", "ops.power(cand_lengths, alpha)", "1.0",
     "length penalty not applied"),
    ("12_beam_search_step",
     "done = ops.logical_or(ops.take_along_axis(finished, parent, axis=1),\n"
     "                          ops.equal(token, eos_id))",
     "done = ops.take_along_axis(finished, parent, axis=1)",
     "a beam that has just produced <eos> is not marked finished"),
    ("14_debug_uniform_attention", "scale = 1 / math.sqrt(d_k)", "scale = 1 // math.sqrt(d_k)",
     "scores scaled to zero"),
    ("19_multihead_decoder_step", "/ math.sqrt(self.d_h)", "/ math.sqrt(self.d_model)",
     "1/sqrt(d_model) instead of 1/sqrt(d_h)"),
    ("20_encoder_block", "f = self.ffn(z)", "f = self.ffn(h)", "FFN applied to H instead of Z"),
    ("21_self_attention_gru_decoder", "self.self_attention(x, x, use_causal_mask=True,",
     "self.self_attention(x, x,", "causal mask missing in the self-attention"),
    ("22_assemble_transformer",
     "    h = PositionalEncoding(dropout=dropout, scale_inputs=True)(h)", "    pass",
     "no positional encoding on the encoder side"),
    ("23_label_smoothed_loss", "epsilon / (vocab_size - 1) * not_pad", "epsilon / vocab_size",
     "smoothing mass over the pad token"),
    ("24_warmup_schedule", 'ops.cast(iteration, "float32") + 1.0', 'ops.cast(iteration, "float32")',
     "off by one"),
    ("25_greedy_decoding",
     "token = ops.where(finished, ops.full_like(token, pad_id), token)  # finished: <pad>\n"
     "        ", "", "finished rows not stopped"),
    ("26_bleu_statistics", "min(count, max_ref[gram])", "count * (max_ref[gram] > 0)",
     "n-gram counts not clipped"),
]

# Mistakes a property check (not a reference comparison) must catch: (stem, old, new, the
# name of the check that must fail).
CHECK_MUTATIONS = [
    ("13_assemble_step4_model",
     "    y = PositionalEncoding(dropout=dropout, scale_inputs=True)(y)  "
     "# X = sqrt(d) Embed(y_in) + PE\n", "", "the decoder adds positional encodings"),
    ("09_add_norm", "        y = self.dropout(y, training=training)  # (B, T, D)\n", "",
     "in training, dropout acts on y only"),
    # AddNorm's arguments swapped: the same numbers without dropout, not while training
    ("10_decoder_block", "self.add_norm_1(x, a1, training=training)",
     "self.add_norm_1(a1, x, training=training)",
     "each AddNorm takes the residual first (dropout on the sublayer's output)"),
    ("20_encoder_block", "self.add_norm_1(h, a, training=training)",
     "self.add_norm_1(a, h, training=training)",
     "each AddNorm takes the residual first (dropout on the sublayer's output)"),
    ("21_self_attention_gru_decoder", "self.add_norm_1(x, a1, training=training)",
     "self.add_norm_1(a1, x, training=training)",
     "each AddNorm takes the residual first (dropout on the sublayer's output)"),
]

# Known mistakes in the week-4 exercises 16 and 18, in the same form.
LAB_MUTATIONS = [
    ("16_lab_bahdanau_model", "memory_mask=source_mask)  # (B, 2u), (B, S)",
     "memory_mask=None)  # (B, 2u), (B, S)",
     "source mask ignored"),
    ("16_lab_bahdanau_model", "h_enc, _, h_bwd = self.encoder(", "h_enc, h_bwd, _ = self.encoder(",
     "s_0 from the forward GRU's final state"),
    ("16_lab_bahdanau_model", "[self.tgt_embedding(y_prev), c_t]",
     "[c_t, self.tgt_embedding(y_prev)]", "GRU input ordered [c_t; y_{t-1}]"),
    ("18_coverage", "loss = loss + coverage_loss(alpha, coverage)",
     "loss = loss + coverage_loss(alpha, coverage + alpha)",
     "loss computed after adding the step's own weights"),
    ("18_coverage", "wc = coverage[:, :, None] * self.w_c", "wc = 0.0 * self.w_c",
     "coverage term missing"),
    ("18_coverage", "ops.minimum(weights, coverage)", "ops.maximum(weights, coverage)",
     "max instead of min"),
]


#: the lab mutations this backend's pass grades (k % 3 == the backend's index)
LAB_HERE = [k for k in range(len(LAB_MUTATIONS))
            if k % len(BACKENDS) == BACKENDS.index(keras.backend.backend())]


def broken_15(text: str) -> str:
    """Exercise 15 with its ``raise`` lines deleted: the student's code, bugs and all."""
    return re.sub(r' *raise NotImplementedError\(\n *"[^"]*"\)\n', "", text)


def _mutant(tmp_path_factory, folder: str, stem: str, old: str, new: str) -> Path:
    text = (ROOT / "solutions" / f"{stem}.py").read_text()
    assert text.count(old) == 1, f"mutation of {stem} no longer applies: {old!r}"
    path = tmp_path_factory.mktemp(folder) / f"{stem}.py"
    path.write_text(text.replace(old, new))
    return path


def grade_course(tmp_path_factory) -> dict:
    """Grade it all on this backend.

    Returns:
        ``backend``, ``result`` (the grader's dict) and ``by_folder``: ``solutions`` and
        ``exercises`` (stem -> exercise result), ``mutant`` (index into MUTATIONS -> result:
        one exercise may have several), ``check`` (stem -> result, one per entry of
        CHECK_MUTATIONS),
        ``lab`` (index into LAB_MUTATIONS -> result) and ``broken`` (the broken exercise
        15).
    """
    files = [_mutant(tmp_path_factory, f"mutant{k}_", stem, old, new)
             for k, (stem, old, new, _) in enumerate(MUTATIONS)]
    files += [_mutant(tmp_path_factory, f"lab{k}_", *LAB_MUTATIONS[k][:3]) for k in LAB_HERE]
    files += [_mutant(tmp_path_factory, f"check{k}_", stem, old, new)
              for k, (stem, old, new, _) in enumerate(CHECK_MUTATIONS)]
    broken = broken_15((ROOT / "exercises" / "15_debug_the_the_the.py").read_text())
    assert "raise NotImplementedError" not in broken
    path = tmp_path_factory.mktemp("broken") / "15_debug_the_the_the.py"
    path.write_text(broken)
    files.append(path)
    backend = keras.backend.backend()
    # two sandboxed cases at a time, as `kerasattn grade` does on two cores
    result = grade([*SOLUTIONS, *files, ROOT / "exercises"], backends=(backend,), jobs=2)
    by_folder = {"lab": {}}
    for ex in result["exercises"]:
        folder = Path(ex["path"]).parent.name
        if folder.startswith("lab"):
            by_folder["lab"][int(folder[3:].split("_")[0])] = ex
            continue
        if folder.startswith("mutant"):
            by_folder.setdefault("mutant", {})[int(folder[6:].split("_")[0])] = ex
            continue
        key = next((k for k in ("broken", "check") if folder.startswith(k)), folder)
        by_folder.setdefault(key, {})[ex["exercise"]] = ex
    return {"backend": backend, "result": result, "by_folder": by_folder}
