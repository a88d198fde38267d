import JSONValue

/// Lets the application answer a server event that asked for an acknowledgement. Valid only on
/// the connection the event arrived on.
public struct SocketIOAckToken: Sendable, Hashable {
    /// The packet id the server chose.
    public let id: Int
    let epoch: Int
}

/// Where an emit was written: the connection (its epoch) and the count of Engine.IO packets the
/// client had sent on it, that one included. `SocketIOClientUpdate.carried` tells when everything
/// up to a mark is proven to have reached the server.
public struct SocketIOWriteMark: Sendable, Hashable {
    public let connection: Int
    public let sequence: Int

    public init(connection: Int, sequence: Int) {
        self.connection = connection
        self.sequence = sequence
    }

    /// Whether `other` is on the same connection and no later.
    public func covers(_ other: SocketIOWriteMark) -> Bool {
        connection == other.connection && other.sequence <= sequence
    }
}

/// Arguments with binary attachments.
///
/// JSON cannot hold bytes, so binary values are represented the way Socket.IO puts them on the
/// wire: the JSON arguments hold placeholders `{"_placeholder":true,"num":n}` (see
/// `SocketIOBinary.placeholder(_:)`) and `attachments[n]` holds the bytes.
public struct SocketIOPayload: Sendable, Equatable {
    public var args: [JSONValue]
    public var attachments: [[UInt8]]

    public init(args: [JSONValue], attachments: [[UInt8]] = []) {
        self.args = args
        self.attachments = attachments
    }

    /// The bytes a placeholder stands for, nil when `value` is not a placeholder of this payload.
    public func binary(_ value: JSONValue) -> [UInt8]? {
        guard let index = SocketIOBinary.placeholderIndex(value), attachments.indices.contains(index) else { return nil }
        return attachments[index]
    }
}

/// An event sent by the server.
public struct SocketIOEvent: Sendable, Equatable {
    /// The event name (first element of the packet's array).
    public var name: String
    /// The arguments after the name, with binary placeholders in place of bytes.
    public var args: [JSONValue]
    /// The binary attachments the placeholders refer to.
    public var attachments: [[UInt8]]
    /// Present when the server waits for an acknowledgement: pass it to `SocketIOClient.ack`.
    public var ackToken: SocketIOAckToken?
    /// The size of the packet it came in, as text: at least that of each argument's JSON text
    /// (nil when not known), so a size check of an argument need not serialize it again.
    public var byteCount: Int?
    /// The packet's data as the server wrote it (nil for a binary event, or one not decoded from
    /// the wire): how `args` were written, not compared by `==`.
    var dataText: SocketIODataText?

    public init(name: String, args: [JSONValue], attachments: [[UInt8]] = [], ackToken: SocketIOAckToken? = nil,
                byteCount: Int? = nil) {
        self.name = name
        self.args = args
        self.attachments = attachments
        self.ackToken = ackToken
        self.byteCount = byteCount
    }

    /// The JSON text of `args[index]`, or of its member `member` when it is an object, as the
    /// server wrote it: for a reader that relays it rather than writing the value again. nil when
    /// absent or not known (a binary event, or one not decoded from the wire).
    public func argumentText(_ index: Int, member: String? = nil) -> ArraySlice<UInt8>? {
        // Element 0 of the packet's array is the event's name.
        dataText?.element(index + 1, member: member)
    }

    public static func == (lhs: SocketIOEvent, rhs: SocketIOEvent) -> Bool {
        lhs.name == rhs.name && lhs.args == rhs.args && lhs.attachments == rhs.attachments && lhs.ackToken == rhs.ackToken
            && lhs.byteCount == rhs.byteCount
    }

    /// The bytes a placeholder argument stands for.
    public func binary(_ value: JSONValue) -> [UInt8]? {
        SocketIOPayload(args: args, attachments: attachments).binary(value)
    }
}

/// Placeholders for binary attachments.
public enum SocketIOBinary {
    /// The placeholder for `attachments[index]`, to put anywhere in the JSON arguments.
    public static func placeholder(_ index: Int) -> JSONValue {
        ["_placeholder": true, "num": .number(Double(index))]
    }

    /// The attachment index of a placeholder, nil for any other value.
    public static func placeholderIndex(_ value: JSONValue) -> Int? {
        guard value["_placeholder"]?.boolValue == true, let index = value["num"]?.intValue, index >= 0 else { return nil }
        return index
    }
}
