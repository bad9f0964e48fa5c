"""Las dos transcripciones de terminal del comienzo de la lección, al pie de la letra."""

import filecmp
import os

import pytest
from seed_text import SEED_PATH, transcript

CRASH_COMMAND = "CRASH_AFTER=after-effect-write:3 node agent.js"
RESUME_COMMAND = "node agent.js --resume"


def test_the_seed_copy_is_the_lesson():
    shared = os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "seed", "000_73bb514fde26887b.txt"
    )
    if not os.path.exists(shared):
        pytest.skip("no hay ../shared/seed junto al repositorio")
    assert filecmp.cmp(SEED_PATH, shared, shallow=False)


def test_crash_run_and_resume_print_the_lessons_transcripts(run, workdir):
    crash = run(workdir, crash_after="after-effect-write:3")
    # `echo EXIT=$?` en la terminal de la lección
    assert crash.stdout.splitlines() and all(line.startswith("[") for line in crash.stdout.splitlines())
    assert "".join(crash.stdout.splitlines()) + f"EXIT={crash.returncode}" == transcript(CRASH_COMMAND)
    assert crash.stderr == ""

    resume = run(workdir, resume=True)
    assert resume.returncode == 0, resume.stderr
    assert all(line.startswith("[") for line in resume.stdout.splitlines())
    assert "".join(resume.stdout.splitlines()) == transcript(RESUME_COMMAND)
    assert resume.stderr == ""
