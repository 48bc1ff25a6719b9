"""serve-sim answers on many threads: the very first requests of a fresh process must already
find the task responders (a race here once turned early grader replies into prose)."""
from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import json, sys, threading
from skilleval.sim.completion import respond  # nothing has registered a responder yet

prompt = sys.stdin.read()
barrier = threading.Barrier(16)
replies = []

def ask():
    barrier.wait()
    replies.append(respond(prompt, b"seed"))

threads = [threading.Thread(target=ask) for _ in range(16)]
for t in threads: t.start()
for t in threads: t.join()
ok = 0
for r in replies:
    try:
        json.loads(r); ok += 1
    except ValueError:
        pass
print(json.dumps({"ok": ok, "n": len(replies)}))
"""


def test_first_concurrent_completions_all_find_their_responder() -> None:
    from skilleval.functional.prompts import grader_prompt

    prompt = grader_prompt("tidy the file", ["outputs/a.csv exists"], "wrote outputs/a.csv: 1 rows",
                           "=== outputs/a.csv ===\nname\nx\n")
    for _ in range(3):  # a fresh interpreter each time: the race is on first use
        out = subprocess.run([sys.executable, "-c", SCRIPT], input=prompt, capture_output=True,
                             text=True, timeout=60, check=True)
        assert json.loads(out.stdout.strip().splitlines()[-1]) == {"ok": 16, "n": 16}
