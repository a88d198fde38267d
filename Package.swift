// swift-tools-version:6.0
import PackageDescription

/// The symbol order the release daemon is linked with (linker/interactived.order, made by
/// linker/update-order.sh), by absolute path: the linker does not run in the package's folder.
let symbolOrderFile = String(#filePath.dropLast("Package.swift".count)) + "linker/interactived.order"

/// How the daemon is linked, to keep its resident memory small (linker/README.md): lld from the
/// toolchain, relative relocations packed (DT_RELR: 7 KiB instead of ~900 KiB read at every
/// start), no symbol of its own exported (the static stdlib's `-export-dynamic` put ~340 KiB of
/// them in every start's pages), and in release the functions that run grouped by the order.
let daemonLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"]),
    .unsafeFlags(["-Xlinker", "--symbol-ordering-file=\(symbolOrderFile)", "-Xlinker", "--no-warn-symbol-ordering"],
                 .when(configuration: .release)),
]

/// Every target's nonisolated `async` functions run on their caller's actor (SE-0461): code on the
/// event loop that calls one (a REST call's helper, a store wrapper) stays on the loop instead of
/// taking a thread of Swift's cooperative pool and back.
let callerIsolation: [SwiftSetting] = [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]

let package = Package(
    name: "interactived",
    platforms: [.macOS(.v14)],
    products: [
        // The asynchronous client library for players (docs/players.md).
        .library(name: "InteractiveClient", targets: ["InteractiveClient", "IPCProtocol", "JSONValue"]),
        // Libraries the fuzz targets (Fuzz/) and the benchmarks (Benchmarks/), separate packages, depend on.
        .library(name: "JSONValue", targets: ["JSONValue"]),
        .library(name: "Runtime", targets: ["Runtime"]),
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
        .target(name: "Runtime", dependencies: ["CRuntimeShims"], swiftSettings: callerIsolation),
        // A timer scheduler whose clock a test moves by hand, and commands a test runs to completion
        // (test targets only).
        .target(name: "RuntimeTesting", dependencies: ["Runtime", "CRuntimeShims"]),
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
        .target(name: "Network", dependencies: ["Runtime", "COpenSSL", "CNetworkShims"], swiftSettings: callerIsolation),
        // WebSocket → Engine.IO → Socket.IO client over Network; no dependency on the daemon.
        .target(name: "SocketIO", dependencies: ["JSONValue", "Network", "Runtime"], swiftSettings: callerIsolation),
        // HTTP/1.1 client for the REST calls: a pure request/response machine and a client on the event loop.
        .target(name: "HTTP", dependencies: ["Runtime", "Network"], swiftSettings: callerIsolation),
        // The daemon: every actor and the IPC server, as a library so tests can import it.
        .target(
            name: "InteractiveDaemon",
            dependencies: ["IPCProtocol", "JSONValue", "Runtime", "Network", "SocketIO", "HTTP", "CSystemd", "CSQLite", "CInteractiveShims",
                           "VoiceMediaProtocol"],
            swiftSettings: callerIsolation
        ),
        .executableTarget(name: "interactived", dependencies: ["InteractiveDaemon"], linkerSettings: daemonLinkerSettings),
        // Writes manual pages in roff; interactivectl's and the daemon's pages are made with it.
        .target(name: "ManPage"),
        .executableTarget(name: "interactivectl", dependencies: ["IPCProtocol", "JSONValue", "ManPage"]),
        // `interactived-manpages interactived.8|interactived.conf.5`: the daemon's man pages from its tables (scripts/manpages).
        .executableTarget(name: "interactived-manpages", dependencies: ["InteractiveDaemon", "ManPage"]),
        // `ws-echo URL`: echoes every WebSocket message back until the peer closes.
        .executableTarget(name: "ws-echo", dependencies: ["SocketIO"]),
        // The daemon <-> media process protocol (JSON lines over a socket pair): messages and codec.
        .target(name: "VoiceMediaProtocol", dependencies: ["JSONValue"]),
        // GStreamer 1.22 and its SDP library from Debian (gstreamer-sdp-1.0 requires gstreamer-1.0).
        .systemLibrary(name: "CGStreamer", pkgConfig: "gstreamer-sdp-1.0",
                       providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]),
        // The few gst_webrtc_* declarations the media process needs (no libgstreamer-plugins-bad1.0-dev:
        // it pulls ~825 MB), GType and structure helpers Swift cannot reach through macros; links the
        // runtime libgstwebrtc from libgstreamer-plugins-bad1.0-0.
        .target(name: "CGStreamerShims", dependencies: ["CGStreamer"],
                linkerSettings: [.linkedLibrary(":libgstwebrtc-1.0.so.0")]),
        // `interactived-voice --control-fd 3`: the media process of a voice room (webrtcbin; VOICE-MEDIA-PROTOCOL).
        .executableTarget(name: "interactived-voice",
                          dependencies: ["VoiceMediaProtocol", "JSONValue", "Runtime", "CGStreamer", "CGStreamerShims", "CInteractiveShims"]),
        .testTarget(name: "JSONValueTests", dependencies: ["JSONValue"]),
        .testTarget(name: "RuntimeTests", dependencies: ["Runtime", "RuntimeTesting"]),
        .testTarget(name: "NetworkTests", dependencies: ["Network", "Runtime"]),
        .testTarget(name: "IPCProtocolTests", dependencies: ["IPCProtocol", "JSONValue"]),
        .testTarget(name: "InteractiveClientTests", dependencies: ["InteractiveClient", "IPCProtocol", "JSONValue"]),
        .testTarget(name: "VoiceMediaProtocolTests", dependencies: ["VoiceMediaProtocol", "JSONValue"]),
        // The media process's pure parts, and the real binary against Janus and aiortc peers (tools/voice).
        .testTarget(name: "VoiceMediaTests", dependencies: ["interactived-voice", "VoiceMediaProtocol", "JSONValue"]),
        .testTarget(name: "DaemonUnitTests", dependencies: ["InteractiveDaemon", "JSONValue", "RuntimeTesting", "VoiceMediaProtocol"]),
        // Unit tests and tests against real peers (python-socketio, websockets; Peers/ holds them).
        .testTarget(name: "SocketIOTests", dependencies: ["SocketIO", "JSONValue", "Runtime", "RuntimeTesting", "ws-echo"], exclude: ["Peers"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Runtime", "RuntimeTesting", "Network", "JSONValue"], exclude: ["Peers"]),
        .testTarget(name: "TrackingTests", dependencies: ["InteractiveDaemon", "JSONValue", "RuntimeTesting"]),
        // Runs the real binaries: depends on them so `swift test` builds them.
        .testTarget(name: "IntegrationTests", dependencies: ["IPCProtocol", "InteractiveClient", "JSONValue", "Runtime", "interactived", "interactivectl",
                                                             "interactived-manpages"]),
    ],
    swiftLanguageModes: [.v6]
)
