/// State confined to one event loop: a value (typically a non-`Sendable` class holding a
/// connection's or a protocol's mutable state) that is read and changed only on the loop's thread,
/// in a box that any thread may hold.
///
/// The `Sendable` owner of the state keeps the box, and the closures it hands the loop
/// (`execute`, `schedule`, `register`) capture the box, weakly when they must not keep the state
/// alive. Every access goes through `value`, which stops the process anywhere but on the loop's
/// thread: the confinement is checked at each access instead of promised by an
/// `@unchecked Sendable` on the owner.
///
/// The value is created on the loop, and must not be handed off it (keep `value`'s result in
/// locals). It is released with the box, on whichever thread lets the box go last, so its
/// `deinit` must not assume the loop: it hands the loop what still needs doing (`execute`).
///
/// `@unchecked Sendable`: `stored` is touched only on `loop`'s thread (each access checks it).
public final class LoopConfined<Value>: @unchecked Sendable {
    /// The loop on whose thread alone the value may be touched.
    public let loop: EventLoop
    @usableFromInline var stored: Value

    /// Boxes `value`, made on `loop`. Loop thread only.
    public init(_ value: Value, loop: EventLoop) {
        loop.preconditionInLoop()
        self.loop = loop
        stored = value
    }

    /// The value, to read or change. Loop thread only: elsewhere it stops the process, in every
    /// build. Inlinable, so that the access is specialized where it is made: what it adds is
    /// `pthread_self` compared with the loop's thread.
    @inlinable
    public var value: Value {
        get {
            loop.preconditionInLoop()
            return stored
        }
        set {
            loop.preconditionInLoop()
            stored = newValue
        }
    }
}
