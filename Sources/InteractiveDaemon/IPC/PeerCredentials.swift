import CInteractiveShims
#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a local connection (SO_PEERCRED, SO_PEERGROUPS).
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    public var groups: [UInt32]

    /// Reads the credentials of a connected Unix socket; nil if the kernel will not say.
    static func read(fd: Int32) -> PeerCredentials? {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard interactive_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        var groups = [gid_t](repeating: 0, count: 256)
        var count = interactive_peer_groups(fd, &groups, Int32(groups.count))
        if count < 0 {
            count = userGroups(uid: uid, gid: gid, into: &groups)
        }
        return PeerCredentials(pid: pid, uid: uid, gid: gid, groups: Array(groups.prefix(Int(max(count, 0)))))
    }

    /// Fallback when SO_PEERGROUPS is missing: the groups of the peer's user from NSS.
    private static func userGroups(uid: uid_t, gid: gid_t, into groups: inout [gid_t]) -> Int32 {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else {
            return 0
        }
        return interactive_user_groups(name, gid, &groups, Int32(groups.count))
    }
}

/// What a local client may do (IPC.md, Roles).
public enum ClientRole: String, Sendable {
    /// Root, the daemon's own user and members of `privilegedGroup`: every method.
    case control
    /// Any other local user: read-only methods.
    case observer
}

/// Decides roles from peer credentials.
public struct RolePolicy: Sendable {
    let daemonUID: UInt32
    let privilegedGID: UInt32?

    /// `privilegedGroup` is looked up once; nil when it does not exist (the caller warns).
    init(daemonUID: UInt32, privilegedGroup: String) {
        self.daemonUID = daemonUID
        self.privilegedGID = RolePolicy.lookupGroup(privilegedGroup)
    }

    init(daemonUID: UInt32, privilegedGID: UInt32?) {
        self.daemonUID = daemonUID
        self.privilegedGID = privilegedGID
    }

    func role(for peer: PeerCredentials?) -> ClientRole {
        guard let peer else { return .observer }
        if peer.uid == 0 || peer.uid == daemonUID { return .control }
        if let privilegedGID, peer.gid == privilegedGID || peer.groups.contains(privilegedGID) { return .control }
        return .observer
    }

    static func lookupGroup(_ name: String) -> UInt32? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}
