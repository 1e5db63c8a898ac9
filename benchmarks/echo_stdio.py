"""A stdio echo server for the benchmarks: ``python -m benchmarks.echo_stdio``."""

from benchmarks.suite import echo_server

if __name__ == "__main__":
    echo_server().run()
