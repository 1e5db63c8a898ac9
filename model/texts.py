"""Statuses and the stable, documented texts of host-made results and errors (SPEC §8, §9).

The runtime produces exactly these texts; SPEC.md lists them; the model predicts them.
Each text says what happened and, where the caller can act, what to do.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "CallStatus",
    "ExclusionKind",
    "OutcomeStatus",
    "RejectKind",
    "seconds",
]

CallStatus = Literal[
    "ok", "error", "failed", "cancelled", "timed_out", "unsupported", "unavailable", "denied"
]
CALL_STATUSES: Final[tuple[CallStatus, ...]] = (
    "ok",
    "error",
    "failed",
    "cancelled",
    "timed_out",
    "unsupported",
    "unavailable",
    "denied",
)

OutcomeStatus = Literal["installed", "unchanged", "rejected"]
RejectKind = Literal[
    "invalid", "collision", "disconnected", "list_failed", "cap", "closed", "reconfigured"
]
ExclusionKind = Literal["task_required", "x_mcp_header"]
"""Why one tool of an installed listing was left out (SPEC §5.4): nobody can call it
(``task_required``: only as a task, on a server that declares no tasks for tools/call),
or MCP requires an HTTP client to leave it out (``x_mcp_header``)."""

# --- tools left out of an installed listing (SPEC §5.4) ----------------------------------

EXCLUDED_TASK_REQUIRED: Final = (
    "tool {tool!r} of server {server!r} is left out: it must be called as a task "
    '(execution.taskSupport "required"), but the server does not declare tasks for '
    "tools/call (capabilities.tasks.requests.tools.call), so no client may call it as one"
)
EXCLUDED_X_MCP_HEADER: Final = (
    "tool {tool!r} of server {server!r} is left out: {problem}; MCP requires an HTTP client "
    "to leave out a tool whose x-mcp-header is invalid; the other tools are installed"
)


def excluded_text(kind: ExclusionKind, *, server: str, tool: str, problem: str = "") -> str:
    """The stable text saying why ``tool`` of ``server`` was left out (SPEC §5.4)."""
    if kind == "task_required":
        return EXCLUDED_TASK_REQUIRED.format(tool=tool, server=server)
    return EXCLUDED_X_MCP_HEADER.format(tool=tool, server=server, problem=problem)


# --- terminal results made by the host (SPEC §8.4) -------------------------------------

UNSUPPORTED: Final = (
    "unsupported call: {name} is not a tool of this step; call only the tools listed for it"
)
BAD_ARGUMENTS: Final = (
    "invalid arguments for {name}: {problem}; pass a JSON object (or JSON text of one)"
)
UNAVAILABLE: Final = (
    "tool {name} is no longer available: server {server!r} no longer lists {tool!r}; "
    "nothing was sent; sample a new step to see the current tools"
)
RESOURCE_UNAVAILABLE: Final = (
    "resource {uri!r} is no longer available: server {server!r} no longer lists it; "
    "nothing was sent; call list_mcp_resources to see the current resources"
)
"""``revalidate`` (SPEC §7.3, §11.20): a read of a URI the live catalog no longer lists."""
NOT_CONNECTED: Final = (
    "server {server!r} is not connected; the call was not sent; retry after it reconnects"
)
DISCONNECTED: Final = (
    "server {server!r} disconnected while the call was in flight; its outcome is unknown"
)
TRANSPORT: Final = "transport error calling {tool!r} on server {server!r}: {why}"
SERVER_ERROR: Final = (
    "server {server!r} answered the call of {tool!r} with an error: {message} (code {code}); "
    "the tool did not run to a result"
)
STRUCTURED_MISMATCH: Final = (
    "server {server!r} answered {tool!r} with structured content that does not match the "
    "tool's outputSchema: {problem}"
)
UNKNOWN_RESULT_TYPE: Final = (
    "server {server!r} answered tools/call for {tool!r} with resultType {result_type!r}, "
    "which mcpbind does not understand; the result is treated as invalid"
)
CANCELLED: Final = "call cancelled by the host"
MALFORMED_RESULT: Final = (
    "server {server!r} answered tools/call for {tool!r} with a malformed result: {problem}"
)


def seconds(value: float) -> str:
    """A duration as the texts say it: ``1 second``, ``0.5 seconds``, ``300 seconds``."""
    return f"{value:g} second" if value == 1 else f"{value:g} seconds"


TIMED_OUT: Final = "call timed out after {seconds}; the server was told to cancel it"
TIMED_OUT_QUEUED: Final = (
    "call timed out after {seconds} while waiting for the exclusive lane; nothing was sent"
)
CLOSED_SENT: Final = (
    "call cancelled: the host closed while it was in flight; the server was told to cancel it"
)
CLOSED_UNSENT: Final = "call cancelled: the host closed before it was sent; nothing was sent"
REJECTED_AGAIN: Final = (
    "server {server!r} rejected the call of {tool!r} again after its catalog was refreshed "
    "(code -32020: the Mcp-Param-* headers do not match the arguments); the tool did not run"
)
TIMED_OUT_IDLE: Final = (
    "call timed out: no progress for {seconds}; the server was told to cancel it"
)
TIMED_OUT_CAP: Final = (
    "call timed out after {seconds} in all (max_sec), though it kept reporting "
    "progress; the server was told to cancel it"
)
TIMED_OUT_RETRYING: Final = (
    "call timed out after {seconds} while waiting to send it again: server "
    "{server!r} rejected it unrun (code -32020) and its catalog is being refreshed; "
    "the tool did not run"
)
CLOSED_RETRYING: Final = (
    "call cancelled: the host closed while the call waited to be sent again; the server "
    "had rejected it unrun (code -32020)"
)
EXPIRED_AGAIN: Final = (
    "server {server!r} refused the call of {tool!r} again when it was sent once more "
    "(HTTP 404: the server did not know the session); the tool did not run"
)
TIMED_OUT_EXPIRED: Final = (
    "call timed out after {seconds} while waiting to send it again: server "
    "{server!r} no longer knew the session (HTTP 404) and its catalog is being listed on "
    "a new one; the tool did not run"
)
CLOSED_EXPIRED: Final = (
    "call cancelled: the host closed while the call waited to be sent again; the server "
    "had refused it unrun (HTTP 404: it no longer knew the session)"
)
TASK_FAILED: Final = "the task running {tool!r} on server {server!r} failed: {why}"
TASK_NO_MESSAGE: Final = "the server gave no reason"
"""``why`` of :data:`TASK_FAILED` when the task's status carries no message."""
TASK_CANCELLED: Final = (
    "server {server!r} cancelled the task running {tool!r} before it completed; "
    "its effects are unknown"
)
URL_REQUIRED: Final = (
    "server {server!r} cannot run {tool!r} until the user completes a step in a browser: "
    "open {urls}; the tool did not run; this host cannot show the user a URL, so tell the "
    "user to open it, then call the tool again once they have completed the step"
)
URL_DECLINED: Final = (
    "server {server!r} cannot run {tool!r} until the user completes a step in a browser: "
    "open {urls}; the user was asked to open it and answered {action!r}; the tool did not "
    "run; do not call it again unless the user asks"
)
URL_ACCEPTED: Final = (
    "server {server!r} cannot run {tool!r} until the user completes a step in a browser: "
    "open {urls}; the user agreed to open it; the tool did not run: call it again once the "
    "user has completed the step"
)
URL_STEP: Final = "{url} ({message})"
"""One URL of :data:`URL_REQUIRED`, :data:`URL_DECLINED` and :data:`URL_ACCEPTED` with
the server's message (the URL alone when it gave none); several are joined by ``and``."""
REMOVED: Final = (
    "tool {name} is no longer available: server {server!r} was removed by a "
    "reconfiguration; nothing was sent; sample a new step to see the current tools"
)
RECONFIGURED_SENT: Final = (
    "call cancelled: a reconfiguration {how} server {server!r} while the call was in "
    "flight; the server was told to cancel it"
)
RECONFIGURED_UNSENT: Final = (
    "call cancelled: a reconfiguration {how} server {server!r} before the call was sent; "
    "nothing was sent; sample a new step to see the current tools"
)
RECONFIGURED_RETRYING: Final = (
    "call cancelled: a reconfiguration {how} server {server!r} while the call waited to be "
    "sent again; the server had refused it unrun"
)
"""``how`` of the three ``RECONFIGURED_*`` texts: ``removed`` or ``replaced``."""
TIMED_OUT_STARTING: Final = (
    "call timed out after {seconds} while waiting for server {server!r} to start; nothing was sent"
)

