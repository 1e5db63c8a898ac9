"""mcpbind's runtime over the official ``mcp`` SDK, on anyio: trio or asyncio (SPEC §11).

::

    from mcpbind.impl import Host, HostConfig, ServerConfig

    config = HostConfig(servers={"fs": ServerConfig(target=...)})
    async with Host.open(config) as host:
        snap = host.sample()
        result = await host.call(snap, "call-1", "mcp__fs__read", {"path": "x"})
"""

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
from .config.oauth import OAuthConfig
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
from .contributors import ContributorOutcome, Fragment, OverlayRecord, ServerProvenance, TurnInput
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
