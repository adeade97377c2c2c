"""Entry point of an isolated stage process: run the stage, always write a result file.

Exceptions are classified here (skipped / oom / error) because only the child sees
them; deaths it cannot report (signals, os._exit) are classified by the parent. A call of
os._exit is recorded in a marker file first, so the parent says so only when it happened.
Once the result is written the process ends at once (os._exit): a non-daemon thread the
synthesizer left behind cannot keep the cell running.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import traceback

#: how an out-of-memory shows in a message: Python/numpy, R ("cannot allocate vector", "memory exhausted
#: (limit reached?)"), a shared library that cannot be mapped under the address-space limit
_OOM_TEXT = ("can't allocate memory", "cannot allocate", "out of memory", "unable to allocate",
             "memory exhausted", "failed to map segment", "memory allocation failed", "std::bad_alloc")


def memory_limit() -> str:
    """The address-space limit this process runs under, in words (the study's memory_gb)."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return "no memory limit" if soft == resource.RLIM_INFINITY else f"the {soft / 1024**3:g} GB memory limit (memory_gb)"


def _text(exc: BaseException) -> str:
    """str(exc), or a stand-in naming its type when str() itself fails."""
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises
        return f"<unprintable {type(exc).__name__} object>"


def classify(exc: BaseException) -> tuple[str, str]:
    msg = _text(exc)
    text = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
    if type(exc).__name__ == "SynthesizerUnavailable" and type(exc).__module__ == "holdbench.synthesizers.base":
        return "skipped", msg
    if isinstance(exc, MemoryError) or any(t in msg.lower() for t in _OOM_TEXT):
        return "oom", f"out of memory under {memory_limit()}: {text}"
    if isinstance(exc, OSError) and exc.errno in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT):
        from holdbench.benchmark.cell.isolation import disk_problem

        return "error", str(disk_problem(exc))
    if isinstance(exc, SystemExit):
        return "error", f"the synthesizer called sys.exit({exc.code!r})"
    return "error", text


def _record_os_exit(marker: str | None) -> None:
    """Wrap os._exit so that a call of it leaves `marker` holding the exit code."""
    if not marker:
        return
    real_exit = os._exit

    def _exit(code: int = 0) -> None:
        try:
            with open(marker, "w") as fh:
                fh.write(str(int(code)))
        except Exception:  # noqa: BLE001, S110 - exiting matters more than the note
            pass
        real_exit(code)

    os._exit = _exit
    _record_os_exit.real = real_exit  # type: ignore[attr-defined]


def _tail(exc: BaseException) -> str:
    try:
        return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-8:])[-4000:]
    except Exception:  # noqa: BLE001
        return f"{type(exc).__name__} (traceback unavailable)"


def main(stage: str, payload_path: str, result_path: str, exit_marker: str | None = None) -> int:
    _record_os_exit(exit_marker)
    try:
        # imported inside: under a low memory limit even loading pandas' shared libraries fails,
        # and that is an out-of-memory to report, not a crash
        from holdbench.benchmark.cell import stages

        with open(payload_path) as fh:
            payload = json.load(fh)
        result = getattr(stages, stage)(payload)
        result.setdefault("status", "ok")
    except BaseException as exc:  # noqa: BLE001 - everything must end up in the result
        status, reason = classify(exc)
        tail = _tail(exc)
        result = {"status": status, "reason": " ".join(reason.split())[:500], "traceback_tail": tail}
        try:
            print(tail, file=sys.stderr)
        except (OSError, ValueError):  # the log itself may be what overflowed
            pass
    _write_result(result_path, result)
    return 0


def _write_result(path: str, result: dict) -> None:
    """The result file, atomically; with the standard library only when holdbench.contracts.io cannot load."""
    try:
        from holdbench.contracts.io import write_json
    except BaseException:  # noqa: BLE001 - e.g. pandas' libraries cannot be mapped under the memory limit
        tmp = f"{path}.tmp"
        with open(tmp, "w") as fh:
            json.dump(result, fh, default=lambda o: o.item() if hasattr(o, "item") else str(o))
        os.replace(tmp, path)
        return
    write_json(path, result)


def _finish(code: int) -> None:
    """Flush what can be flushed, then end the process without waiting for leftover threads."""
    import logging

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        logging.shutdown()
    except Exception:  # noqa: BLE001, S110
        pass
    getattr(_record_os_exit, "real", os._exit)(code)


if __name__ == "__main__":
    _finish(main(*sys.argv[1:5]))