# --- parts of an encoded server answer (SPEC §8.8, §11.5) --------------------------------

IMAGE_ATTACHED: Final = "[image {index}: {mime_type}, attached to this result]"
TRUNCATED_CHARACTERS: Final = "[mcpbind: output truncated: {total} characters, limit {limit}]"
TRUNCATED_BYTES: Final = "[mcpbind: output truncated: {total} bytes, limit {limit}]"

# --- approval (SPEC §11.8): status denied, nothing sent -------------------------------

DENIED_DECLINED: Final = (
    "call to {name} was declined at approval (server {server!r}, tool {tool!r}); "
    "nothing was sent; do not retry it unless the user asks"
)
DENIED_CANCELLED: Final = (
    "call to {name} was cancelled at approval (server {server!r}, tool {tool!r}); "
    "nothing was sent; stop and wait for the user"
)
DENIED_NO_APPROVER: Final = (
    "call to {name} needs approval (server {server!r}, tool {tool!r}, approval mode "
    "{mode!r}) and no approver can answer; nothing was sent; give the host an approver "
    "(mcpbind call: run it on a terminal or pass --yes) or set the tool's "
    'approval_mode = "approve"'
)
DENIED_APPROVER_FAILED: Final = (
    "call to {name} needs approval (server {server!r}, tool {tool!r}) and the approver "
    "failed: {why}; nothing was sent"
)
APPROVAL_NOT_SAVED: Final = (
    'could not save approval_mode = "approve" for tool {tool!r} of server {server!r} '
    "to {path}: {why}; the approval holds for this session only"
)

