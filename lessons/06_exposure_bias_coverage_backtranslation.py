# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 06: exposure bias, coverage and back-translation
#
# Lesson 00's Bahdanau model learns the built-in corpus almost perfectly from its 10,000
# training pairs. Real translation systems rarely have that luxury, and three classic
# additions to the attention model address what goes wrong when data or training is short:
#
# - **scheduled sampling** (Bengio et al., 2015), against *exposure bias*: a decoder
#   trained only on correct previous words meets its own mistakes for the first time when
#   it translates;
# - **coverage** (Tu et al., 2016; See et al., 2017), against *repeated and dropped words*:
#   nothing in plain attention remembers which source words were already translated;
# - **back-translation** (Sennrich, Haddow and Birch, 2016), against *scarce parallel
#   data*: target-language text alone becomes extra training pairs.
#
# Their effects show where the base model makes mistakes, so this lesson trains in a
# low-resource setting: a small share of the training split as parallel pairs, and the
# French side of other training pairs as French-only text (their English is never used).
#
# **How the comparisons are made.** One base model trains first. Then its training
# continues four ways from the same weights, each with the same time budget (early stopping
# or the epoch cap can end a run sooner): plain teacher forcing (the reference), scheduled
# sampling and coverage (which run the reference's number of training steps instead), and
# back-translated data. Each addition is judged against the plain continuation, so a
# difference does not come from a different start or a different budget (it can still
# come from chance in a single run, and for back-translation from the epochs it fits in
# that time).
# (Bengio et al.'s schedule starts with (nearly) pure teacher forcing anyway; a coverage
# model starts from the base model's weights with its coverage weight $w_c$ new.) All are
# scored on the same test sentences, which include sentences longer than any seen in
# training.

# %%
from kerasattn.course import Lesson, format_table, parse_lesson_args

# 3.25 minutes of training in 8 equal shares: 2 for the base model, 2 for the
# French-to-English model, 1 for each of the four continuations (scheduled sampling and
# coverage: the plain continuation's training steps, which take a little longer; their cap
# is 2 shares). The lesson also decodes thousands of sentences. On a real file (--data),
# 16 minutes: see below.
settings = parse_lesson_args(6, "Lesson 06: exposure bias, coverage and back-translation",
                             n_models=8, lesson_minutes=3.25, data_minutes=16)
lesson = Lesson(6, "exposure bias, coverage and back-translation", settings)

# the kit's modules that import keras, once the options have chosen its backend
import numpy as np
from kerasattn import metrics, plots
from kerasattn.course.backtranslation import (
    back_translate,
    reversed_data,
    split_parallel_and_monolingual,
    with_training_pairs,
)
from kerasattn.course.data import spread

# %% [markdown]
# ## The low-resource setting
#
# A tenth of the training split (at most 1,000 pairs) is the parallel data; the French
# side of as many other training pairs is the French-only text used by back-translation
# (one synthetic pair per real one). The vocabularies are those of the whole training
# split, so every model reads and writes the same words. The models are scored on 300
# test sentences spread over all lengths (the full test split has the same length mix).
#
# On a real file (`--data`) so few pairs teach a model next to nothing in minutes (a real
# file's vocabulary runs to thousands of words): half the training
# split, at most 10,000 pairs, is the parallel data, and the lesson's default budget is 16
# minutes instead of 3.25 (`--minutes` sets the budget per share).

