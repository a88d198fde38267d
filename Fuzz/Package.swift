// swift-tools-version:6.0
import PackageDescription

/// libFuzzer targets for the parsers that read what peers send (see README.md). Built by `run`
/// with `--sanitize fuzzer --sanitize address`; each target defines `LLVMFuzzerTestOneInput`.
let interactived = "interactived"

let package = Package(
    name: "interactived-fuzz",
    dependencies: [.package(name: interactived, path: "..")],
    targets: [
        // What every fuzz target shares: invariant checks and input chunking.
        .target(name: "FuzzSupport"),
        // Local API: the JSON-lines framer and JSON-RPC decoding of each line.
        .executableTarget(name: "fuzz-ipc-lines", dependencies: [
            "FuzzSupport",
            .product(name: "IPCProtocol", package: interactived),
            .product(name: "JSONValue", package: interactived),
        ]),
        // The JSON parser (and the serializer round trip of what it accepts).
        .executableTarget(name: "fuzz-json", dependencies: ["FuzzSupport", .product(name: "JSONValue", package: interactived)]),
        // RFC 6455 frames as a server sends them, in arbitrary chunks.
        .executableTarget(name: "fuzz-websocket-frames", dependencies: ["FuzzSupport", .product(name: "SocketIO", package: interactived)]),
        // Engine.IO packets and the open handshake.
        .executableTarget(name: "fuzz-engineio", dependencies: ["FuzzSupport", .product(name: "SocketIO", package: interactived)]),
        // Socket.IO packets and the binary attachment assembly.
        .executableTarget(name: "fuzz-socketio", dependencies: ["FuzzSupport", .product(name: "SocketIO", package: interactived)]),
        // One Socket.IO connection (the WebSocket, Engine.IO and Socket.IO machines) fed a server's bytes.
        .executableTarget(name: "fuzz-socketio-connection", dependencies: ["FuzzSupport", .product(name: "SocketIO", package: interactived)]),
        // HTTP/1.1 responses, in arbitrary chunks.
        .executableTarget(name: "fuzz-http-response", dependencies: ["FuzzSupport", .product(name: "HTTP", package: interactived)]),
        // The backend's overlay payloads, normalised.
        .executableTarget(name: "fuzz-overlay", dependencies: [
            "FuzzSupport",
            .product(name: "InteractiveDaemon", package: interactived),
            .product(name: "JSONValue", package: interactived),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
