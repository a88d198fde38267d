import Foundation

/// A value shared between a test and the threads that feed it (pipe handlers).
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

/// Collects a child's output from a pipe handler thread.
typealias LogCollector = Locked<Data>

extension Locked where Value == Data {
    convenience init() { self.init(Data()) }
    func append(_ chunk: Data) { withLock { $0.append(chunk) } }
    var text: String { String(decoding: current, as: UTF8.self) }
}
