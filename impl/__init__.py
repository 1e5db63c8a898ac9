"""mcpbind's runtime over the official ``mcp`` SDK, on anyio: trio or asyncio (SPEC §11).

::

    from mcpbind.impl import Host, HostConfig, ServerConfig

    config = HostConfig(servers={"fs": ServerConfig(target=...)})
    async with Host.open(config) as host:
        snap = host.sample()
        result = await host.call(snap, "call-1", "mcp__fs__read", {"path": "x"})

The names load on first use (PEP 562), as ``mcpbind``'s do: a module of the runtime
(``mcpbind.impl.config.host`` for ``mcpbind``'s configuration errors) imports without the
rest of it, the SDK and trio.
"""

from __future__ import annotations

import importlib
from typing import Any

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, read so by mypy
if TYPE_CHECKING:
    from .calls.approval import ApprovalGate, ApprovalStatistics, requires_approval
    from .catalog.exposure import Exposure
    from .catalog.planner import StepSnapshot
    from .catalog.registry import Binding, RegistryState, ToolRegistry, ToolSpec
    from .config.catalog_cache import CatalogCache, CatalogCacheStatistics
    from .config.contributors import (
        McpServerContributor,
        RemoveServer,
        SetServer,
        StepContext,
        StepMcpServerContributor,
        ToolContributor,
        TurnContext,
        TurnInputContributor,
        TurnItemContributor,
    )
    from .config.credentials import (
        Credentials,
        CredentialsError,
        FileTokenStore,
        KeyringTokenStore,
        MemoryTokenStore,
        TokenStore,
    )
    from .config.hooks import (
        APPROVAL_ANSWERS,
        ApprovalAnswer,
        ApprovalRequest,
        Approver,
        AuthorizationHandler,
        AuthorizationRequest,
        AuthorizationResponse,
        OnProgress,
        response_from_redirect,
    )
    from .config.host import ConfigWarning, HostConfig
    from .config.oauth import AssertionFile, AssertionValue, IdentityProvider, OAuthConfig
    from .config.recorder import NullRecorder, Recorder
    from .config.server import (
        APPROVAL_MODES,
        ApprovalMode,
        BuiltinTool,
        ServerConfig,
        StdioTarget,
        ToolConfig,
    )
    from .config.toml_edit import ApprovalNotSaved
    from .contributors import (
        ContributorOutcome,
        Fragment,
        OverlayRecord,
        ServerProvenance,
        TurnInput,
    )
    from .errors import (
        AuthorizationError,
        AuthorizationFailed,
        CatalogRejected,
        ConfigError,
        ContributorRejected,
        CredentialsRequired,
        DuplicateCallId,
        HostClosed,
        HttpStatusError,
        IllegalTransition,
        LocalError,
        LoginRequired,
        McpBindError,
        RemoteError,
        ScopeRequired,
        ServerStartupError,
        UnknownServer,
    )
    from .host import Host, HostStatistics, ServerStatus
    from .reconfigure import ReconfigureReport, ServerChange
    from .seams import Seams
    from .server.health import ServerState
    from .server.runtime import ServerStatistics
    from .values import (
        ElicitationAnswer,
        ElicitationRequest,
        ImageItem,
        Progress,
        RefreshOutcome,
        ToolResult,
    )
    from .wire.connector import McpConnector
    from .wire.oauth import Authorizer, AuthStatus
    from .wire.seam import Connection, ConnectionLost, Connector, RequestFailed, ServerError

__all__ = [
    "APPROVAL_ANSWERS",
    "APPROVAL_MODES",
    "ApprovalAnswer",
    "ApprovalGate",
    "ApprovalMode",
    "ApprovalNotSaved",
    "ApprovalRequest",
    "ApprovalStatistics",
    "Approver",
    "AssertionFile",
    "AssertionValue",
    "AuthStatus",
    "AuthorizationError",
    "AuthorizationFailed",
    "AuthorizationHandler",
    "AuthorizationRequest",
    "AuthorizationResponse",
    "Authorizer",
    "Binding",
    "BuiltinTool",
    "CatalogCache",
    "CatalogCacheStatistics",
    "CatalogRejected",
    "ConfigError",
    "ConfigWarning",
    "Connection",
    "ConnectionLost",
    "Connector",
    "ContributorOutcome",
    "ContributorRejected",
    "Credentials",
    "CredentialsError",
    "CredentialsRequired",
    "DuplicateCallId",
    "ElicitationAnswer",
    "ElicitationRequest",
    "Exposure",
    "FileTokenStore",
    "Fragment",
    "Host",
    "HostClosed",
    "HostConfig",
    "HostStatistics",
    "HttpStatusError",
    "IdentityProvider",
    "IllegalTransition",
    "ImageItem",
    "KeyringTokenStore",
    "LocalError",
    "LoginRequired",
    "McpBindError",
    "McpConnector",
    "McpServerContributor",
    "MemoryTokenStore",
    "NullRecorder",
    "OAuthConfig",
    "OnProgress",
    "OverlayRecord",
    "Progress",
    "ReconfigureReport",
    "Recorder",
    "RefreshOutcome",
    "RegistryState",
    "RemoteError",
    "RemoveServer",
    "RequestFailed",
    "ScopeRequired",
    "Seams",
    "ServerChange",
    "ServerConfig",
    "ServerError",
    "ServerProvenance",
    "ServerStartupError",
    "ServerState",
    "ServerStatistics",
    "ServerStatus",
    "SetServer",
    "StdioTarget",
    "StepContext",
    "StepMcpServerContributor",
    "StepSnapshot",
    "TokenStore",
    "ToolConfig",
    "ToolContributor",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "TurnContext",
    "TurnInput",
    "TurnInputContributor",
    "TurnItemContributor",
    "UnknownServer",
    "requires_approval",
    "response_from_redirect",
]

