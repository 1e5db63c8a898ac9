"""``mcpbind trace check FILE``: does a host's trace conform? (SPEC §14)"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any

from mcpbind.model.trace import TraceError, check_trace, parse_trace

__all__ = ["add_parser", "check_main"]

USAGE = 2


def add_parser(commands: Any) -> None:
    trace = commands.add_parser(
        "trace",
        help="check a trace (mcpbind-trace/1) against the specification",
        description="Traces in the format mcpbind-trace/1 (SPEC §14).",
    )
    actions = trace.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        help="decide whether a trace conforms: exit 0 if it does, 1 if not",
        description="Run the trace monitors of SPEC §14.2 over FILE; print each invariant "
        "it breaks, at its first offending line.",
    )
    check.add_argument("file", metavar="FILE", help="the trace, one JSON object per line")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(handler=check_main)


def check_main(args: argparse.Namespace) -> int:
    path = pathlib.Path(args.file)
    try:
        with path.open(encoding="utf-8") as lines:
            records = parse_trace(lines)
    except OSError as error:
        print(f"mcpbind trace check: cannot read {path}: {error.strerror}", file=sys.stderr)
        return USAGE
    except TraceError as error:
        print(f"mcpbind trace check: {path}: not a trace: {error}", file=sys.stderr)
        return USAGE
    violations = check_trace(records)
    if args.json:
        report = {
            "file": str(path),
            "records": len(records),
            "conforms": not violations,
            "violations": [v.to_json() for v in violations],
        }
        print(json.dumps(report, indent=2))
    elif violations:
        for violation in violations:
            print(f"{path}: {violation}")
    else:
        print(f"{path}: conforms ({len(records)} records)")
    return 1 if violations else 0
