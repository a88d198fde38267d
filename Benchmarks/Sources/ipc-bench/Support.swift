import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Monotonic nanoseconds (CLOCK_MONOTONIC).
func nowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Wall-clock milliseconds since the epoch (CLOCK_REALTIME), as Python's `time.time() * 1000`.
func wallMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1_000_000
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `--name value` options; flags without a value are not used.
struct Options {
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>) throws(BenchError) {
        var remaining = arguments
        while let name = remaining.popFirst() {
            guard name.hasPrefix("--") else { throw BenchError("unexpected argument \(name)") }
            guard let value = remaining.popFirst() else { throw BenchError("\(name) needs a value") }
            values[String(name.dropFirst(2))] = value
        }
    }

    func string(_ name: String) throws(BenchError) -> String {
        guard let value = values[name] else { throw BenchError("--\(name) is required") }
        return value
    }

    func string(_ name: String, default fallback: String) -> String { values[name] ?? fallback }

    func optionalString(_ name: String) -> String? { values[name] }

    func int(_ name: String, default fallback: Int) throws(BenchError) -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text) else { throw BenchError("--\(name) must be an integer, not \(text)") }
        return value
    }

    func double(_ name: String, default fallback: Double) throws(BenchError) -> Double {
        guard let text = values[name] else { return fallback }
        guard let value = Double(text) else { throw BenchError("--\(name) must be a number, not \(text)") }
        return value
    }

    func optionalDouble(_ name: String) throws(BenchError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = Double(text) else { throw BenchError("--\(name) must be a number, not \(text)") }
        return value
    }

    func intList(_ name: String, default fallback: [Int]) throws(BenchError) -> [Int] {
        guard let text = values[name] else { return fallback }
        var list: [Int] = []
        for part in text.split(separator: ",") {
            guard let value = Int(part) else { throw BenchError("--\(name) must be integers separated by commas") }
            list.append(value)
        }
        return list
    }
}

/// Percentile (nearest rank) of sorted values.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(sorted.count - 1, max(0, rank))]
}

func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

/// Prints one line at once (stdout may be a pipe read line by line by a script).
func printLine(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(STDOUT_FILENO, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            if written <= 0 { return offset }
            offset += written
        }
        return offset
    }
}

func verdict(_ pass: Bool) -> String { pass ? "PASS" : "MISS" }

// MARK: Unix sockets

func unixAddress(_ path: String) throws(BenchError) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard path.utf8.count < capacity else { throw BenchError("socket path \(path) is too long") }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (offset, byte) in path.utf8.enumerated() { raw[offset] = byte }
    }
    return address
}

/// A Unix socket of `type` on `path`: `attach` connects or binds it (returning 0 on success);
/// on failure the socket is closed and the error names `action`.
private func unixSocket(_ path: String, type: Int32, action: String,
                        _ attach: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) throws(BenchError) -> Int32 {
    var address = try unixAddress(path)
    let fd = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket(): \(String(cString: strerror(errno)))") }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { attach(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard result == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw BenchError("\(action) \(path): \(reason)")
    }
    return fd
}

/// A connected Unix stream socket (blocking).
func connectUnix(_ path: String) throws(BenchError) -> Int32 {
    try unixSocket(path, type: Int32(SOCK_STREAM.rawValue), action: "cannot connect to") { connect($0, $1, $2) }
}

/// A listening Unix stream socket (blocking), replacing a stale file.
func listenUnix(_ path: String) throws(BenchError) -> Int32 {
    unlink(path)
    return try unixSocket(path, type: Int32(SOCK_STREAM.rawValue), action: "cannot listen on") { fd, address, length in
        bind(fd, address, length) == 0 ? listen(fd, 256) : -1
    }
}

/// A bound datagram socket (a NOTIFY_SOCKET of our own).
func bindDatagram(_ path: String) throws(BenchError) -> Int32 {
    unlink(path)
    return try unixSocket(path, type: Int32(SOCK_DGRAM.rawValue), action: "cannot bind") { bind($0, $1, $2) }
}

/// Writes all of `bytes` (blocking socket); false when the peer is gone.
func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = send(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
        if written > 0 {
            offset += written
        } else if written < 0 && errno == EINTR {
            continue
        } else {
            return false
        }
    }
    return true
}

func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { sendAll(fd, $0) }
}

/// Waits until `fd` is readable; false on timeout.
func waitReadable(_ fd: Int32, timeoutMs: Int) -> Bool {
    var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    while true {
        let result = poll(&pfd, 1, Int32(max(0, timeoutMs)))
        if result < 0 && errno == EINTR { continue }
        return result > 0
    }
}

/// Counts `\n` bytes.
func countNewlines(_ bytes: UnsafeRawBufferPointer) -> Int {
    guard var cursor = bytes.baseAddress else { return 0 }
    let end = cursor + bytes.count
    var count = 0
    while cursor < end, let hit = memchr(cursor, 0x0A, end - cursor) {
        count += 1
        cursor = UnsafeRawPointer(hit) + 1
    }
    return count
}

// MARK: /proc

/// Fields of /proc/PID/status in KiB (VmRSS, VmHWM, RssAnon, RssFile, …).
func procStatusKiB(pid: Int32) -> [String: Int] {
    let text = readProcFile("/proc/\(pid)/status")
    var fields: [String: Int] = [:]
    for line in text.split(separator: "\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        guard parts.count == 2 else { continue }
        let value = parts[1].split(whereSeparator: { $0 == " " || $0 == "\t" })
        if value.count == 2, value[1] == "kB", let number = Int(value[0]) { fields[String(parts[0])] = number }
    }
    return fields
}

/// A /proc file's text (their size reads as 0, so read until end of file); empty when unreadable.
func readProcFile(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<256 {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        bytes.append(contentsOf: buffer[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}

func mib(_ kib: Int) -> String { format(Double(kib) / 1024, 1) + " MiB" }

/// A thread started now, running `body`.
func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.name = name
    thread.stackSize = 1 << 20
    thread.start()
}

/// Blocks the calling (non-cooperative) thread until `count` signals arrived or the timeout passed.
final class Countdown: Sendable {
    private let remaining: Mutex<Int>
    private let semaphore = DispatchSemaphore(value: 0)

    init(_ count: Int) { remaining = Mutex(count) }

    func signal() {
        let done = remaining.withLock { value -> Bool in
            value -= 1
            return value == 0
        }
        if done { semaphore.signal() }
    }

    /// True when every signal arrived in time.
    func wait(timeoutSeconds: Double) -> Bool {
        semaphore.wait(timeout: .now() + timeoutSeconds) == .success
    }
}