# --- refresh rejections (SPEC §5.4) -----------------------------------------------------

REJECT_INVALID: Final = (
    "invalid catalog from server {server!r}: tool {tool!r}: {problem}; "
    "the previous catalog stays installed"
)
REJECT_COLLISION: Final = (
    "name collision: tool {tool!r} of server {server!r} would be named {name}, which "
    "belongs to source {owner!r}; the previous catalog stays installed; rename or "
    "disable the tool (disabled_tools)"
)
REJECT_DISCONNECTED: Final = (
    "server {server!r} disconnected during the refresh; the previous catalog stays installed"
)
REJECT_NOT_CONNECTED: Final = (
    "server {server!r} is not connected; the previous catalog stays installed; "
    "it is refreshed again when it reconnects"
)
REJECT_LIST_FAILED: Final = (
    "tools/list failed on server {server!r}: {why}; the previous catalog stays installed"
)
REJECT_CLOSED: Final = (
    "the host closed during the refresh of server {server!r}; nothing was installed"
)
PREVIOUS_CATALOG_STAYS: Final = "the previous catalog stays installed"
"""The part of a rejection text that says what became of the catalog; a replacement's
first refresh (SPEC §3.7) says :data:`REPLACED_CATALOG_REMOVED` instead."""
REPLACED_CATALOG_REMOVED: Final = (
    "the catalog of the server it replaces was removed (a reconfiguration changed the server)"
)


def replacement_rejected(reason: str) -> str:
    """The rejection text of a replacement's first refresh (SPEC §3.7, §5.6): the old
    server's catalog does not stay; it was removed."""
    return reason.replace(PREVIOUS_CATALOG_STAYS, REPLACED_CATALOG_REMOVED)


REJECT_RECONFIGURED: Final = (
    "a reconfiguration {how} server {server!r} during the refresh; nothing was installed"
)
REJECT_CAP: Final = (
    "tools/list of server {server!r} exceeded a limit: {cap}; the previous catalog stays installed"
)

# --- extension contributors (SPEC §11.11) ----------------------------------------------

EXT_COLLISION: Final = (
    "name collision: tool {name} of contributor {contributor!r} belongs to source {owner!r}; "
    "the contributor's new tools were not installed; rename the tool"
)
EXT_INVALID: Final = (
    "invalid tools from contributor {contributor!r}: {problem}; "
    "the contributor's new tools were not installed"
)

# --- typed errors raised to the host (SPEC §9) ------------------------------------------

DUPLICATE_CALL_ID: Final = (
    "call_id {call_id!r} was already used on this host; give every call a new call_id"
)
EVENT_NOT_ENABLED: Final = "can't handle event {event} in state {state}: {why}"
UNKNOWN_SERVER: Final = "unknown server {server!r}; the configured servers are: {known}"
HOST_CLOSED: Final = "the host is closed; use it inside its `async with Host.open(...)` block"
ENV_VAR_UNSET: Final = (
    "environment variable {variable!r} for MCP server {server!r} {state} (its "
    "bearer_token_env_var); set it, or set enabled = false for this server"
)
SERVER_EXITED: Final = "{why}: the server's process exited with status {status} at start"
SERVER_KILLED: Final = "{why}: the server's process was ended by signal {signal} at start"
STARTUP_FAILED: Final = (
    "required server {server!r} could not be started: {why}; fix its configuration or "
    "mark it required = false to start without it"
)

# --- deferred tools and tool_search (SPEC §11.9) ----------------------------------------

