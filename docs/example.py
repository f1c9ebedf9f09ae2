"""Build, train and translate: the Python example of README.md.

The lines between the markers are the README's example, verbatim except the two lines that
end with ``# --quick``, which the README leaves out.

Run from the project root:

    python docs/example.py            # the whole built-in training split, up to 10 epochs
    python docs/example.py --quick    # 64 training pairs: seconds (the translation is poor)
"""
import sys

# README example: begin
from kerasattn.data import Vocabulary, builtin_corpus, make_arrays
from kerasattn.inference import Translator
from kerasattn.models import build_model
from kerasattn.training import recommended_training, train

corpus = builtin_corpus()  # English -> French, generated locally (no download)
if "--quick" in sys.argv[1:]:  # --quick
    corpus.train, corpus.valid = corpus.train[:64], corpus.valid[:16]  # --quick
src = Vocabulary.build(s for s, _ in corpus.train)
tgt = Vocabulary.build(t for _, t in corpus.train)
model = build_model("bahdanau", len(src), len(tgt))
result = train(model, make_arrays(corpus.train, src, tgt), make_arrays(corpus.valid, src, tgt),
               epochs=10, **recommended_training("bahdanau"))
translator = Translator(model, src, tgt)
print(translator.translate(["The black cat sleeps on the old chair."]))
translator.save("outputs/my_bahdanau")  # then: kerasattn translate outputs/my_bahdanau "..."
# README example: end
print(f"{result.epochs_run} epochs in {result.train_seconds:.0f} s, "
      f"{result.tokens_per_second:,.0f} target tokens/s")
