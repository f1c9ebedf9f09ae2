"""``python -m kerasattn.data``: statistics and samples of the built-in corpus."""
from kerasattn.data.synthetic import main

main()
