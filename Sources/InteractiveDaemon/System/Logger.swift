import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// Where log records go.
public enum LogTarget: String, Sendable, CaseIterable {
    /// The journal when stderr is connected to it (`$JOURNAL_STREAM`), else stderr.
    case auto
    case journal
    case stderr
}

/// Syslog priorities, as journald's `PRIORITY` field uses them.
public enum LogPriority: Int, Sendable, Comparable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    public static func < (lhs: LogPriority, rhs: LogPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    var label: String {
        switch self {
        case .error: return "error"
        case .warning: return "warning"
        case .notice: return "notice"
        case .info: return "info"
        case .debug: return "debug"
        }
    }
}

/// `MESSAGE_ID`s of notable events, so that `journalctl MESSAGE_ID=…` finds them. Each has an
/// entry in `systemd/interactived.catalog`, which `journalctl -x` shows with the message.
public enum LogMessageID: String, Sendable, CaseIterable {
    case started = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a01"
    case stopping = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a02"
    case configReloaded = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a03"
    case configRejected = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a04"
    case storeCorrupt = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a05"
    case backendConnected = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a06"
    case backendDisconnected = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a07"
    case roomJoined = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a08"
    case roomLeft = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a09"
    case overlayShown = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a0a"
    case answerSubmitted = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a0b"
    case clientRejected = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a0c"
    case backendRestored = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a0d"
    case answerResult = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a0e"
    case configSet = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a0f"
    case restartNeeded = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a10"
    case permissionDenied = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a11"
    case sessionExpired = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a12"
}

/// Structured logging: journald fields under systemd, readable lines on stderr otherwise.
///
/// Field names are journald's (upper case, `INTERACTIVE_` prefix for ours). Never pass a token
/// or other secret in a message or a field.
public struct Logger: Sendable {
    public let usesJournal: Bool
    /// The longest message or field value written, in characters; the rest is cut with a note.
    static let textLimit = 2048
    public let minimumPriority: LogPriority
    private let identifier: String

    public init(target: LogTarget, identifier: String = "interactived", minimumPriority: LogPriority = .info,
                environment: [String: String] = LocalFiles.environment()) {
        switch target {
        case .journal: usesJournal = true
        case .stderr: usesJournal = false
        case .auto: usesJournal = Logger.stderrIsJournal(environment["JOURNAL_STREAM"])
        }
        self.identifier = identifier
        self.minimumPriority = minimumPriority
    }

    public func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:],
                      id: LogMessageID? = nil) {
        log(.error, message(), fields(), id: id)
    }

    public func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:],
                      id: LogMessageID? = nil) {
        log(.warning, message(), fields(), id: id)
    }

    public func notice(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:],
                      id: LogMessageID? = nil) {
        log(.notice, message(), fields(), id: id)
    }

    public func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:],
                      id: LogMessageID? = nil) {
        log(.info, message(), fields(), id: id)
    }

    public func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:],
                      id: LogMessageID? = nil) {
        log(.debug, message(), fields(), id: id)
    }

    /// Message and fields are only built when `priority` is logged.
    public func log(_ priority: LogPriority, _ message: @autoclosure () -> String,
                    _ fields: @autoclosure () -> LogFields = [:], id: LogMessageID? = nil) {
        guard priority <= minimumPriority else { return }
        // Messages and fields may carry a peer's text: one record stays one line, of bounded size.
        let message = PeerText.clipped(message(), limit: Logger.textLimit)
        // In the order given, each value clipped as it is written.
        let fields = fields()
        if usesJournal {
            sendToJournal(priority, message, fields, id: id)
        } else {
            writeLine(priority, message, fields)
        }
    }

    private func sendToJournal(_ priority: LogPriority, _ message: String, _ fields: LogFields, id: LogMessageID?) {
        var entries = ["MESSAGE=\(message)", "PRIORITY=\(priority.rawValue)", "SYSLOG_IDENTIFIER=\(identifier)"]
        if let id { entries.append("MESSAGE_ID=\(id.rawValue)") }
        for (key, value) in fields { entries.append("\(key)=\(PeerText.clipped(value, limit: Logger.textLimit))") }
        let buffers = entries.map { Array($0.utf8) }
        let result = withIOVectors(buffers) { vectors in sd_journal_sendv(vectors.baseAddress, Int32(vectors.count)) }
        if result < 0 { writeLine(priority, message, fields) }
    }

    private func withIOVectors<R>(_ buffers: [[UInt8]], _ body: (UnsafeBufferPointer<iovec>) -> R) -> R {
        let pointers = buffers.map { buffer -> UnsafeMutableRawBufferPointer in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(buffer.count, 1), alignment: 1)
            copy.copyBytes(from: buffer)
            return copy
        }
        defer { pointers.forEach { $0.deallocate() } }
        let vectors = zip(pointers, buffers).map { iovec(iov_base: $0.0.baseAddress, iov_len: $0.1.count) }
        return vectors.withUnsafeBufferPointer(body)
    }

    /// `TIME PRIORITY message name=value name="value with spaces"`, built as bytes: the daemon
    /// writes a line or two per overlay, on the event loop.
    private func writeLine(_ priority: LogPriority, _ message: String, _ fields: LogFields) {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line.append(contentsOf: Timestamp.rfc3339(Timestamp.nowMs()).utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: priority.label.utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: message.utf8)
        for (key, field) in fields {
            var value = PeerText.clipped(field, limit: Logger.textLimit)
            line.append(UInt8(ascii: " "))
            Self.appendFieldName(key, to: &line)
            line.append(UInt8(ascii: "="))
            value.withUTF8 { bytes in
                let quoted = bytes.contains(UInt8(ascii: " "))
                if quoted { line.append(UInt8(ascii: "\"")) }
                line.append(contentsOf: bytes)
                if quoted { line.append(UInt8(ascii: "\"")) }
            }
        }
        line.append(UInt8(ascii: "\n"))
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// A journal field's name as a stderr line shows it: lower case, without our `INTERACTIVE_`
    /// prefix (`INTERACTIVE_OVERLAY_ID` → `overlay_id`). Journal field names are ASCII.
    static func appendFieldName(_ key: String, to line: inout [UInt8]) {
        var key = key
        key.withUTF8 { name in
            let skip = name.starts(with: ourPrefix) ? ourPrefix.count : 0
            let start = line.count
            line.append(contentsOf: UnsafeBufferPointer(rebasing: name[skip...]))
            line.withUnsafeMutableBufferPointer { written in
                for index in start..<written.count where written[index] >= UInt8(ascii: "A") && written[index] <= UInt8(ascii: "Z") {
                    written[index] += 0x20
                }
            }
        }
    }

    private static let ourPrefix = Array("INTERACTIVE_".utf8)

    /// True when `$JOURNAL_STREAM` (`device:inode`) names the file stderr is connected to.
    static func stderrIsJournal(_ journalStream: String?) -> Bool {
        guard let journalStream else { return false }
        let parts = journalStream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
