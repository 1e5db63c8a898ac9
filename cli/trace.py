"""``mcpbind trace check FILE``: does a host's trace conform? (SPEC §14)"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any

from mcpbind.model.refine import NotRefinable, refine, replay_data
from mcpbind.model.trace import (
    WIRE_DECIDABLE,
    TraceError,
    TraceRecord,
    check_trace,
    merge_traces,
    parse_trace,
    wire_only,
)

__all__ = ["check_main", "merge_main"]

USAGE = 2


def _read(action: str, path: pathlib.Path, *, prefix: bool) -> list[TraceRecord] | None:
    """The records of the trace at ``path``, or None once one line on stderr said why not
    (the caller exits 2)."""
    try:
        with path.open(encoding="utf-8") as lines:
            return parse_trace(lines, prefix=prefix)
    except OSError as error:
        print(f"mcpbind trace {action}: cannot read {path}: {error.strerror}", file=sys.stderr)
    except TraceError as error:
        print(f"mcpbind trace {action}: {path}: not a trace: {error}", file=sys.stderr)
    return None


def check_main(args: argparse.Namespace) -> int:
    path = pathlib.Path(args.file)
    read = _read("check", path, prefix=True)
    if read is None:
        return USAGE
    records = read
    violations = check_trace(records)
    if records[-1].kind != "end":  # its writer was killed: the monitors ran over the prefix
        return _ended_early(args, path, records, violations)
    strict: dict[str, Any] | None = None
    if args.strict:
        try:
            refinement = refine(records)
        except NotRefinable as error:
            print(f"mcpbind trace check: {path}: cannot refine: {error}", file=sys.stderr)
            return USAGE
        strict = {"conforms": refinement.violation is None, "most_states": refinement.most_states}
        if refinement.violation is not None:
            violations.append(refinement.violation)
            replay = path.with_name(path.name + ".replay.json")
            data = replay_data(refinement, source=str(path), line=refinement.violation.line)
            replay.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
            strict["replay_file"] = str(replay)
    if args.json:
        report = {
            "file": str(path),
            "records": len(records),
            "conforms": not violations,
            "violations": [v.to_json() for v in violations],
        }
        if strict is not None:
            report["strict"] = strict
        print(json.dumps(report, indent=2))
    elif violations:
        for violation in violations:
            print(f"{path}: {violation}")
        if strict is not None and "replay_file" in strict:
            print(f"{path}: the model's replay of its inputs: {strict['replay_file']}")
    else:
        refined = ", refines the model" if strict is not None else ""
        wire = f"; wire-only: {', '.join(WIRE_DECIDABLE)} decided" if wire_only(records) else ""
        print(f"{path}: conforms ({len(records)} records{refined}{wire})")
    return 1 if violations else 0


def merge_main(args: argparse.Namespace) -> int:
    traces = []
    for number, name in enumerate((args.host, *args.wires)):
        # A tap its host killed (Codex ends its servers so) leaves a prefix: the merge
        # takes the records it holds (SPEC §14.6).
        read = _read("merge", pathlib.Path(name), prefix=number > 0)
        if read is None:
            return USAGE
        traces.append(read)
    try:
        merged = merge_traces(traces[0], traces[1:])
    except TraceError as error:
        print(f"mcpbind trace merge: cannot merge: {error}", file=sys.stderr)
        return USAGE
    text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in merged)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        pathlib.Path(args.output).write_text(text, encoding="utf-8")
    except OSError as error:
        print(f"mcpbind trace merge: cannot write {args.output}: {error.strerror}", file=sys.stderr)
        return USAGE
    return 0


def _ended_early(
    args: argparse.Namespace, path: pathlib.Path, records: list[Any], violations: list[Any]
) -> int:
    """A trace without its ``end`` record (SPEC §14.3): the invariants that hold at every
    record are checked over what is there; those owed by the end (every call ends) are
    not. Exit 1: the trace is not whole; refinement (``--strict``) is not tried."""
    early = f'ends early after line {records[-1].line} (no {{"kind": "end"}})'
    if args.json:
        report = {
            "file": str(path),
            "records": len(records),
            "conforms": False,
            "ends_early": True,
            "violations": [v.to_json() for v in violations],
        }
        print(json.dumps(report, indent=2))
        return 1
    for violation in violations:
        print(f"{path}: {violation}")
    clean = "" if violations else "; the records so far break no invariant"
    print(f"{path}: {early}: {len(records)} records checked{clean}")
    return 1
