"""Exercise 25: greedy decoding, one token at a time until <eos>.

At inference there is no reference translation to read: the decoder must feed back its own
outputs. Greedy decoding takes the most likely token at every step,

    y_0 = <bos>
    y_t = argmax_v p(v | y_<t, x)          t = 1, 2, ...   (one step_fn call per token)

and a sentence ends when it produces ``<eos>`` (which belongs to the output) or after
``max_length`` tokens. The sentences of a batch end at different steps: a row that has
finished stays finished (its later positions hold ``<pad>`` and its length stops growing)
while the other rows go on, and the loop stops as soon as every row has finished, or at
``max_length``.

The model is hidden behind a step function, the form in which the kit's decoders are
decoded (the encoder runs once; then one step per token, with the recurrent state or the
key/value caches carried in ``state``):

    logits, state = step_fn(tokens, state, t)
        tokens : (B,) int32   the previous token of every row (y_t, with y_0 = <bos>)
        state  : what step_fn returned at the previous step (at t = 0: the ``state``
                 argument of greedy_decode)
        t      : int          the step, 0-based
        logits : (B, V)       the scores of the next token

Shapes (symbols): ``B`` batch, ``V`` vocabulary, ``T_out`` the number of steps run
(``<= max_length``).

    returns a dict:
        "tokens"   (B, T_out) int32   the generated ids, <pad> after a row's <eos>
        "lengths"  (B,) int32         tokens generated per row, <eos> included
        "finished" (B,) bool          the row produced <eos>

What to fill in: ``greedy_decode``.

Hints:
    * Keep what you know about every row in `(B,)` tensors (is it finished? how long is
      it?) and update them with ``ops.where`` / ``ops.logical_or``, not with a Python loop
      over the rows.
    * Think about the order of the updates within a step: a row that produces ``<eos>``
      at this step keeps that ``<eos>`` and counts it in its length; it is finished from
      the next step on.
    * Collect one `(B,)` column per step in a Python list and ``ops.stack`` them at the
      end. ``bool(ops.all(finished))`` is a Python bool you may test to leave the loop.

What you may use: ``keras.ops``.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's decoding (``kerasattn.decoding``: its
``greedy_decode``, ``greedy_loop`` and ``Stepper``), its ``Translator``
(``kerasattn.inference``), its models (``kerasattn.models``), ``keras_hub`` /
``keras_nlp`` (their samplers); NumPy on tensors; the solutions, ``kerasattn.reference`` and
``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/25_greedy_decoding.py --backend all``.
"""
from keras import ops


def greedy_decode(step_fn, state, batch_size, max_length, bos_id=2, eos_id=3, pad_id=0):
    """Greedy search: feed back the argmax until every row has produced <eos> or the cap.

    Args:
        step_fn: ``step_fn(tokens (B,) int32, state, t) -> (logits (B, V), state)``.
        state: the decoder's state before the first step.
        batch_size: ``B``.
        max_length: the most tokens per row (``<eos>`` included).
        bos_id, eos_id, pad_id: the ids of ``<bos>``, ``<eos>`` and ``<pad>``.

    Returns:
        Dict with "tokens" `(B, T_out)` int32, "lengths" `(B,)` int32, "finished" `(B,)`
        bool.
    """
    # BEGIN YOUR CODE
    token = ops.full((batch_size,), bos_id, dtype="int32")  # y_0 = <bos>
    finished = ops.zeros((batch_size,), dtype="bool")
    lengths = ops.zeros((batch_size,), dtype="int32")
    columns = []
    for t in range(max_length):
        logits, state = step_fn(token, state, t)  # (B, V)
        token = ops.cast(ops.argmax(logits, axis=-1), "int32")  # (B,) y_t
        token = ops.where(finished, ops.full_like(token, pad_id), token)  # finished: <pad>
        lengths = lengths + ops.cast(ops.logical_not(finished), "int32")
        finished = ops.logical_or(finished, ops.equal(token, eos_id))
        columns.append(token)
        if bool(ops.all(finished)):
            break
    return {"tokens": ops.stack(columns, axis=1), "lengths": lengths, "finished": finished}
    # END YOUR CODE
