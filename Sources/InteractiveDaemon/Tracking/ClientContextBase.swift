import JSONValue

/// The part of `emit-ack`'s `clientContext` common to every stage: who is measuring and on what.
struct ClientContextBase: Sendable {
    /// The daemon's version.
    var sdkVersion: String
    let platform = "linux"
    /// The operating system's name and version (os-release).
    var os: String
    var deviceClass: String
    var viewportWidth: Int
    var viewportHeight: Int

    init(sdkVersion: String = interactivedVersion, os: String = OSRelease.systemName(),
         deviceClass: String = "settopbox", viewportWidth: Int = 1920, viewportHeight: Int = 1080) {
        self.sdkVersion = sdkVersion
        self.os = os
        self.deviceClass = deviceClass
        self.viewportWidth = viewportWidth
        self.viewportHeight = viewportHeight
    }

    /// The common members of `clientContext`, written first; the stage's own follow.
    func writeMembers(to writer: inout JSONWriter) {
        writer.member("profile", "overlay.legacyIframe")
        writer.member("transportMode", "legacyIframe")
        writer.member("sdkVersion", sdkVersion)
        writer.member("platform", platform)
        writer.member("os", os)
        writer.member("deviceClass", deviceClass)
        writer.member("viewportWidth", viewportWidth)
        writer.member("viewportHeight", viewportHeight)
    }
}