# %%
data = lesson.data
SRC, TGT = (data.src_lang, data.tgt_lang) if data.real else ("English", "French")  # --data
n_parallel = min(1000, len(data.train_pairs) // 10 or 1)
if data.real:
    n_parallel = min(10_000, len(data.train_pairs) // 2 or 1)
n_mono = min(n_parallel, len(data.train_pairs) - n_parallel)   # one synthetic pair per real one
parallel, french_only = split_parallel_and_monolingual(data, n_parallel, n_mono)
test = data.with_test_pairs(spread(data.test_pairs, 300))
small = with_training_pairs(test, parallel, f"{len(parallel):,} parallel pairs")
print(f"parallel pairs: {len(parallel):,}; {TGT}-only sentences: {len(french_only):,}; "
      f"test sentences: {len(test.test_pairs):,} "
      f"({sum(len(s.split()) > 30 for s, _ in test.test_pairs)} longer than 30 words)")
print(f"a {TGT}-only sentence:", french_only[0])

# %% [markdown]
# ## The base model, and its plain continuation
#
# Lesson 00's `bahdanau` (additive attention from $s_{t-1}$ inside the recurrence), trained
# with teacher forcing on the parallel pairs only, for two shares of the budget. Then the
# reference every addition is compared with: the same model trained on for one more share,
# still with teacher forcing.

# %%
from kerasattn.training import StepLimit

first = lesson.train("bahdanau", label="base (first phase)", data=small, budget_share=2)
plain_steps = StepLimit()                 # counts the plain continuation's training steps
base = lesson.train("bahdanau", label="base, teacher forcing", data=small, start_from=first,
                    callbacks=[plain_steps])
r_first = lesson.evaluate(first, data=test)
r_base = lesson.evaluate(base, data=test)

# %% [markdown]
# ## Exposure bias and scheduled sampling
#
# Training feeds the decoder the *reference* previous word $y_{t-1}$ (teacher forcing);
# translating feeds it its *own* previous word $\hat y_{t-1}$. The model never sees its own
# mistakes during training, so one wrong word at test time puts it in a state it was never
# trained on, and errors compound. This mismatch is called exposure bias.
#
# Scheduled sampling (Bengio et al., 2015) closes the gap gradually: at training step $i$,
# each decoder input is the reference token with probability $\epsilon_i$ (the
# teacher-forcing ratio) and the model's own greedy prediction
# $\arg\max_y p(y \mid s_{t-1}, c_{t-1})$ otherwise (Bengio et al. allow a sample from $p$
# or its argmax; the kit takes the argmax). Starting the ratio at (or near) 1
# and decaying it lets the model learn from clean inputs first. The linear schedule starts at
# $\epsilon_0 = 1$; the inverse sigmoid at $\epsilon_0 = k/(k+1)$, close to 1 for a large
# $k$:
#
# $$\epsilon_i = \max\bigl(\epsilon_{\min}, 1 - (1 - \epsilon_{\min})\, i / n\bigr)
#   \quad\text{(linear)}, \qquad
#   \epsilon_i = \frac{k}{k + \exp(i / k)} \quad\text{(inverse sigmoid)}.$$
#
# In the kit: build the model with `scheduled_sampling=True` and pass
# `train(..., teacher_forcing="linear:N:0.5")` (or a
# `kerasattn.training.TeacherForcingSchedule`). One coin per target token is drawn, all
# before the decoder loop; no gradient flows through the choice of token.
#
# Below, the base model's training continues on the same pairs with scheduled sampling for
# as many training steps as the plain continuation ran (`StepLimit`, as for coverage
# below), its ratio falling step by step from 1 to 0.5 over those steps
# (`TeacherForcingSchedule("linear", decay_steps=n, min_ratio=0.5)`: the schedule spans
# the steps this machine fitted in the plain continuation's share, however many). Then
# exposure bias
# itself: both models read each test target teacher-forced, once with the reference words
# and once with the second target word (decoder input 2, counting `<bos>` as input 0)
# replaced by a random wrong word, and we count how many of the later tokens (`<eos>`
# included) each model still predicts right. Scheduled sampling is meant to shrink that
# loss, since the model meets its own mistakes in training; the table shows whether it did
# in this run.

# %%
from kerasattn.course.lesson_helpers import accuracy_after_a_wrong_word
from kerasattn.training import TeacherForcingSchedule

# As many training steps as the plain continuation ran (its share of time is only a cap:
# a sampled step predicts its inputs first, so it costs more), the ratio falling over them.
n_steps = max(1, plain_steps.steps)
sampled_steps = StepLimit(n_steps)
schedule = TeacherForcingSchedule("linear", decay_steps=n_steps, min_ratio=0.5)
sampled = lesson.train("bahdanau", label="base, scheduled sampling", data=small,
                       start_from=first, model_kwargs={"scheduled_sampling": True},
                       teacher_forcing=schedule, callbacks=[sampled_steps], budget_share=2)
v = schedule.values
print(f"teacher-forcing ratio: {v[0]:.2f} at the first step, {v[len(v) // 2]:.2f} halfway, "
      f"{v[-1]:.2f} at the last ({len(v)} {schedule.per}{'s' if len(v) != 1 else ''}); "
      f"training steps: {plain_steps.steps} teacher-forced, {sampled_steps.steps} sampled")
lesson.record("training steps, scheduled sampling", {"teacher forcing": plain_steps.steps,
                                                     "scheduled sampling": sampled_steps.steps})
r_sampled = lesson.evaluate(sampled, data=test)
rows = []
for trained, r in ((base, r_base), (sampled, r_sampled)):
    acc = accuracy_after_a_wrong_word(trained.model, data, test.test_pairs)
    rows.append([trained.name, trained.epochs_run, f"{r['bleu']:.1f}", f"{acc['clean']:.1%}",
                 f"{acc['corrupted']:.1%}", f"{100 * acc['drop']:.1f} points"])
    lesson.record(f"after one wrong word: {trained.name}",
                  {k: float(acc[k]) for k in ("clean", "corrupted", "drop")})
print(format_table(["model", "epochs", "BLEU", "next words right", "after one wrong word",
                    "drop"],
                   rows))
lesson.curves([base.name, sampled.name], "curves_scheduled_sampling.png",
              title="teacher forcing vs scheduled sampling (linear, 1 -> 0.5)")

# %% [markdown]
# What to look for: the "drop" column is exposure bias in numbers, the accuracy a model
# loses after one wrong input word; it is there in both rows. Scheduled sampling aims at a
# smaller drop, possibly at some cost in accuracy on clean prefixes (it trains on fewer of
# them).
# Both continuations ran the same number of training steps (unless early stopping or the
# two-share cap ended the sampled run first: the printed counts), so a difference is not
# one of epochs (a sampled step costs more time: it predicts its next inputs first).
# Within one short continuation the two drops often differ by less than a point either
# way (docs/lessons.md lists the runs on each backend): the model's own predictions are
# right most of the time, so sampling them shows it few mistakes to recover from. A claim
# that scheduled sampling helps needs more than one run's difference of that size.

# %% [markdown]
# ## Repetition, dropped words and coverage
#
# Nothing in the attention of the previous sections remembers where it has already looked.
# A decoder can attend to the same source words again and again (and repeat their
# translation) or never attend to some (and drop them). Coverage (Tu et al., 2016, in the
# form of See et al., 2017) keeps the attention already paid to each source word,
# $\mathrm{cov}_{tj} = \sum_{t' < t} \alpha_{t'j}$, and gives it to the score:
#
# $$e_{tj} = v^\top \tanh(W s_{t-1} + U h_j + w_c\, \mathrm{cov}_{tj}),$$
#
# so the model can learn to look elsewhere (See et al. score from the current state $s_t$
# and add a bias $b_{\mathrm{attn}}$; the Bahdanau decoder here scores from $s_{t-1}$,
# without a bias). A coverage loss
# $\lambda \sum_t \sum_j \min(\alpha_{tj}, \mathrm{cov}_{tj})$ penalises looking again at
# covered words (See et al. average it over the target steps; the kit sums over the real
# target steps, padding left out, and averages over the batch, so its $\lambda = 1$ weighs
# about as much as their $\lambda = T$, $T$ the target's length). In the kit:
# `BahdanauAttention(units, coverage=True)`, or
# `build_model("bahdanau", ..., coverage=True, coverage_loss_weight=1.0)` (the decoder
# carries $\mathrm{cov}_t$ through its loop).
#
# A trained model can also be steered at decoding time only. Beam search with the coverage
# penalty of Wu et al. (2016) adds $\beta \sum_j \log \min(\sum_t \alpha_{tj}, 1)$ to a
# finished hypothesis's score: 0 when every source word received a total weight of at
# least 1, negative for every word whose total stays below 1, strongly so for a word the
# hypothesis ignored.
#
# Two counts measure the two errors. Against the reference: *extra* words (more copies of
# a word than the reference has: a repetition) and *missing* words (fewer: a drop),
# `metrics.word_counts_against_reference` (a wrong word choice counts once in each, so both
# counts hold more than repetitions and drops). In the attention: source words whose
# cumulative attention $\sum_t \alpha_{tj}$ stays below 0.5 (hardly read) or rises above
# 1.5 (read again and again). Both are counted on the test sentences longer than 20 words,
# where the base model goes wrong most. (On a real file: on all the test sentences when
# none is that long, and in characters when the target is written without spaces.)
#
# The coverage model continues the base model for as many training steps (batches) as the
# plain continuation ran, not for the same time: a coverage step costs a little more, and
# in one short share the models are on the steep part of their learning curve, where an
# epoch more or less moves BLEU by more than most methods do. `StepLimit()` counts the
# plain continuation's steps; `StepLimit(n)` stops the coverage run after the same `n`.

# %%
# As many training steps as the plain continuation ran (its share of time is only a cap:
# a coverage step costs a little more), so the comparison is of coverage, not of time.
coverage_steps = StepLimit(n_steps)
covered = lesson.train("bahdanau", label="base, coverage", data=small, start_from=first,
                       model_kwargs={"coverage": True, "coverage_loss_weight": 1.0},
                       callbacks=[coverage_steps], budget_share=2)
print(f"training steps: {plain_steps.steps} without coverage, {coverage_steps.steps} with")
lesson.record("training steps", {"teacher forcing": plain_steps.steps,
                                 "coverage": coverage_steps.steps})
r_covered = lesson.evaluate(covered, data=test)

LOW, HIGH = 0.5, 1.5
BY_CHARACTER = data.bleu_tokenize == "char"   # --data with a target written without spaces
UNIT = "characters" if BY_CHARACTER else "words"
long_pairs = [p for p in test.test_pairs if len(p[0].split()) > 20] or test.test_pairs


def cumulative(translation):
    """Total attention each source token received: (S,), averaged over heads."""
    a = translation.attention_map("cross")                # (h, T_out, S)
    return a.mean(axis=0).sum(axis=0)


def coverage_counts(trained, **decode_kwargs):
    """BLEU, extra and missing words, and the attention counts on ``long_pairs``."""
    translator = lesson.translator(trained, small)
    out = translator.decode([s for s, _ in long_pairs], attention=True, normalized=True,
                            detokenized=False, **decode_kwargs)
    hyps, refs = [t.text for t in out], [r for _, r in long_pairs]
    if BY_CHARACTER:  # a target written without spaces: count (and score) its characters
        hyps, refs = ([" ".join(x.replace(" ", "")) for x in xs] for xs in (hyps, refs))
    words = metrics.word_counts_against_reference(hyps, refs)
    totals = [cumulative(t) for t in out]
    return dict(bleu=metrics.corpus_bleu(hyps, refs), **words,
                low=int(sum((c < LOW).sum() for c in totals)),
                high=int(sum((c > HIGH).sum() for c in totals)),
                source_words=int(sum(len(c) for c in totals)), translations=out)


runs = {"teacher forcing, greedy": coverage_counts(base),
        "teacher forcing, beam 4": coverage_counts(base, beam=4, coverage_penalty=0.0),
        "teacher forcing, beam 4 + coverage penalty 0.2": coverage_counts(base, beam=4,
                                                                     coverage_penalty=0.2),
        "coverage, greedy": coverage_counts(covered)}
n_words = runs["teacher forcing, greedy"]["ref_words"]
n_src = runs["teacher forcing, greedy"]["source_words"]
which = ("test sentences longer than 20 words" if long_pairs is not test.test_pairs else
         "test sentences (none is longer than 20 words)")
SRC_UNIT = "tokens" if data.real else "words"   # subword pieces on a real file
print(f"{len(long_pairs)} {which} ({n_words:,} reference {UNIT}, {n_src:,} source {SRC_UNIT})")
print(format_table(["base model continued with", "BLEU", f"extra {UNIT}", f"missing {UNIT}",
                    f"source {SRC_UNIT} < {LOW}", f"source {SRC_UNIT} > {HIGH}"],
                   [[k, f"{r['bleu']:.1f}", r["extra"], r["missing"], r["low"], r["high"]]
                    for k, r in runs.items()]))
lesson.record("coverage, long test sentences",
              {k: {c: r[c] for c in ("bleu", "extra", "missing", "low", "high")}
               for k, r in runs.items()})

# %% [markdown]
# What to look for: with coverage, far fewer source words are hardly read (the
# "< 0.5" column), and fewer are missing from the translations; at the same number of
# training steps BLEU on the long sentences rises with them (docs/lessons.md lists the runs on each
# backend). Beam search alone, and with the coverage penalty, needs no training at all:
# compare its two rows, and compare them with the coverage model.
#
# Where the two models differ, on one long sentence: the total attention each source word
# received. The sentence is the one where coverage brings the totals closest to 1 compared
# with the plain model: the most favourable case, not a typical one. Bars near 1 are
# words read once; a bar near 0 is a word the translation skipped, a tall bar one it came
# back to.

# %%
plain, cov = runs["teacher forcing, greedy"]["translations"], \
    runs["coverage, greedy"]["translations"]
spread_of = [float(np.abs(cumulative(a) - 1).sum() - np.abs(cumulative(b) - 1).sum())
             for a, b in zip(plain, cov)]
k = int(np.argmax(spread_of))                  # where coverage helps the totals most
print("source:         ", long_pairs[k][0])
print("reference:      ", long_pairs[k][1])
print("teacher forcing:", plain[k].text)
print("coverage:       ", cov[k].text)
lesson.figure(plots.cumulative_attention, "cumulative_attention.png",
              {base.name: cumulative(plain[k]), covered.name: cumulative(cov[k])},
              plain[k].source_tokens, low=LOW, high=HIGH,
              title="attention received by each source word, summed over the translation")

# %% [markdown]
# ## Back-translation
#
# Parallel sentence pairs are scarce; text in the target language alone is plentiful.
# Back-translation (Sennrich et al., 2016) turns the second into the first:
#
# 1. train a model in the *reverse* direction (French to English) on the parallel pairs;
# 2. translate the French-only sentences into English with it;
# 3. add the pairs (synthetic English, real French) to the training data of the
#    English-to-French model.
#
# The source side is noisy, but the target side, the side the decoder learns to write, is
# real text, so the decoder's language model improves. Sennrich et al. report gains of 2.8
# to 3.7 BLEU on WMT 2015 English-German and German-English. Below, all three steps on
# this lesson's data; the base model's training then continues with the same budget as its
# plain continuation, on twice as many pairs.

# %%
import time

reverse = reversed_data(test, parallel, f"{len(parallel):,} parallel pairs, {TGT} to {SRC}")
backward = lesson.train("bahdanau", data=reverse, budget_share=2, label=f"{TGT} to {SRC}")
r_backward = lesson.evaluate(backward, data=reverse)
start = time.perf_counter()
synthetic = back_translate(lesson.translator(backward, reverse), french_only)
print(f"back-translated {len(synthetic):,} {TGT} sentences in "
      f"{time.perf_counter() - start:.1f} s; for example:")
for en, fr in synthetic[:2]:
    print(f"  {fr}\n    -> {en}")
augmented = with_training_pairs(
    test, parallel + synthetic,
    f"{len(parallel):,} parallel + {len(synthetic):,} back-translated pairs")
bt = lesson.train("bahdanau", label="base, back-translation", data=augmented,
                  start_from=first)
r_bt = lesson.evaluate(bt, data=test)
print(format_table([f"{SRC} to {TGT}, same test sentences", "training pairs", "epochs",
                    "BLEU", "exact match"],
                   [[t.name, f"{n:,}", t.epochs_run, f"{r['bleu']:.1f}",
                     f"{r['exact_match']:.1%}"]
                    for t, r, n in ((first, r_first, len(parallel)),
                                    (base, r_base, len(parallel)),
                                    (bt, r_bt, len(parallel) + len(synthetic)))]))
lesson.figure(plots.bleu_vs_length, "bleu_vs_length_backtranslation.png",
              {name: [(b["label"], b["bleu"]) for b in r["by_length"]]
               for name, r in ((base.name, r_base), (bt.name, r_bt))},
              counts=[b["n"] for b in r_base["by_length"]])

# %% [markdown]
# What to look for: back-translation buys real French at the price of noisy English, and,
# at equal training speed, of fewer passes over the clean pairs in the same time (each
# epoch now holds twice as many pairs; the epochs column can show otherwise when the runs
# trained at different speeds or the plain one stopped early: compare the train s and
# tokens/s columns of the summary at the end). In the runs docs/lessons.md lists, the
# continuation fitted 7 to 13 passes over the larger set, and BLEU and exact matches rose
# on every backend; only on JAX had it seen about as many target tokens as the plain
# continuation (+1.3 BLEU there), on the other two it had seen more. Where it fits only a
# few (a slower backend, a busier machine), it has seen no more target tokens than the
# plain continuation, so expect less from it. A larger `--minutes` fits more passes: compare for
# yourself.

# %% [markdown]
# ## Check your understanding
#
# **1.** Scheduled sampling feeds the decoder its own predictions during training. Why does
# the ratio start at 1 instead of at its final value?
#
# <details><summary>Answer</summary>
#
# Trained from scratch, a model's first predictions are noise: training on them would
# teach it to continue from random words before it knows the language. Starting with the
# reference words lets it learn first; the ratio then falls as its own predictions become
# worth learning from. (In this lesson the continuation starts from a trained model;
# starting at 1 keeps its first steps the same as the plain continuation's.)
#
# </details>
#
# **2.** Which of the two counts of the coverage table (extra words, missing words) does
# the coverage loss $\sum_j \min(\alpha_{tj}, \mathrm{cov}_{tj})$ act on directly, and why
# can it also reduce the other?
#
# <details><summary>Answer</summary>
#
# It penalises attending again to words already covered, so it acts on repetition (extra
# words) directly. Attention that may not return to covered words has to go somewhere, and
# the uncovered words are what is left, so drops can fall too.
#
# </details>
#
# **3.** Back-translated pairs have a noisy source and a clean target. Why is that the right
# way round for improving an English-to-French model?
#
# <details><summary>Answer</summary>
#
# The decoder learns to *write* the target side: real French teaches it real French. The
# encoder only has to read the noisy English well enough to be conditioned on it; errors
# on the source side cost less than errors on the side the model learns to produce.
#
# </details>
#
# **4.** The plain and back-translation continuations train with the same time budget
# (scheduled sampling and coverage with the same number of training steps). Why is that
# the fair comparison for back-translation, and what does it cost that model?
#
# <details><summary>Answer</summary>
#
# A user has a fixed amount of compute: the question is whether the same time is better
# spent on more, noisier pairs than on more passes over the clean ones. With twice as
# many pairs per epoch, the back-translation model fits about half as many epochs as the
# plain one would at the same speed, so fewer passes over each clean pair (compare the
# train s and tokens/s columns: a run that trains faster fits more, and a plain run that
# early stopping ends before its share is up leaves the comparison uneven).
#
# </details>
#
# **5.** Suppose that in `cumulative_attention.png` one source word of the plain model has a
# bar far above 1 and the last words have bars near 0. What did the decoder do, and how does
# the coverage term $w_c\, \mathrm{cov}_{tj}$ in the score let a trained model avoid it?
#
# <details><summary>Answer</summary>
#
# It attended to the same word at step after step and wrote its translation again and
# again ("vieille vieille vieille ..."), so the words after it never received attention and
# were dropped. With coverage, the score of word $j$ sees how much attention $j$ has already
# received; training (and the coverage loss $\min(\alpha_{tj}, \mathrm{cov}_{tj})$) teaches
# $w_c$ to lower the score of covered words, so the attention moves on.
#
# </details>

# %% [markdown]
# ## Next: your exercises
#
# Check each one with `kerasattn grade exercises/NN_*.py` (hints: `kerasattn hint NN`).
#
# - 15 `debug_the_the_the`: a model that repeats itself, and scheduled sampling.
# - 18 `coverage` (bonus): coverage attention and its loss.

# %%
record = lesson.finish()
