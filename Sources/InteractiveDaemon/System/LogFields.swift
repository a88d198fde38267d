/// A log record's journal fields (`INTERACTIVE_OVERLAY_ID`, …), each name once, in the order
/// they were given: a stderr line shows them in that order.
///
/// A few pairs in an array: the daemon logs a line or two with three or four fields for every
/// overlay, where hashing each name into a dictionary cost more than the rest of the line.
public struct LogFields: Sendable, Equatable, ExpressibleByDictionaryLiteral, Sequence {
    public typealias Element = (name: String, value: String)

    private var fields: [Element] = []

    public init() {}

    /// A name given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields.reserveCapacity(elements.count)
        for (name, value) in elements { self[name] = value }
    }

    public var isEmpty: Bool { fields.isEmpty }

    /// The value of `name`; setting nil removes the field, setting a new name adds it at the end.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name == name }?.value }
        set {
            if let position = fields.firstIndex(where: { $0.name == name }) {
                if let newValue { fields[position].value = newValue } else { fields.remove(at: position) }
            } else if let newValue {
                fields.append((name, newValue))
            }
        }
    }

    /// These fields and `other`'s after them; a name both have takes `other`'s value.
    public func merging(_ other: LogFields) -> LogFields {
        var merged = self
        for (name, value) in other.fields { merged[name] = value }
        return merged
    }

    public func makeIterator() -> IndexingIterator<[Element]> { fields.makeIterator() }

    public static func == (lhs: LogFields, rhs: LogFields) -> Bool {
        lhs.fields.count == rhs.fields.count && lhs.fields.allSatisfy { rhs[$0.name] == $0.value }
    }
}
