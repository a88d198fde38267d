// swift-tools-version:6.0
import PackageDescription

/// How the daemon is linked, to keep its resident memory small (linker/README.md): lld from the
/// toolchain and relative relocations packed (DT_RELR: 7 KiB instead of ~900 KiB read at every
/// start). The release build (linker/link-ordered.sh) also passes a symbol order it profiles.
let daemonLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]),
]

let package = Package(
    name: "interactived",
    platforms: [.macOS(.v14)],
    products: [
        // The asynchronous client library for players (docs/players.md).
        .library(name: "InteractiveClient", targets: ["InteractiveClient", "IPCProtocol", "JSONValue"]),
        // Libraries the fuzz targets (Fuzz/, a separate package) depend on.
        .library(name: "JSONValue", targets: ["JSONValue"]),
        .library(name: "IPCProtocol", targets: ["IPCProtocol"]),
        .library(name: "SocketIO", targets: ["SocketIO"]),
        .library(name: "HTTP", targets: ["HTTP"]),
        .library(name: "InteractiveDaemon", targets: ["InteractiveDaemon"]),
    ],
    targets: [
        // A JSON value tree with a strict parser and a stable serializer.
        .target(name: "JSONValue"),
        // eventfd and thread attributes for the runtime, which Glibc's module does not export.
        .target(name: "CRuntimeShims"),
        // The event loop (epoll, timers; the executor of every loop-pinned actor), the
        // bookkeeping executor, withTimeout and the service group.
        .target(name: "Runtime", dependencies: ["CRuntimeShims"]),
        // The local API: JSON-RPC 2.0 over JSON lines. Shared by the daemon, interactivectl and clients.
        .target(name: "IPCProtocol", dependencies: ["JSONValue"]),
        // The asynchronous client of the local API: calls, and an event stream that reconnects.
        .target(name: "InteractiveClient", dependencies: ["IPCProtocol", "JSONValue"]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // What Swift cannot call directly: SO_PEERCRED's struct ucred, SO_PEERGROUPS, getgrouplist,
        // accept4, signal handlers.
        .target(name: "CInteractiveShims"),
        // OpenSSL 3 (libssl, libcrypto) from Debian's libssl-dev.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // C wrappers for the OpenSSL macros Swift cannot call.
        .target(name: "CNetworkShims", dependencies: ["COpenSSL"]),
        // TCP connections, optionally under TLS, on the event loop; name resolution.
        .target(name: "Network", dependencies: ["Runtime", "COpenSSL", "CNetworkShims"]),
        // WebSocket → Engine.IO → Socket.IO client over Network; no dependency on the daemon.
        .target(name: "SocketIO", dependencies: ["JSONValue", "Network", "Runtime"]),
        // HTTP/1.1 client for the REST calls: a pure request/response machine and a client on the event loop.
        .target(name: "HTTP", dependencies: ["Runtime", "Network"]),
        // The daemon: every actor and the IPC server, as a library so tests can import it.
        .target(
            name: "InteractiveDaemon",
            dependencies: ["IPCProtocol", "JSONValue", "Runtime", "Network", "SocketIO", "HTTP", "CSystemd", "CSQLite", "CInteractiveShims"]
        ),
        .executableTarget(name: "interactived", dependencies: ["InteractiveDaemon"], linkerSettings: daemonLinkerSettings),
        // Writes manual pages in roff; interactivectl's and the daemon's pages are made with it.
        .target(name: "ManPage"),
        .executableTarget(name: "interactivectl", dependencies: ["IPCProtocol", "JSONValue", "ManPage"]),
        // `interactived-manpages interactived.8|interactived.conf.5`: the daemon's man pages from its tables (scripts/manpages).
        .executableTarget(name: "interactived-manpages", dependencies: ["InteractiveDaemon", "ManPage"]),
        // `ws-echo URL`: echoes every WebSocket message back until the peer closes.
        .executableTarget(name: "ws-echo", dependencies: ["SocketIO"]),
        .testTarget(name: "JSONValueTests", dependencies: ["JSONValue"]),
        .testTarget(name: "RuntimeTests", dependencies: ["Runtime"]),
        .testTarget(name: "NetworkTests", dependencies: ["Network", "Runtime"]),
        .testTarget(name: "IPCProtocolTests", dependencies: ["IPCProtocol", "JSONValue"]),
        .testTarget(name: "InteractiveClientTests", dependencies: ["InteractiveClient", "IPCProtocol", "JSONValue"]),
        .testTarget(name: "DaemonUnitTests", dependencies: ["InteractiveDaemon", "JSONValue"]),
        // Unit tests and tests against real peers (python-socketio, websockets; Peers/ holds them).
        .testTarget(name: "SocketIOTests", dependencies: ["SocketIO", "JSONValue", "Runtime", "ws-echo"], exclude: ["Peers"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Runtime", "Network", "JSONValue"], exclude: ["Peers"]),
        .testTarget(name: "TrackingTests", dependencies: ["InteractiveDaemon", "JSONValue"]),
        // Runs the real binaries: depends on them so `swift test` builds them.
        .testTarget(name: "IntegrationTests", dependencies: ["IPCProtocol", "InteractiveClient", "JSONValue", "Runtime", "interactived", "interactivectl",
                                                             "interactived-manpages"]),
    ],
    swiftLanguageModes: [.v6]
)