_WHERE = {
    "APPROVAL_ANSWERS": ".config.hooks",
    "APPROVAL_MODES": ".config.server",
    "ApprovalAnswer": ".config.hooks",
    "ApprovalGate": ".calls.approval",
    "ApprovalMode": ".config.server",
    "ApprovalNotSaved": ".config.toml_edit",
    "ApprovalRequest": ".config.hooks",
    "ApprovalStatistics": ".calls.approval",
    "Approver": ".config.hooks",
    "AuthStatus": ".wire.oauth",
    "AuthorizationError": ".errors",
    "AuthorizationFailed": ".errors",
    "AuthorizationHandler": ".config.hooks",
    "AuthorizationRequest": ".config.hooks",
    "AuthorizationResponse": ".config.hooks",
    "Authorizer": ".wire.oauth",
    "Binding": ".catalog.registry",
    "BuiltinTool": ".config.server",
    "CatalogCache": ".config.catalog_cache",
    "CatalogCacheStatistics": ".config.catalog_cache",
    "CatalogRejected": ".errors",
    "ConfigError": ".errors",
    "ConfigWarning": ".config.host",
    "Connection": ".wire.seam",
    "ConnectionLost": ".wire.seam",
    "Connector": ".wire.seam",
    "ContributorOutcome": ".contributors",
    "ContributorRejected": ".errors",
    "Credentials": ".config.credentials",
    "CredentialsError": ".config.credentials",
    "CredentialsRequired": ".errors",
    "DuplicateCallId": ".errors",
    "ElicitationAnswer": ".values",
    "ElicitationRequest": ".values",
    "Exposure": ".catalog.exposure",
    "FileTokenStore": ".config.credentials",
    "Fragment": ".contributors",
    "Host": ".host",
    "HostClosed": ".errors",
    "HostConfig": ".config.host",
    "HostStatistics": ".host",
    "HttpStatusError": ".errors",
    "IllegalTransition": ".errors",
    "ImageItem": ".values",
    "KeyringTokenStore": ".config.credentials",
    "LocalError": ".errors",
    "LoginRequired": ".errors",
    "ScopeRequired": ".errors",
    "McpBindError": ".errors",
    "McpConnector": ".wire.connector",
    "McpServerContributor": ".config.contributors",
    "MemoryTokenStore": ".config.credentials",
    "NullRecorder": ".config.recorder",
    "IdentityProvider": ".config.oauth",
    "OAuthConfig": ".config.oauth",
    "AssertionFile": ".config.oauth",
    "AssertionValue": ".config.oauth",
    "OnProgress": ".config.hooks",
    "OverlayRecord": ".contributors",
    "Progress": ".values",
    "ReconfigureReport": ".reconfigure",
    "Recorder": ".config.recorder",
    "RefreshOutcome": ".values",
    "RegistryState": ".catalog.registry",
    "RemoteError": ".errors",
    "RemoveServer": ".config.contributors",
    "RequestFailed": ".wire.seam",
    "Seams": ".seams",
    "ServerChange": ".reconfigure",
    "ServerConfig": ".config.server",
    "ServerError": ".wire.seam",
    "ServerProvenance": ".contributors",
    "ServerStartupError": ".errors",
    "ServerState": ".server.health",
    "ServerStatistics": ".server.runtime",
    "ServerStatus": ".host",
    "SetServer": ".config.contributors",
    "StdioTarget": ".config.server",
    "StepContext": ".config.contributors",
    "StepMcpServerContributor": ".config.contributors",
    "StepSnapshot": ".catalog.planner",
    "TokenStore": ".config.credentials",
    "ToolConfig": ".config.server",
    "ToolContributor": ".config.contributors",
    "ToolRegistry": ".catalog.registry",
    "ToolResult": ".values",
    "ToolSpec": ".catalog.registry",
    "TurnContext": ".config.contributors",
    "TurnInput": ".contributors",
    "TurnInputContributor": ".config.contributors",
    "TurnItemContributor": ".config.contributors",
    "UnknownServer": ".errors",
    "requires_approval": ".calls.approval",
    "response_from_redirect": ".config.hooks",
}
"""Each name's module."""


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
