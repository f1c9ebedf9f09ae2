#!/usr/bin/env bash
# Gradescope autograder image set-up for the kerasattn exercises (runs once, as root).
# The autograder zip holds this file, run_autograder, and the kit's source tree in source/
# (see gradescope/README.md for how to build the zip).
set -euo pipefail
SRC=/autograder/source
KIT="$SRC/kerasattn-kit"
VENV=/autograder/venv

apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip > /dev/null

python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
# torch first, pinned to the CPU build: an unpinned torch pulls a multi-GB CUDA build.
"$VENV/bin/pip" install --quiet torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
"$VENV/bin/pip" install --quiet -e "$KIT[all]"

# An unprivileged user for student code: it cannot kill the grader, write the results
# file, or read files that are private to root.
id -u kerasattn-student > /dev/null 2>&1 || useradd --system --no-create-home \
    --shell /usr/sbin/nologin kerasattn-student

# Warm JAX's compilation cache by grading the (trusted) solutions once; later runs copy
# it into their scratch folder, so submissions never write to it.
export TF_CPP_MIN_LOG_LEVEL=3
"$VENV/bin/kerasattn" grade "$KIT/solutions" --backend jax --jax-cache /autograder/jax-cache \
    --jax-cache-update --format json --output /tmp/warm.json --quiet || true
chmod -R a+rX /autograder/jax-cache

# Students' code must not read the solutions or the grader's references at run time.
rm -rf "$KIT/solutions"
chmod 600 "$KIT/kerasattn/reference.py"
chmod -R go-rwx "$KIT/kerasattn/grader/specs"
