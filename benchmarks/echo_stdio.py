"""A stdio echo server for the benchmarks: ``python -m benchmarks.echo_stdio [TOOLS]``."""

import sys

from benchmarks.suite import echo_server

if __name__ == "__main__":
    echo_server(int(sys.argv[1]) if len(sys.argv) > 1 else 1).run()