TOOL_SEARCH_DESCRIPTION: Final = (
    "Find tools by what they do. This step lists only some of the available tools; the "
    "others are found here. Give a few words (what you want to do, names, objects); the "
    "best matches are returned with their input schemas and can be called from your next "
    "step on."
)
SEARCH_FOUND: Final = (
    "{count} matching tool(s) for {query!r}, best first; they can be called from your next step on"
)
SEARCH_NONE: Final = "no tool matches {query!r}; try other words"
SEARCH_BAD_ARGUMENTS: Final = (
    "invalid arguments for tool_search: {problem}; pass a non-empty query string and, "
    "optionally, a limit from 1 to {maximum}"
)
SCHEMA_SHORTENED: Final = (
    "[mcpbind: input schema shortened from {full} to {shown} bytes; nested details are "
    "omitted, the server checks the full schema]"
)

# --- authorization (SPEC §11.15) ---------------------------------------------------------

LOGIN_REQUIRED: Final = (
    "server {server!r} requires authorization and no one has logged in, or the login "
    "expired: run `mcpbind login {server}`"
)
SCOPE_REQUIRED: Final = (
    'server {server!r} refused the request: it needs the scope "{scope}" (HTTP 403 '
    'insufficient_scope); run `mcpbind login {server} --scope "{scopes}"`'
)
AUTHORIZATION_FAILED: Final = (
    "authorization with server {server!r} failed: {why}; run `mcpbind login {server}` to try again"
)
CREDENTIALS_REQUIRED: Final = (
    "the server requires authorization (HTTP {status}); give it credentials: "
    "bearer_token_env_var or http_headers / env_http_headers"
)
HTTP_STATUS: Final = "the server answered HTTP {status}"
HTTP_STATUS_TEXT: Final = "the server answered HTTP {status}: {text}"
"""A failed HTTP answer with the server's own text, one short line (SPEC §11.2)."""
HTTP_NOT_FOUND: Final = (
    "the server answered HTTP 404 Not Found: nothing serves MCP at {url}; check the "
    "URL's path (MCP servers often serve it at /mcp)"
)
CREDENTIALS_REQUIRED_NO_OAUTH: Final = (
    "server {server!r} requires authorization (HTTP {status}) and publishes no OAuth metadata "
    "to log in with; give it credentials: bearer_token_env_var or http_headers / "
    "env_http_headers"
)
SESSION_ENDED: Final = (
    "server {server!r}: its session ended (the server closed it, exited or stopped "
    "answering); reconnecting with backoff"
)
"""Why a server is down after a session it had ended (``ServerStatus.error``, §11.18)."""
STREAM_UNREACHABLE: Final = (
    "server {server!r} stopped answering while idle: its notification stream could not "
    "reconnect (nothing listens at its address); the session is kept, and the next "
    "request opens a new one or reconnects"
)
"""A handshake-era HTTP server whose notification stream could not reconnect (§11.18)."""
STREAM_EXPIRED: Final = (
    "server {server!r} no longer knows the session (it refused the notification stream "
    "of it while idle); the next call opens a new session and is sent once more (§8.13)"
)
"""A handshake-era HTTP server that refused the session of its notification stream
while the host was idle (§11.18)."""
UNHEARD: Final = (
    "the server delivers no list_changed on this session (it left it out of its "
    "subscriptions/listen answer, or serves none): its catalog is read again only on a refresh"
)

# --- resources the model can use (SPEC §11.20) ---------------------------------------

LIST_RESOURCES_DESCRIPTION: Final = (
    "Lists the resources MCP servers publish (files, documents, database schemas and other "
    "context), as this step sees them: each with its server, uri, name and description. "
    "Give a server to list only its resources. Read one with read_mcp_resource."
)
LIST_TEMPLATES_DESCRIPTION: Final = (
    "Lists the resource templates MCP servers publish: URI templates that take parameters "
    "(RFC 6570). Fill one in and read the URI with read_mcp_resource."
)
READ_RESOURCE_DESCRIPTION: Final = (
    "Reads one resource of an MCP server: its text, or a note for binary content. Give the "
    "server and the uri as list_mcp_resources returned them, a URI made from a resource "
    "template, or the URI of a resource link in a tool result."
)
RESOURCE_SERVER_ARGUMENT: Final = (
    "The MCP server's name exactly as configured: the 'server' field list_mcp_resources returns."
)
RESOURCE_CURSOR_ARGUMENT: Final = "The nextCursor of the previous answer, to read the next page."
RESOURCE_URI_ARGUMENT: Final = "The URI of the resource to read."
RESOURCE_BAD_ARGUMENTS: Final = "invalid arguments for {name}: {problem}"
RESOURCE_NO_SERVER: Final = (
    "no server {server!r} publishes resources in this step; nothing was sent; call "
    "list_mcp_resources to see the servers that do"
)
