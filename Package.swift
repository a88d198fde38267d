// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "interactived",
    platforms: [.macOS(.v14)],
    targets: [
        // A JSON value tree with a strict parser and a stable serializer.
        .target(name: "JSONValue"),
        // The local API: JSON-RPC 2.0 over JSON lines. Shared by the daemon, interactivectl and clients.
        .target(name: "IPCProtocol", dependencies: ["JSONValue"]),
        .testTarget(name: "JSONValueTests", dependencies: ["JSONValue"]),
        .testTarget(name: "IPCProtocolTests", dependencies: ["IPCProtocol", "JSONValue"]),
    ],
    swiftLanguageModes: [.v6]
)
