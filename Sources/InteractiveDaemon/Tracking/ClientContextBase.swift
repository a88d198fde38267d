import JSONValue

/// The part of `emit-ack`'s `clientContext` common to every stage: who is measuring and on what.
/// Its members' text is written once, when a field changes, not with every ack.
struct ClientContextBase: Sendable {
    /// The daemon's version.
    var sdkVersion: String { didSet { encodeMembers() } }
    let platform = "linux"
    /// The operating system's name and version (os-release).
    var os: String { didSet { encodeMembers() } }
    var deviceClass: String { didSet { encodeMembers() } }
    var viewportWidth: Int { didSet { encodeMembers() } }
    var viewportHeight: Int { didSet { encodeMembers() } }
    /// The members' text, comma-separated.
    private(set) var encodedMembers: [UInt8] = []

    init(sdkVersion: String = interactivedVersion, os: String = OSRelease.systemName(),
         deviceClass: String = "settopbox", viewportWidth: Int = 1920, viewportHeight: Int = 1080) {
        self.sdkVersion = sdkVersion
        self.os = os
        self.deviceClass = deviceClass
        self.viewportWidth = viewportWidth
        self.viewportHeight = viewportHeight
        encodeMembers()
    }

    /// The common members of `clientContext`, written first; the stage's own follow.
    func writeMembers(to writer: inout JSONWriter) {
        writer.members(encodedMembers)
    }

    private mutating func encodeMembers() {
        var writer = JSONWriter(capacity: 256)
        writer.member("profile", "overlay.legacyIframe")
        writer.member("transportMode", "legacyIframe")
        writer.member("sdkVersion", sdkVersion)
        writer.member("platform", platform)
        writer.member("os", os)
        writer.member("deviceClass", deviceClass)
        writer.member("viewportWidth", viewportWidth)
        writer.member("viewportHeight", viewportHeight)
        encodedMembers = writer.bytes
    }
}
