import IPCProtocol

/// The other participants of a voice room, in the order they came, kept from what the server
/// says (`joined`, `event`, `leaving`, `kicked`, `talking`) and replaced by a fresh list after a
/// reconnection, so that nobody who left meanwhile stays. Pure; each change is returned for the
/// core to publish.
struct VoiceRoster: Sendable, Equatable {
    /// A change players are told of.
    enum Change: Sendable, Equatable {
        case joined(VoiceParticipant)
        /// Its `display` or `muted` changed.
        case updated(VoiceParticipant)
        case left(VoiceParticipant, VoicePeerLeftReason)
        /// It started or stopped talking.
        case talking(VoiceParticipant)
    }

    private(set) var peers: [VoiceParticipant] = []

    /// How many participants are kept (the list of a larger room is cut).
    static let limit = JanusLimits.participants

    func contains(_ id: String) -> Bool { peers.contains { $0.peerId == id } }

    /// A participant the server listed: a new one joins, a known one may change.
    mutating func upsert(_ entry: JanusParticipant) -> [Change] {
        guard let index = peers.firstIndex(where: { $0.peerId == entry.id }) else {
            guard peers.count < Self.limit else { return [] }
            let peer = VoiceParticipant(peerId: entry.id, display: entry.display, muted: entry.muted, talking: entry.talking ?? false)
            peers.append(peer)
            return peer.talking ? [.joined(peer), .talking(peer)] : [.joined(peer)]
        }
        var changes: [Change] = []
        var peer = peers[index]
        if peer.display != entry.display || peer.muted != entry.muted {
            peer.display = entry.display
            peer.muted = entry.muted
            changes.append(.updated(peer))
        }
        if let talking = entry.talking, talking != peer.talking {
            peer.talking = talking
            changes.append(.talking(peer))
        }
        peers[index] = peer
        return changes
    }

    /// A participant left (or was kicked); nothing when it was not known.
    mutating func remove(_ id: String, _ reason: VoicePeerLeftReason) -> [Change] {
        guard let index = peers.firstIndex(where: { $0.peerId == id }) else { return [] }
        return [.left(peers.remove(at: index), reason)]
    }

    /// A participant started or stopped talking.
    mutating func setTalking(_ id: String, _ talking: Bool) -> [Change] {
        guard let index = peers.firstIndex(where: { $0.peerId == id }), peers[index].talking != talking else { return [] }
        peers[index].talking = talking
        return [.talking(peers[index])]
    }

    /// The room's list read again: whoever is gone from it left (`disconnected`: it went while
    /// this box was away), the new ones joined, the others may have changed.
    mutating func replace(with list: [JanusParticipant]) -> [Change] {
        let listed = Set(list.map(\.id))
        var changes: [Change] = []
        for peer in peers where !listed.contains(peer.peerId) {
            changes += remove(peer.peerId, .disconnected)
        }
        for entry in list {
            changes += upsert(entry)
        }
        return changes
    }

    mutating func removeAll() { peers.removeAll() }
}
