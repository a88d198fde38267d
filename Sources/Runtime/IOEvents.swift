/// What epoll reported for a watched file descriptor.
public struct IOEvents: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data (or the peer's end of stream) can be read.
    public static let readable = IOEvents(rawValue: 1 << 0)
    /// Bytes can be written.
    public static let writable = IOEvents(rawValue: 1 << 1)
    /// The peer hung up (EPOLLHUP or EPOLLRDHUP).
    public static let hangup = IOEvents(rawValue: 1 << 2)
    /// An error is pending on the descriptor (EPOLLERR); read it with SO_ERROR or the next call.
    public static let error = IOEvents(rawValue: 1 << 3)
}
