"""Serialize deletion vectors with Paimon 0.9's Java ``BitmapDeletionVector`` (run in ``.venv-java``).

stdin: a JSON list of position lists; stdout: one JSON line, the list of hex-encoded
``serializeToBytes()`` results. Started by test_format.py through subprocess.
"""

from __future__ import annotations

import json
import sys

from pypaimon.py4j.java_gateway import get_gateway


def main() -> None:
    jvm = get_gateway().jvm
    out = []
    for positions in json.load(sys.stdin):
        vector = jvm.org.apache.paimon.deletionvectors.BitmapDeletionVector()
        for position in positions:
            vector.delete(position)
        out.append(bytes(vector.serializeToBytes()).hex())
    print("@@bitmaps@@ " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
