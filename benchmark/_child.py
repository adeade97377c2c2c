"""Entry point of an isolated stage process: run the stage, always write a result file.

Exceptions are classified here (skipped / oom / error) because only the child sees
them; deaths it cannot report (signals, os._exit) are classified by the parent.
"""

from __future__ import annotations

import errno
import json
import sys
import traceback

_OOM_TEXT = ("can't allocate memory", "cannot allocate memory", "out of memory", "unable to allocate")


def classify(exc: BaseException) -> tuple[str, str]:
    from synthesizers.base import SynthesizerUnavailable

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SynthesizerUnavailable):
        return "skipped", str(exc)
    if isinstance(exc, MemoryError) or any(t in str(exc).lower() for t in _OOM_TEXT):
        return "oom", f"out of memory: {text}"
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return "error", f"wrote past the per-file size limit (flooding its output?): {text}"
    if isinstance(exc, SystemExit):
        return "error", f"the synthesizer called sys.exit({exc.code!r})"
    return "error", text


def main(stage: str, payload_path: str, result_path: str) -> int:
    from benchmark.io import write_json

    try:
        from benchmark import stages

        with open(payload_path) as fh:
            payload = json.load(fh)
        result = getattr(stages, stage)(payload)
        result.setdefault("status", "ok")
    except BaseException as exc:  # noqa: BLE001 - everything must end up in the result
        status, reason = classify(exc)
        tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-8:])
        result = {"status": status, "reason": " ".join(reason.split())[:500], "traceback_tail": tail[-4000:]}
        try:
            print(tail, file=sys.stderr)
        except OSError:  # the log itself may be what overflowed
            pass
    write_json(result_path, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
