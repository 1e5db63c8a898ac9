"""mcpbind's runtime over the official ``mcp`` SDK, on anyio: trio or asyncio (SPEC §11).

::

    from mcpbind.impl import Host, HostConfig, ServerConfig

    config = HostConfig(servers={"fs": ServerConfig(target=...)})
    async with Host.open(config) as host:
        snap = host.sample()
        result = await host.call(snap, "call-1", "mcp__fs__read", {"path": "x"})
"""

from .approval import (
    APPROVAL_ANSWERS,
    ApprovalAnswer,
    ApprovalGate,
    ApprovalRequest,
    ApprovalStatistics,
    Approver,
    requires_approval,
)
from .catalog_cache import CatalogCache, CatalogCacheStatistics
from .config import ConfigWarning, HostConfig
from .connection import Connection, ConnectionLost, Connector, McpConnector, RequestFailed
from .contributors import (
    ContributorOutcome,
    Fragment,
    McpServerContributor,
    OverlayRecord,
    RemoveServer,
    ServerProvenance,
    SetServer,
    ToolContributor,
    TurnContext,
    TurnInput,
    TurnInputContributor,
    TurnItemContributor,
)
from .errors import (
    CatalogRejected,
    ConfigError,
    ContributorRejected,
    DuplicateCallId,
    HostClosed,
    LocalError,
    McpBindError,
    RemoteError,
    ServerStartupError,
    UnknownServer,
)
from .exposure import Exposure
from .host import Host
from .oauth import (
    AuthorizationError,
    AuthorizationFailed,
    AuthorizationHandler,
    AuthorizationRequest,
    AuthorizationResponse,
    AuthorizationUnavailable,
    Authorizer,
    AuthStatus,
    LoginRequired,
    response_from_redirect,
)
from .oauth_config import OAuthConfig
from .oauth_store import (
    Credentials,
    CredentialsError,
    FileTokenStore,
    KeyringTokenStore,
    MemoryTokenStore,
    TokenStore,
)
from .progress import OnProgress
from .recorder import NullRecorder, Recorder
from .registry import Binding, RegistryState, ToolRegistry, ToolSpec
from .seams import Seams
from .server_config import APPROVAL_MODES, ApprovalMode, BuiltinTool, ServerConfig, ToolConfig
from .values import (
    ElicitationAnswer,
    ElicitationRequest,
    HostStatistics,
    ImageItem,
    Progress,
    RefreshOutcome,
    ServerStatistics,
    ServerStatus,
    StepSnapshot,
    ToolResult,
)

__all__ = [
    "APPROVAL_ANSWERS",
    "APPROVAL_MODES",
    "ApprovalAnswer",
    "ApprovalGate",
    "ApprovalMode",
    "ApprovalRequest",
    "ApprovalStatistics",
    "Approver",
    "AuthStatus",
    "AuthorizationError",
    "AuthorizationFailed",
    "AuthorizationHandler",
    "AuthorizationRequest",
    "AuthorizationResponse",
    "AuthorizationUnavailable",
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
    "Recorder",
    "RefreshOutcome",
    "RegistryState",
    "RemoteError",
    "RemoveServer",
    "RequestFailed",
    "Seams",
    "ServerConfig",
    "ServerProvenance",
    "ServerStartupError",
    "ServerStatistics",
    "ServerStatus",
    "SetServer",
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
