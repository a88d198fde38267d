// swift-tools-version:6.0
import PackageDescription

/// The benchmarks of interactived (Benchmarks/README.md): executables that measure the daemon and
/// its libraries, kept out of the shipped package. Built by the scripts next to this file, e.g.
/// `swift build --package-path Benchmarks -c release --product ipc-bench`.
let interactived = "interactived"

let package = Package(
    name: "interactived-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: interactived, path: "..")],
    targets: [
        // <sys/epoll.h>, which Swift's Glibc module does not export (ipc-bench's readers use epoll).
        .systemLibrary(name: "CEpoll"),
        // The local API's benchmarks: exec → READY, daemon.status requests/s, events/s, the
        // end-to-end subscriber, the store's cost per tracked overlay (Benchmarks/ipc.sh).
        .executableTarget(name: "ipc-bench", dependencies: [
            "CEpoll",
            .product(name: "InteractiveDaemon", package: interactived),
            .product(name: "Runtime", package: interactived),
            .product(name: "IPCProtocol", package: interactived),
            .product(name: "JSONValue", package: interactived),
        ]),
        // The memory and time of reading a REST reply as a tree and part by part (Benchmarks/README.md, json-bench).
        // <malloc.h> (malloc_trim), which Swift's Glibc module does not export.
        .systemLibrary(name: "CMalloc"),
        .executableTarget(name: "json-bench", dependencies: ["CMalloc", .product(name: "JSONValue", package: interactived)]),
        // Throughput, latency and RSS of the Socket.IO client against a local sender (Benchmarks/socketio).
        .executableTarget(name: "sio-bench", dependencies: [
            .product(name: "Runtime", package: interactived),
            .product(name: "SocketIO", package: interactived),
            .product(name: "JSONValue", package: interactived),
        ]),
        // The fleet simulation (Benchmarks/fleet, docs/fleet.md): devices reconnecting and resending
        // tracking acks after a backend outage, on a simulated clock, with the daemon's own
        // backoff and ack outbox; `fleet-sim` prints the figures and writes them as CSV.
        .target(name: "FleetSimulation", dependencies: [
            .product(name: "SocketIO", package: interactived),
            .product(name: "InteractiveDaemon", package: interactived),
        ]),
        .executableTarget(name: "fleet-sim", dependencies: ["FleetSimulation", .product(name: "SocketIO", package: interactived)]),
        .testTarget(name: "FleetSimulationTests", dependencies: ["FleetSimulation"]),
    ],
    swiftLanguageModes: [.v6]
)
