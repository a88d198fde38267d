import Glibc

/// Stops the fuzzer with `message` when an invariant of the code under test does not hold
/// (libFuzzer records the input that led here as a crash).
public func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    var line = "fuzz check failed: \(message())\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    abort()
}

/// The input split into chunks whose sizes come from its first byte, so that one input also
/// exercises how a streaming decoder copes with a message that arrives in pieces.
public func fuzzChunks(_ data: UnsafePointer<UInt8>, _ size: Int) -> [[UInt8]] {
    guard size > 0 else { return [] }
    let chunkSize = Int(data[0] % 64) + 1
    let body = UnsafeBufferPointer(start: data + 1, count: size - 1)
    return stride(from: 0, to: body.count, by: chunkSize).map { start in
        Array(body[start..<min(start + chunkSize, body.count)])
    }
}
