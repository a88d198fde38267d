/// The members of a JSON object: each key once, in the order the members were added (a parsed
/// object's are in the order of its text).
///
/// An array rather than a hashed dictionary: the objects the daemon reads have a few to a few
/// dozen members, and comparing a key with each in turn costs less than hashing it (SipHash) to
/// build the object and again to read each member. An object of more than `indexedCount` members
/// also keeps an index by key, so reading or changing a member of a large object a peer sent
/// still costs the same as in a dictionary.
///
/// Equal objects have the same members in any order, as dictionaries do.
public struct JSONObject: Sendable {
    public typealias Element = (key: String, value: JSONValue)

    /// One member as stored: a struct, not the `Element` tuple, so that an array of them is
    /// destroyed by code made for it rather than by the runtime's generic walk of a tuple's parts.
    struct Member {
        var key: String
        var value: JSONValue
    }

    private var members: [Member]
    /// Each key's position in `members`; present only when there are more than `indexedCount`.
    private var positions: [String: Int]?

    /// The largest object that has no index.
    static let indexedCount = 16

    public init() {
        members = []
    }

    /// Members in the order given; a key given twice keeps its last value, at its first place.
    public init<Members: Sequence<Element>>(uniquing newMembers: Members) {
        members = []
        members.reserveCapacity(newMembers.underestimatedCount)
        for member in newMembers { self[member.key] = member.value }
    }

    /// The members of one object's text, in order: a repeated key keeps its last value, at its
    /// first place.
    init(parsed parsedMembers: ArraySlice<Member>) {
        members = []
        guard parsedMembers.count <= Self.indexedCount else {
            for member in parsedMembers { self[member.key] = member.value }
            return
        }
        var unique: [Member] = []
        unique.reserveCapacity(parsedMembers.count)
        for member in parsedMembers {
            if let position = unique.firstIndex(where: { $0.key == member.key }) {
                unique[position].value = member.value
            } else {
                unique.append(member)
            }
        }
        members = unique
    }

    /// The members of `dictionary`, in the order of their keys (a dictionary's own order changes
    /// from one process to the next).
    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.sorted { $0.key < $1.key }.map { Member(key: $0.key, value: $0.value) }
        if members.count > Self.indexedCount { rebuildPositions() }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    /// The keys, in order.
    public var keys: [String] { members.map(\.key) }
    /// The values, in the order of their keys.
    public var values: [JSONValue] { members.map(\.value) }

    /// The value of `key`, nil when absent. Setting nil removes the member; setting a new key
    /// adds it at the end.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let position = position(of: key) {
                if let newValue {
                    members[position].value = newValue
                } else {
                    members.remove(at: position)
                    positions = nil
                    if members.count > Self.indexedCount { rebuildPositions() }
                }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
                if positions != nil {
                    positions?[key] = members.count - 1
                } else if members.count > Self.indexedCount {
                    rebuildPositions()
                }
            }
        }
    }

    public subscript(key: String, default defaultValue: @autoclosure () -> JSONValue) -> JSONValue {
        get { self[key] ?? defaultValue() }
        set { self[key] = newValue }
    }

    /// Removes the member `key`; its value, nil when there was none.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let old = self[key]
        if old != nil { self[key] = nil }
        return old
    }

    /// The same keys with each value transformed.
    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var mapped = self
        for position in mapped.members.indices { mapped.members[position].value = try transform(members[position].value) }
        return mapped
    }

    /// The members for which `isIncluded` is true, in order.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        var kept = JSONObject()
        for member in members where try isIncluded((key: member.key, value: member.value)) { kept[member.key] = member.value }
        return kept
    }

    /// Adds `other`'s members; for a key both have, `combine` chooses the value.
    public mutating func merge(_ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows {
        for (key, value) in other {
            if let existing = self[key] {
                self[key] = try combine(existing, value)
            } else {
                self[key] = value
            }
        }
    }

    /// This object with `other`'s members added; for a key both have, `combine` chooses the value.
    public func merging(_ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var merged = self
        try merged.merge(other, uniquingKeysWith: combine)
        return merged
    }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    private mutating func rebuildPositions() {
        var positions = [String: Int](minimumCapacity: members.count)
        for (position, member) in members.enumerated() { positions[member.key] = position }
        self.positions = positions
    }
}

extension JSONObject: Sequence {
    /// The members in order, as `(key, value)` pairs.
    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Member]>

        public mutating func next() -> Element? {
            base.next().map { (key: $0.key, value: $0.value) }
        }
    }

    public func makeIterator() -> Iterator { Iterator(base: members.makeIterator()) }
    public var underestimatedCount: Int { members.count }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// A key written twice keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(uniquing: elements.lazy.map { (key: $0.0, value: $0.1) })
    }
}

extension JSONObject: Hashable {
    /// The same members, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    /// The same for the same members in any order.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            combined ^= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONObject: CustomStringConvertible {
    public var description: String {
        guard !members.isEmpty else { return "[:]" }
        return "[" + members.map { "\($0.key.debugDescription): \($0.value)" }.joined(separator: ", ") + "]"
    }
}
