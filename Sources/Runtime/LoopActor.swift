/// The isolation of everything that lives on the event loop: the loop's I/O handlers and timers,
/// the connections on it, and every part of the daemon that runs there (the room, the screen,
/// predict, playback, the event bus, the local API). Its executor is `EventLoop.shared`, so code
/// isolated to it runs on the loop's thread, and calls between such parts are plain synchronous
/// calls: "this runs on the loop" is a type the compiler checks, not a preference each caller
/// must remember.
@globalActor public actor LoopActor {
    public static let shared = LoopActor()

    public nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }

    private init() {}

    /// Runs `operation` isolated to the loop actor, synchronously, from code that is on the
    /// loop's thread without the compiler knowing it (the loop's own dispatch of I/O readiness
    /// and timers). Stops the process anywhere else, in every build.
    public static func assumeIsolated<T>(_ operation: @LoopActor () throws -> T) rethrows -> T {
        EventLoop.shared.preconditionInLoop()
        typealias Unisolated = () throws -> T
        return try withoutActuallyEscaping(operation) { isolated in
            // Sound: on the loop's thread, where the loop actor's jobs run one at a time, and a
            // synchronous closure's isolation is not part of its calling convention.
            try unsafeBitCast(isolated, to: Unisolated.self)()
        }
    }
}
