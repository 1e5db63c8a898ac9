"""A stdio relay that logs the wire: ``python relay.py LOG COMMAND [ARGS...]``.

It starts COMMAND as a child, copies its own stdin to the child's stdin and the child's
stdout to its own stdout, and appends one line to LOG per message: ``> {json}`` from the
host, ``< {json}`` from the server, then ``> EOF`` when the host closes stdin. The relay
ends when the child does (it forwards SIGTERM to it), so a host that stops the relay
stops the server. The tests read LOG to see what reached the server, and in what order.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading


def main() -> int:
    log_path, command = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None
    assert child.stdout is not None
    lock = threading.Lock()
    log = open(log_path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - closed at exit

    def note(line: str) -> None:
        with lock:
            log.write(line + "\n")

    def forward_signal(signum: int, frame: object) -> None:
        child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward_signal)

    def host_to_server() -> None:
        assert child.stdin is not None
        for raw in sys.stdin.buffer:
            note("> " + raw.decode("utf-8", "replace").rstrip("\n"))
            try:
                child.stdin.write(raw)
                child.stdin.flush()
            except (BrokenPipeError, ValueError):
                break
        note("> EOF")
        with contextlib.suppress(BrokenPipeError, ValueError):
            child.stdin.close()

    threading.Thread(target=host_to_server, daemon=True).start()
    for raw in child.stdout:
        note("< " + raw.decode("utf-8", "replace").rstrip("\n"))
        try:
            sys.stdout.buffer.write(raw)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            break
    code = child.wait()
    log.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
